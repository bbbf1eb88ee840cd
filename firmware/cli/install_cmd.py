"""``mjtable install``: install or update a table (Raspberry Pi OS, or a test root) from a release bundle.

Lays out, under ``--root`` (``/`` on a table):

* ``opt/mjtable/releases/<version>/``: the bundle's release in its own virtualenv, installed with no
  network, self-tested, then made ``current`` (on trial until the service reports READY);
* ``opt/mjtable/bin/mjtable-start``: the service's start guard (rolls a release back that never gets READY);
* ``etc/mjtable/``: the table's configuration, written on the first install only (``--force`` replaces
  it): table models, rule sets, ``tables/table.toml`` the model the service runs, whose tile sets are
  enrolled into ``tiles/`` with ``mjtable diag enroll``;
* ``etc/systemd/system/mjtable.service``: the unit; ``var/lib/mjtable/``: the table database's folder;
* ``etc/systemd/system/mjtable-web.service``: the web page's unit, and ``etc/mjtable/web/``: the table's own
  TLS key and certificate (made on the first install, kept after) and the page's users (``mjtable web passwd``:
  none by default);
* ``usr/local/bin/mjtable``: the current release's command.

It prints what the operating system still lacks against power cuts and the
system steps it leaves to the administrator.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from pathlib import Path

from firmware.cli.arg_types import add_rules_option, seconds
from firmware.cli.words import _

UNIT = Path("etc") / "systemd" / "system" / "mjtable.service"
WEB_UNIT = UNIT.with_name("mjtable-web.service")
WEB_DIR = Path("etc") / "mjtable" / "web"
TRUSTED_KEY = Path("etc") / "mjtable" / "release-key.pub"
WEB_GROUP = "mjtable-web"            # the web page's user's group: reads the users and the TLS key


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("install", help=_("install or update a table from a release bundle (no network)"),
                            description=_("Install or update the controller, its configuration and its unit."),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=_("examples:\n  mjtable install --bundle mjtable-0.2.0.bundle.tar --root /\n"
                                     "  mjtable install --bundle mjtable-0.2.0.bundle.tar --root $(mktemp -d)   "
                                     "# try it in a folder"))
    parser.add_argument("--bundle", type=Path, help=_("the release bundle (make bundle / mjtable bundle)"))
    parser.add_argument("--root", type=Path, default=Path("/"), help=_("install under this root (default /)"))
    parser.add_argument("--table", type=Path, help=_("first install: the table model (default: four-port double)"))
    add_rules_option(parser, _("the rule set the service runs (first install: mcr; an update keeps the table's)"),
                     default=None)
    parser.add_argument("--trust", type=Path, metavar="KEY.pub",
                        help=_("trust this Ed25519 public key from now on: unsigned bundles are refused"))
    parser.add_argument("--force", action="store_true",
                        help=_("replace the table's configuration with the defaults (its enrolled tile sets and "
                               "trusted key are kept)"))
    parser.add_argument("--config-only", action="store_true",
                        help=_("write the configuration, the unit and the start guard, no release"))
    parser.add_argument("--selftest-seconds", type=seconds, default=3.0,
                        help=_("how long the new release runs against the simulated table before it may switch"))
    parser.set_defaults(func=run)


def installed_rules(root: Path) -> str | None:
    """The rule set the installed unit runs, if there is one."""
    try:
        found = re.search(r"--rules (\S+)", (root / UNIT).read_text(encoding="utf-8"))
    except OSError:
        return None
    return found.group(1) if found else None


def write_config(root: Path, shipped: Path, table: Path | None, force: bool) -> str:
    """The table's configuration folder on the first install (or with ``force``); a line saying what was done."""
    from firmware.config import load_table_config

    etc = root / "etc" / "mjtable"
    if (etc / "tables" / "table.toml").exists() and not force:
        return f"configuration kept: {etc}"
    model_text = (table or shipped / "tables" / "four_port_double.toml").read_text(encoding="utf-8")
    load_table_config(table or shipped / "tables" / "four_port_double.toml")   # refuse a broken model
    keep_key = (root / TRUSTED_KEY).read_bytes() if (root / TRUSTED_KEY).exists() else None
    web = root / WEB_DIR
    enrolled = etc / "tiles"
    staging = etc.with_name("mjtable.new")
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(shipped, staging, ignore=shutil.ignore_patterns("__init__.py", "__pycache__", "systemd",
                                                                     "tiles", "*.tmp"))
    if enrolled.is_dir():
        shutil.copytree(enrolled, staging / "tiles")       # the table's enrolled sets are its own
    else:
        (staging / "tiles").mkdir()
    for other in (staging / "tables").glob("*.toml"):   # (every model names the table's sets, not the simulator's)
        other.write_text(table_model_text(other.read_text(encoding="utf-8")), encoding="utf-8")
    (staging / "tables" / "table.toml").write_text(table_model_text(model_text), encoding="utf-8")
    load_table_config(staging / "tables" / "table.toml")
    if keep_key is not None:
        (staging / "release-key.pub").write_bytes(keep_key)
    if web.is_dir():
        copy_keeping_owners(web, staging / "web")    # the page's users and the table's certificate, as they were
    if etc.exists():
        shutil.rmtree(etc)
    staging.rename(etc)
    return f"configuration written: {etc} (table model {etc / 'tables' / 'table.toml'})"


def copy_keeping_owners(source: Path, target: Path) -> None:
    """``shutil.copytree`` (modes and times kept, links copied as links) keeping each entry's owner and group
    too: users.json and tls.key must stay readable by the web page's group."""
    shutil.copytree(source, target, symlinks=True)
    for folder, names, files in os.walk(source):
        for name in [None, *names, *files]:
            entry = Path(folder) / name if name else Path(folder)
            info = entry.lstat()
            os.chown(target / entry.relative_to(source), info.st_uid, info.st_gid, follow_symlinks=False)


def table_model_text(text: str) -> str:
    """A model for a real table: its tile sets are the table's own enrolment files, not the simulator's."""
    return re.sub(r'^(\s*([A-Z])\s*=\s*)"[^"]*sim-[A-Z]\.csv"', r'\1"../tiles/\2.csv"', text, flags=re.M)


def _check_rules(root: Path, table: Path | None, shipped: Path, rules: str, force: bool) -> None:
    """Refuse a rule set the table's model cannot play (the service would latch E03 at power-on)."""
    from firmware.config import load_table_config
    from firmware.rules.config import table_conflicts
    from firmware.rules.registry import load_ruleset

    own = root / "etc" / "mjtable" / "tables" / "table.toml"
    model = table or (own if own.exists() and not force else shipped / "tables" / "four_port_double.toml")
    conflicts = table_conflicts(load_ruleset(rules), load_table_config(model).table.tile_set, str(model))
    if conflicts:
        raise ValueError("; ".join(conflicts))


def write_unit(root: Path, unit_file: Path, rules: str) -> Path:
    unit = root / UNIT
    unit.parent.mkdir(parents=True, exist_ok=True)
    text = unit_file.read_text(encoding="utf-8")
    unit.write_text(re.sub(r"--rules \S+", f"--rules {rules}", text), encoding="utf-8")
    return unit


def write_web(root: Path, systemd_dir: Path) -> list[str]:
    """The web page's unit (from the bundle, when it has one) and, once, the table's TLS key and certificate;
    lines saying what was done."""
    from firmware.cli.web_cmd import host_names, print_fingerprint
    from firmware.web.tls import make_certificate
    from firmware.root.host import HOST_CLOCK

    source = systemd_dir / WEB_UNIT.name
    if not source.is_file():
        return [f"no web page in this bundle ({source.name} missing): {WEB_UNIT.name} not written"]
    (root / WEB_UNIT).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    lines = [f"web page unit: {root / WEB_UNIT}"]
    folder = root / WEB_DIR
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o750)
    cert, key = folder / "tls.crt", folder / "tls.key"
    if not cert.exists() and not key.exists():
        names = host_names()
        print_fingerprint(make_certificate(cert, key, names + ["localhost"], HOST_CLOCK), cert, names)
        lines.append(f"the table's TLS certificate made: {cert} (to use the parlour CA's instead, put its "
                     f"certificate and key there)")
    lines += _web_group(folder, WEB_GROUP)
    if not (folder / "users.json").exists():
        lines.append("the web page has no user yet (there is no default password): "
                     "sudo mjtable web passwd NAME --role technician")
    return lines


def _web_group(folder: Path, group: str) -> list[str]:
    """The web folder, its certificate, key and users in ``group`` when the group exists (their owner kept);
    a line when they cannot be."""
    import grp

    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return []                                 # (not made yet: a system step left to the administrator)
    for path in (folder, folder / "tls.crt", folder / "tls.key", folder / "users.json"):
        try:
            if path.exists() and path.stat().st_gid != gid:
                os.chown(path, -1, gid)
        except OSError as exc:
            return [f"{path}: not put in group {group} ({exc.strerror or exc}): chgrp -R {group} {folder}"]
    return []


def link_command(root: Path) -> None:
    link = root / "usr" / "local" / "bin" / "mjtable"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(Path("/opt/mjtable/current/bin/mjtable") if root == Path("/")
                    else root / "opt" / "mjtable" / "current" / "bin" / "mjtable")


def run(args: argparse.Namespace) -> int:
    from firmware.config_paths import shipped_dir
    from firmware.faults import TableError
    from firmware.rules.registry import load_ruleset
    from firmware.release.bundle import check_public_key, host_platform, open_bundle
    from firmware.release.releases import Releases, install_launcher
    from firmware.root.host import start_guard
    from firmware.root.host import HOST_CLOCK

    if not args.bundle and not args.config_only:
        raise ValueError(_("--bundle FILE is required (make bundle writes one); --config-only writes the "
                           "configuration and the unit without a release"))
    root: Path = args.root.absolute()
    if not root.exists():                              # (a typo must not grow a tree of folders on the host)
        raise TableError(_("--root %(folder)s: no such folder; give an existing one (/ on a table; to try it, "
                           "--root $(mktemp -d)); nothing was written") % {"folder": root})
    if not root.is_dir():
        raise TableError(_("--root %(folder)s: not a folder") % {"folder": root})
    if args.bundle and not args.bundle.is_file():
        raise ValueError(_("--bundle %(file)s: no such file") % {"file": args.bundle})
    rules = args.rules or installed_rules(root) or "mcr"
    load_ruleset(rules)
    if args.trust:
        check_public_key(args.trust)                   # (a private key or a text file is refused here)
    trusted = args.trust or (root / TRUSTED_KEY if (root / TRUSTED_KEY).exists() else None)
    releases = Releases(root, HOST_CLOCK)
    first = not (root / "etc" / "mjtable" / "tables" / "table.toml").exists()
    with tempfile.TemporaryDirectory(prefix="mjtable-install-") as tmp:
        bundle = open_bundle(args.bundle, Path(tmp), trusted) if args.bundle else None
        shipped = bundle.folder / "config" if bundle else shipped_dir()
        unit_file = (bundle.folder if bundle else shipped_dir()) / "systemd" / "mjtable.service"
        if bundle and host_platform() not in bundle.manifest["platforms"]:
            raise TableError(_("%(file)s holds wheels for %(platforms)s; this machine is %(machine)s")
                             % {"file": args.bundle, "platforms": ", ".join(bundle.manifest["platforms"]),
                                "machine": host_platform()})
        if bundle and releases.current() == bundle.version:
            raise TableError(_("release %(version)s is already current here (mjtable release list)")
                             % {"version": bundle.version})
        _check_rules(root, args.table, shipped, rules, args.force)
        (root / "var" / "lib" / "mjtable").mkdir(parents=True, exist_ok=True)
        print(write_config(root, shipped, args.table, args.force))
        unit = write_unit(root, unit_file, rules)
        web_lines = write_web(root, unit_file.parent)
        install_launcher(releases.base, start_guard)
        if bundle is not None:
            signed = (_("signed, signature good") if trusted else _("signed") if bundle.signed else _("not signed"))
            print(_("bundle %(file)s: release %(version)s, %(signed)s")
                  % {"file": args.bundle.name, "version": bundle.version, "signed": signed})
            extras = f"[{bundle.manifest['extras']}]" if bundle.manifest.get("extras") else ""
            releases.install(bundle.wheels, bundle.version, extras,
                             ["--rules", rules, "--sim-seconds", f"{args.selftest_seconds:g}"])
            before = releases.current()
            releases.activate(bundle.version)
            link_command(root)
            if before and before != bundle.version:
                print(_("release %(version)s passed its self-test and is current (previous: %(before)s; it comes "
                        "back by itself if this one never gets READY)") % {"version": bundle.version, "before": before})
            else:
                print(_("release %(version)s passed its self-test and is current") % {"version": bundle.version})
            removed = releases.prune()
            if removed:
                print(_("old releases removed: %(versions)s") % {"versions": ", ".join(removed)})
    if args.trust:
        (root / TRUSTED_KEY).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.trust, root / TRUSTED_KEY)
        print(_("trusted from now on: %(file)s (unsigned bundles are refused)") % {"file": root / TRUSTED_KEY})
    where = {"root": root, "unit": unit, "releases": releases.folder}
    print((_("installed under %(root)s: unit %(unit)s, releases %(releases)s") if bundle
           else _("installed under %(root)s: unit %(unit)s, releases %(releases)s (no release: --config-only)"))
          % where)
    print("\n".join(web_lines))
    _say_what_is_left(root, first)
    return 0


def _say_what_is_left(root: Path, first: bool) -> None:
    from firmware.cli.error_words import said_text
    from firmware.release.os_checks import INSTALL_MARKS, check_table_os, format_report

    checks = check_table_os(root)
    print(_("against power cuts, the operating system under %(root)s was checked (docs/table-os.md; ok, warn: not "
            "yet, with what to do, ?: cannot tell here):") % {"root": root})
    print("\n".join("  " + line for line in format_report(checks, INSTALL_MARKS, said_text).splitlines()))
    from firmware.reader.registry import load_table_registry
    from firmware.config import load_table_config
    try:
        registry = load_table_registry(load_table_config(root / "etc" / "mjtable" / "tables" / "table.toml"))
        hint = registry.enrol_hint() if registry.unenrolled else ""
    except Exception as exc:  # noqa: BLE001 (a report, never a failed install)
        hint = _("the table model does not load: %(error)s") % {"error": exc}
    if hint:
        print(said_text(hint))
    if not first:
        return
    print(_("system steps left to you (as root, on the first install):") + "\n"
          "  groupadd --system mjtable-tech      # technicians: may use 'mjtable diag'\n"
          "  useradd --system --groups gpio,dialout,mjtable-tech mjtable\n"
          "  useradd --system --no-create-home --groups mjtable-tech mjtable-web   # the web page's own user\n"
          "  chgrp -R mjtable-web /etc/mjtable/web && chmod 0640 /etc/mjtable/web/tls.key\n"
          "  mjtable web passwd NAME --role technician   # each technician; --role staff for parlour staff\n"
          "  usermod -aG mjtable-tech TECHNICIAN # each technician's login\n"
          "  chown -R mjtable:mjtable /var/lib/mjtable\n"
          "  chown mjtable: /opt/mjtable /opt/mjtable/releases   # only for staged updates over the fleet\n"
          "  systemctl daemon-reload && systemctl enable --now mjtable mjtable-web\n"
          "  journalctl -u mjtable -f          # the log, with fault codes")
