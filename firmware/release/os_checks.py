"""Is the table's Raspberry Pi OS safe against the nightly power cut? Read-only root, data partition, journald."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable
from unicodedata import east_asian_width

from firmware.i18n import N_, Phrase, worded_text

log = logging.getLogger(__name__)

FSTAB_LINE = "/dev/mmcblk0p3 /var/lib/mjtable ext4 defaults,noatime,commit=1,data=ordered 0 2"
OVERLAY_FIX = N_("sudo raspi-config nonint do_overlayfs 0 (menu: Performance Options → Overlay File System), "
               "then make it overlayroot=tmpfs:recurse=0 in /boot/firmware/cmdline.txt, then reboot (docs/table-os.md)")
RECURSE_FIX = N_("in /boot/firmware/cmdline.txt write overlayroot=tmpfs:recurse=0 instead of overlayroot=tmpfs "
               "(the overlay then covers / alone), then reboot")
JOURNAL_FIX = N_("create /etc/systemd/journald.conf.d/mjtable.conf with '[Journal]', 'Storage=volatile', "
               "'RuntimeMaxUse=32M' (on the real root, not the overlay), then sudo systemctl restart systemd-journald")
NO_MOUNTS = N_("cannot read /proc/mounts")
ON_THE_TABLE = N_("run the check on the table itself")
GOOD_FS = {"ext4", "ext3", "f2fs", "btrfs", "xfs"}               # journaling or log-structured
BAD_FS = {"vfat", "msdos", "fat", "exfat", "ntfs", "ntfs3", "fuseblk", "ext2"}
RISKY_OPTIONS = ("nobarrier", "barrier=0", "data=writeback", "fsync_mode=nobarrier")
MAX_COMMIT_S = 5                                                 # ext4's default
STORAGE_VALUES = {"volatile", "persistent", "auto", "none"}
JOURNALD_DROPIN_DIRS = ("usr/lib", "usr/local/lib", "run", "etc")   # lowest precedence first
_OCTAL = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class OsCheck:
    """One check: ``ok`` is True, False (missing) or None (cannot tell); ``fix`` says what to do.  Each text is
    the English (a ``worded_text`` or a constant marked ``N_``), said in the command line's language where shown."""
    name: str
    ok: bool | None
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class Mount:
    device: str
    point: str
    fstype: str
    options: tuple[str, ...]

    def option(self, key: str) -> str | None:
        return next((o.partition("=")[2] for o in self.options if o.startswith(key + "=")), None)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _read_first(root: Path, *names: str) -> tuple[str | None, str]:
    for name in names:
        text = _read(root / name)
        if text is not None:
            return text, "/" + name
    return None, ""


def _unescape(field: str) -> str:
    """Undo the octal escapes of /proc/mounts and fstab (``\\040`` is a space)."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mount_table(text: str) -> list[Mount]:
    """The entries of /proc/mounts or /etc/fstab, in order (a later entry on the same point is on top)."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 3 or fields[0].startswith("#"):
            continue
        options = fields[3] if len(fields) > 3 else "defaults"
        mounts.append(Mount(_unescape(fields[0]), _unescape(fields[1]), fields[2], tuple(options.split(","))))
    return mounts


def _contains(point: str, path: PurePosixPath) -> bool:
    parts = PurePosixPath(point).parts
    return path.parts[:len(parts)] == parts


def mount_for(mounts: list[Mount], path: Path | PurePosixPath | str) -> Mount | None:
    """The mount that holds ``path``: the longest mount point above it, the last one mounted on a tie."""
    target = PurePosixPath("/") / PurePosixPath(str(path))
    best: Mount | None = None
    for mount in mounts:
        if _contains(mount.point, target) and (best is None or len(PurePosixPath(mount.point).parts)
                                               >= len(PurePosixPath(best.point).parts)):
            best = mount
    return best


@dataclass(frozen=True)
class _Overlay:
    enabled: bool | None          # what the next boot does to /; None: no configuration readable
    recurses: bool                # overlayroot also puts every fstab partition under the RAM overlay
    where: str


def _overlay_config(root: Path) -> _Overlay:
    cmdline, cmdline_path = _read_first(root, "boot/firmware/cmdline.txt", "boot/cmdline.txt")
    tokens = cmdline.split() if cmdline else []
    if "boot=overlay" in tokens:                                  # bullseye's raspi-config
        return _Overlay(True, False, f"boot=overlay in {cmdline_path}")
    value, where = None, ""
    for name in ("etc/overlayroot.conf", "etc/overlayroot.local.conf"):   # the kernel command line wins
        for line in (_read(root / name) or "").splitlines():
            match = re.match(r"\s*overlayroot=(['\"]?)(.*)\1\s*$", line)
            if match:
                value, where = match.group(2), "/" + name
    for token in tokens:
        if token.startswith("overlayroot="):                      # bookworm's raspi-config: overlayroot=tmpfs
            value, where = token.partition("=")[2], cmdline_path
    if value is None:
        return _Overlay(None if cmdline is None else False, False, cmdline_path)
    mode, _, opts = value.partition(":")
    if mode not in ("tmpfs", "device", "crypt") and not value.startswith("/dev/"):
        return _Overlay(False, False, f"overlayroot={value} in {where}")
    return _Overlay(True, "recurse=0" not in opts.split(","), f"overlayroot={value} in {where}")


def _check_root(mounts: list[Mount] | None, fstab: list[Mount] | None, overlay: _Overlay) -> OsCheck:
    name = N_("read-only root")
    now = mount_for(mounts, "/") if mounts is not None else None
    if now is None:
        planned = mount_for(fstab, "/") if fstab is not None else None
        if overlay.enabled or (planned is not None and "ro" in planned.options):
            return OsCheck(name, True, worded_text("configured (%(where)s); the mount table is unreadable",
                                                   where=overlay.where if overlay.enabled else "/etc/fstab"))
        return OsCheck(name, None, NO_MOUNTS, ON_THE_TABLE)
    if now.fstype == "overlay":
        if now.option("lowerdir") == "/media/root-ro" and overlay.enabled is False:    # overlayroot's
            return OsCheck(name, False, N_("/ is an overlay now, but the overlay is switched off for the next "
                                           "boot, which will write to the card"), OVERLAY_FIX)
        return OsCheck(name, True, N_("/ is an overlay: writes go to RAM, the card's root is never written"))
    if "ro" in now.options:
        return OsCheck(name, True, worded_text("/ (%(fs)s) is mounted read-only", fs=now.fstype))
    if overlay.enabled:
        return OsCheck(name, True, worded_text("%(where)s: / becomes an overlay at the next boot (writable until then)",
                                               where=overlay.where))
    return OsCheck(name, False, worded_text("/ is %(fs)s mounted read-write: a power cut while the system writes "
                                            "can corrupt it", fs=now.fstype), OVERLAY_FIX)


def _check_data(root: Path, mounts: list[Mount] | None, fstab: list[Mount] | None, overlay: _Overlay,
                data_dir: PurePosixPath) -> OsCheck:
    name = worded_text("data partition (%(folder)s)", folder=data_dir)
    own_partition = worded_text("put %(folder)s on its own ext4 partition; /etc/fstab line: %(line)s "
                                "(docs/table-os.md)", folder=data_dir, line=FSTAB_LINE)
    now = mount_for(mounts, data_dir) if mounts is not None else None
    if now is None:
        return OsCheck(name, None, NO_MOUNTS, ON_THE_TABLE)
    planned = mount_for([m for m in fstab or [] if m.point != "/"], data_dir)
    if now.point == "/":
        if planned is not None:
            return OsCheck(name, False, worded_text("%(point)s is in /etc/fstab but not mounted", point=planned.point),
                           worded_text("sudo mount %(point)s (or reboot), then check again", point=planned.point))
        if "ro" in now.options and now.fstype != "overlay":
            return OsCheck(name, False, N_("the database is on the read-only root: it cannot be written"),
                           own_partition)
        if now.fstype == "overlay":
            return OsCheck(name, False, N_("the database is on the root overlay: it is in RAM and lost at every "
                                           "power-off"), own_partition)
        return OsCheck(name, False, N_("the database is on the root file system: once / is read-only (overlay) it "
                                       "would be in RAM and lost at every power-off"), own_partition)
    if now.fstype in ("tmpfs", "ramfs"):
        return OsCheck(name, False, worded_text("%(point)s is %(fs)s (RAM): the database is lost at every power-off",
                                                point=now.point, fs=now.fstype), own_partition)
    if now.fstype == "overlay":
        if now.option("lowerdir") == "/media/root-ro" + now.point:
            return OsCheck(name, False, worded_text("overlayroot put %(point)s under its RAM overlay too (it recurses "
                                                    "into /etc/fstab): every write is lost at power-off",
                                                    point=now.point), RECURSE_FIX)
        return OsCheck(name, False, worded_text("%(point)s is an overlay: its writes may never reach the card",
                                                point=now.point), own_partition)
    if "ro" in now.options:
        return OsCheck(name, False, worded_text("%(point)s is mounted read-only", point=now.point),
                       worded_text("remove 'ro' from its /etc/fstab line (%(line)s), then reboot", line=FSTAB_LINE))
    if now.fstype in BAD_FS:
        return OsCheck(name, False, worded_text("%(point)s is %(fs)s, which has no journal: a power cut mid-write "
                                                "can corrupt the file system", point=now.point, fs=now.fstype),
                       worded_text("reformat it as ext4 (sudo mkfs.ext4 -L mjtable-data DEVICE) and mount it with: "
                                   "%(line)s", line=FSTAB_LINE))
    if now.fstype not in GOOD_FS:
        return OsCheck(name, None, worded_text("%(point)s is %(fs)s, a file system this check does not know",
                                               point=now.point, fs=now.fstype),
                       worded_text("ext4 is the known-good choice: %(line)s", line=FSTAB_LINE))
    risky = [o for o in now.options if o in RISKY_OPTIONS]
    if risky:
        return OsCheck(name, False, worded_text("%(point)s is mounted with %(options)s: a power cut can lose or "
                                                "corrupt data already committed", point=now.point,
                                                options=",".join(risky)),
                       worded_text("remove %(options)s from its /etc/fstab line (%(line)s), then reboot",
                                   options=",".join(risky), line=FSTAB_LINE))
    in_fstab = fstab is not None and any(m.point == now.point for m in fstab)
    unit = now.point.strip("/").replace("-", "\\x2d").replace("/", "-") + ".mount"
    if fstab is not None and not in_fstab and not (root / "etc/systemd/system" / unit).is_file():
        return OsCheck(name, False, worded_text("%(point)s is mounted but not in /etc/fstab: after the next boot the "
                                                "database would be on /", point=now.point),
                       worded_text("add it to /etc/fstab: %(line)s", line=FSTAB_LINE))
    if overlay.enabled and overlay.recurses and in_fstab:
        return OsCheck(name, False, worded_text("%(where)s: at the next boot overlayroot also puts %(point)s under "
                                                "its RAM overlay (it recurses into /etc/fstab)", where=overlay.where,
                                                point=now.point), RECURSE_FIX)
    where = {"point": now.point, "fs": now.fstype, "device": now.device}
    commit = now.option("commit")
    if commit is not None and commit.isdigit() and int(commit) > MAX_COMMIT_S:
        return OsCheck(name, True, worded_text("%(point)s: %(fs)s on %(device)s, read-write; commit=%(commit)s: the "
                                               "journal commits every %(commit)s s, so a cut loses more unsynced "
                                               "writes (the database syncs its commits, so they are kept)",
                                               commit=commit, **where),
                       worded_text("commit=1 in its /etc/fstab line: %(line)s", line=FSTAB_LINE))
    return OsCheck(name, True, worded_text("%(point)s: %(fs)s on %(device)s, read-write", **where))


def _journald_settings(root: Path) -> tuple[dict[str, tuple[str, str]], int]:
    """The ``[Journal]`` settings, each with the file that set it, in systemd's order; and how many files were read."""
    dropins: dict[str, Path] = {}
    for prefix in JOURNALD_DROPIN_DIRS:                          # the same name in /etc replaces a vendor one
        folder = root / prefix / "systemd" / "journald.conf.d"
        if folder.is_dir():
            dropins.update((p.name, p) for p in folder.glob("*.conf"))
    files = [root / "etc/systemd/journald.conf"] + [dropins[k] for k in sorted(dropins)]
    settings: dict[str, tuple[str, str]] = {}
    read = 0
    for path in files:
        text = _read(path)
        if text is None:
            continue
        read += 1
        section = ""
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
            elif section == "Journal" and "=" in line and not line.startswith(("#", ";")):
                key, _, value = (s.strip() for s in line.partition("="))
                if key == "Storage" and value not in STORAGE_VALUES:
                    log.warning("%s: Storage=%s is not a value journald accepts; it ignores the line", path, value)
                elif value:
                    settings[key] = (value, "/" + str(path.relative_to(root)))
    return settings, read


def _check_journald(root: Path) -> OsCheck:
    name = N_("journald")
    settings, read = _journald_settings(root)
    if not read:
        return OsCheck(name, None, N_("cannot read /etc/systemd/journald.conf or a drop-in"), ON_THE_TABLE)
    storage, source = settings.get("Storage", ("auto", Phrase(N_("the default"))))
    if storage == "volatile":
        return OsCheck(name, True, worded_text("Storage=volatile (%(source)s): the journal stays in RAM",
                                               source=source))
    if storage == "none":
        return OsCheck(name, False, worded_text("Storage=none (%(source)s): no log is kept, 'journalctl -u mjtable' "
                                                "shows nothing", source=source), JOURNAL_FIX)
    cap = settings.get("SystemMaxUse")
    if cap is not None:
        return OsCheck(name, True, worded_text("Storage=%(storage)s (%(source)s), SystemMaxUse=%(cap)s (%(where)s): "
                                               "the journal on the card is capped", storage=storage, source=source,
                                               cap=cap[0], where=cap[1]))
    if storage == "persistent":
        why = worded_text("Storage=%(storage)s (%(source)s): kept on the card, with no size cap", storage=storage,
                          source=source)
    elif (root / "var/log/journal").is_dir():
        why = worded_text("Storage=%(storage)s (%(source)s): kept on the card, since /var/log/journal exists, with "
                          "no size cap", storage=storage, source=source)
    else:
        why = worded_text("Storage=%(storage)s (%(source)s): kept on the card as soon as /var/log/journal is "
                          "created, with no size cap", storage=storage, source=source)
    return OsCheck(name, False, why, JOURNAL_FIX)


def check_table_os(root: Path = Path("/"), data_dir: Path = Path("/var/lib/mjtable")) -> list[OsCheck]:
    """Read-only root, data partition, journald: what the table's OS needs, read from files under ``root``."""
    text, _ = _read_first(root, "proc/mounts", "proc/self/mounts")
    mounts = parse_mount_table(text) if text is not None else None
    fstab_text = _read(root / "etc/fstab")
    fstab = parse_mount_table(fstab_text) if fstab_text is not None else None
    overlay = _overlay_config(root)
    data = PurePosixPath("/") / PurePosixPath(str(data_dir))
    checks = [_check_root(mounts, fstab, overlay), _check_data(root, mounts, fstab, overlay, data),
              _check_journald(root)]
    for check in checks:
        log.debug("os check %s: %s (%s)", check.name, check.ok, check.detail)
    return checks


def missing(checks: list[OsCheck]) -> list[OsCheck]:
    """The checks that failed (``ok is False``); "cannot tell" (None) is not counted as missing."""
    return [c for c in checks if c.ok is False]


REPORT_MARKS = {True: N_("ok"), False: N_("MISSING"), None: "?"}
INSTALL_MARKS = {True: N_("ok"), False: N_("warn"), None: "?"}   # (install: a report, never a failed install)
FIX, ADVICE = N_("fix"), N_("advice")
SAID = N_("%(name)s: %(detail)s")                              # (a check, and its fix or advice)


def _width(text: str) -> int:
    return sum(2 if east_asian_width(c) in "WF" else 1 for c in text)


def format_report(checks: list[OsCheck], marks: dict[bool | None, str] = REPORT_MARKS,
                  say: Callable[[str], str] = str) -> str:
    """One line per check (its mark from ``marks``: ``ok``, ``MISSING`` or ``?``; name, detail), then the fix line of
    each one not ok (``advice`` for an ok one that could be better).  ``say``: each text in the reader's language
    (the command line's ``said_text``; the English by default)."""
    lines = []
    for check in checks:
        mark = say(marks[check.ok])
        said = say(SAID) % {"name": say(check.name), "detail": say(check.detail)}
        lines.append(f"{mark}{' ' * max(1, 8 - _width(mark))}{said}")
        if check.fix:
            lines.append("        " + say(SAID) % {"name": say(FIX if check.ok is not True else ADVICE),
                                                   "detail": say(check.fix)})
    return "\n".join(lines)
