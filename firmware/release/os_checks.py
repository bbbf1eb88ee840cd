"""Is the table's Raspberry Pi OS safe against the nightly power cut? Read-only root, data partition, journald."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

log = logging.getLogger(__name__)

FSTAB_LINE = "/dev/mmcblk0p3 /var/lib/mjtable ext4 defaults,noatime,commit=1,data=ordered 0 2"
OVERLAY_FIX = ("sudo raspi-config nonint do_overlayfs 0 (menu: Performance Options → Overlay File System), "
               "then make it overlayroot=tmpfs:recurse=0 in /boot/firmware/cmdline.txt, then reboot (docs/table-os.md)")
RECURSE_FIX = ("in /boot/firmware/cmdline.txt write overlayroot=tmpfs:recurse=0 instead of overlayroot=tmpfs "
               "(the overlay then covers / alone), then reboot")
JOURNAL_FIX = ("create /etc/systemd/journald.conf.d/mjtable.conf with '[Journal]', 'Storage=volatile', "
               "'RuntimeMaxUse=32M' (on the real root, not the overlay), then sudo systemctl restart systemd-journald")
GOOD_FS = {"ext4", "ext3", "f2fs", "btrfs", "xfs"}               # journaling or log-structured
BAD_FS = {"vfat", "msdos", "fat", "exfat", "ntfs", "ntfs3", "fuseblk", "ext2"}
RISKY_OPTIONS = ("nobarrier", "barrier=0", "data=writeback", "fsync_mode=nobarrier")
MAX_COMMIT_S = 5                                                 # ext4's default
STORAGE_VALUES = {"volatile", "persistent", "auto", "none"}
JOURNALD_DROPIN_DIRS = ("usr/lib", "usr/local/lib", "run", "etc")   # lowest precedence first
_OCTAL = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class OsCheck:
    """One check: ``ok`` is True, False (missing) or None (cannot tell); ``fix`` says what to do."""
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
    name = "read-only root"
    now = mount_for(mounts, "/") if mounts is not None else None
    if now is None:
        planned = mount_for(fstab, "/") if fstab is not None else None
        if overlay.enabled or (planned is not None and "ro" in planned.options):
            return OsCheck(name, True, f"configured ({overlay.where if overlay.enabled else '/etc/fstab'}); "
                                       "the mount table is unreadable")
        return OsCheck(name, None, "cannot read /proc/mounts", "run the check on the table itself")
    if now.fstype == "overlay":
        if now.option("lowerdir") == "/media/root-ro" and overlay.enabled is False:    # overlayroot's
            return OsCheck(name, False, "/ is an overlay now, but the overlay is switched off for the next boot, "
                                        "which will write to the card", OVERLAY_FIX)
        return OsCheck(name, True, "/ is an overlay: writes go to RAM, the card's root is never written")
    if "ro" in now.options:
        return OsCheck(name, True, f"/ ({now.fstype}) is mounted read-only")
    if overlay.enabled:
        return OsCheck(name, True, f"{overlay.where}: / becomes an overlay at the next boot (writable until then)")
    return OsCheck(name, False, f"/ is {now.fstype} mounted read-write: a power cut while the system writes "
                                "can corrupt it", OVERLAY_FIX)


def _check_data(root: Path, mounts: list[Mount] | None, fstab: list[Mount] | None, overlay: _Overlay,
                data_dir: PurePosixPath) -> OsCheck:
    name = f"data partition ({data_dir})"
    own_partition = (f"put {data_dir} on its own ext4 partition; /etc/fstab line: {FSTAB_LINE} "
                     "(docs/table-os.md)")
    now = mount_for(mounts, data_dir) if mounts is not None else None
    if now is None:
        return OsCheck(name, None, "cannot read /proc/mounts", "run the check on the table itself")
    planned = mount_for([m for m in fstab or [] if m.point != "/"], data_dir)
    if now.point == "/":
        if planned is not None:
            return OsCheck(name, False, f"{planned.point} is in /etc/fstab but not mounted",
                           f"sudo mount {planned.point} (or reboot), then check again")
        if "ro" in now.options and now.fstype != "overlay":
            return OsCheck(name, False, "the database is on the read-only root: it cannot be written", own_partition)
        where = "the root overlay: it is in RAM" if now.fstype == "overlay" else \
            "the root file system: once / is read-only (overlay) it would be in RAM"
        return OsCheck(name, False, f"the database is on {where} and lost at every power-off", own_partition)
    if now.fstype in ("tmpfs", "ramfs"):
        return OsCheck(name, False, f"{now.point} is {now.fstype} (RAM): the database is lost at every power-off",
                       own_partition)
    if now.fstype == "overlay":
        if now.option("lowerdir") == "/media/root-ro" + now.point:
            return OsCheck(name, False, f"overlayroot put {now.point} under its RAM overlay too (it recurses into "
                                        "/etc/fstab): every write is lost at power-off", RECURSE_FIX)
        return OsCheck(name, False, f"{now.point} is an overlay: its writes may never reach the card", own_partition)
    if "ro" in now.options:
        return OsCheck(name, False, f"{now.point} is mounted read-only",
                       f"remove 'ro' from its /etc/fstab line ({FSTAB_LINE}), then reboot")
    if now.fstype in BAD_FS:
        return OsCheck(name, False, f"{now.point} is {now.fstype}, which has no journal: a power cut mid-write "
                                    "can corrupt the file system",
                       f"reformat it as ext4 (sudo mkfs.ext4 -L mjtable-data DEVICE) and mount it with: {FSTAB_LINE}")
    if now.fstype not in GOOD_FS:
        return OsCheck(name, None, f"{now.point} is {now.fstype}, a file system this check does not know",
                       f"ext4 is the known-good choice: {FSTAB_LINE}")
    risky = [o for o in now.options if o in RISKY_OPTIONS]
    if risky:
        return OsCheck(name, False, f"{now.point} is mounted with {','.join(risky)}: a power cut can lose or "
                                    "corrupt data already committed",
                       f"remove {','.join(risky)} from its /etc/fstab line ({FSTAB_LINE}), then reboot")
    in_fstab = fstab is not None and any(m.point == now.point for m in fstab)
    unit = now.point.strip("/").replace("-", "\\x2d").replace("/", "-") + ".mount"
    if fstab is not None and not in_fstab and not (root / "etc/systemd/system" / unit).is_file():
        return OsCheck(name, False, f"{now.point} is mounted but not in /etc/fstab: after the next boot the "
                                    "database would be on /", f"add it to /etc/fstab: {FSTAB_LINE}")
    if overlay.enabled and overlay.recurses and in_fstab:
        return OsCheck(name, False, f"{overlay.where}: at the next boot overlayroot also puts {now.point} under "
                                    "its RAM overlay (it recurses into /etc/fstab)", RECURSE_FIX)
    detail = f"{now.point}: {now.fstype} on {now.device}, read-write"
    commit = now.option("commit")
    if commit is not None and commit.isdigit() and int(commit) > MAX_COMMIT_S:
        return OsCheck(name, True, f"{detail}; commit={commit}: the journal commits every {commit} s, so a cut loses "
                                   "more unsynced writes (the database syncs its commits, so they are kept)",
                       f"commit=1 in its /etc/fstab line: {FSTAB_LINE}")
    return OsCheck(name, True, detail)


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
    name = "journald"
    settings, read = _journald_settings(root)
    if not read:
        return OsCheck(name, None, "cannot read /etc/systemd/journald.conf or a drop-in",
                       "run the check on the table itself")
    storage, source = settings.get("Storage", ("auto", "the default"))
    if storage == "volatile":
        return OsCheck(name, True, f"Storage=volatile ({source}): the journal stays in RAM")
    if storage == "none":
        return OsCheck(name, False, f"Storage=none ({source}): no log is kept, 'journalctl -u mjtable' shows "
                                    "nothing", JOURNAL_FIX)
    cap = settings.get("SystemMaxUse")
    if cap is not None:
        return OsCheck(name, True, f"Storage={storage} ({source}), SystemMaxUse={cap[0]} ({cap[1]}): "
                                   "the journal on the card is capped")
    if storage == "persistent":
        why = "kept on the card"
    elif (root / "var/log/journal").is_dir():
        why = "kept on the card, since /var/log/journal exists"
    else:
        why = "kept on the card as soon as /var/log/journal is created"
    return OsCheck(name, False, f"Storage={storage} ({source}): {why}, with no size cap", JOURNAL_FIX)


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


REPORT_MARKS = {True: "ok", False: "MISSING", None: "?"}
INSTALL_MARKS = {True: "ok", False: "warn", None: "?"}        # (install: a report, never a failed install)


def format_report(checks: list[OsCheck], marks: dict[bool | None, str] = REPORT_MARKS) -> str:
    """One line per check (its mark from ``marks``: ``ok``, ``MISSING`` or ``?``; name, detail), then the fix line of
    each one not ok (``advice`` for an ok one that could be better)."""
    lines = []
    for check in checks:
        lines.append(f"{marks[check.ok]:<7} {check.name}: {check.detail}")
        if check.fix:
            lines.append(f"        {'fix' if check.ok is not True else 'advice'}: {check.fix}")
    return "\n".join(lines)
