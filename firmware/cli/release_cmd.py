"""``mjtable release``, ``mjtable selftest`` and ``mjtable bundle``: a table's releases, their self-test, the bundle."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.cli.arg_types import add_rules_option, seconds_or_zero
from firmware.cli.words import _, state
from firmware.faults import TableError


def register(sub: argparse._SubParsersAction) -> None:
    release = sub.add_parser("release", help=_("the releases on this table: list, activate, rollback"),
                             description=_("The releases installed side by side under ROOT/opt/mjtable."))
    release.add_argument("--root", type=Path, default=Path("/"), help=_("the install root (default /)"))
    # the options every action shares go before or after the action's name (release --root R list, release list
    # --root R): the action's copy has no default, so it does not undo one given before it
    shared = argparse.ArgumentParser(add_help=False)
    shared.add_argument("--root", type=Path, default=argparse.SUPPRESS, help=_("the install root (default /)"))
    actions = release.add_subparsers(dest="release_command", metavar="ACTION", required=True)
    actions.add_parser("list", parents=[shared], help=_("every installed release, the current one marked")
                       ).set_defaults(func=_list)
    activate = actions.add_parser("activate", parents=[shared],
                                  help=_("make an installed release current (restart the service after)"))
    activate.add_argument("version")
    activate.set_defaults(func=_activate)
    actions.add_parser("rollback", parents=[shared], help=_("make the previous release current again")
                       ).set_defaults(func=_rollback)

    selftest = sub.add_parser("selftest", help=_("check this release against the table before it may run"),
                              description=_("Imports, the table's configuration against the rule set, the table "
                                            "database migrated on a copy, and a short run --sim; prints what the "
                                            "operating system lacks against power cuts."))
    from firmware.cli.run_cmd import add_table_options
    add_table_options(selftest)
    add_rules_option(selftest, _("the rule set to check the configuration against"))
    selftest.add_argument("--sim-seconds", type=seconds_or_zero, default=3.0,
                          help=_("how long the service runs against the simulated table (0: not at all)"))
    selftest.add_argument("--os-root", type=Path, default=Path("/"), help=_("the system whose settings are reported"))
    selftest.set_defaults(func=_selftest)

    bundle = sub.add_parser("bundle", help=_("write an offline release bundle (wheels for the table, config, unit)"),
                            description=_("Build the project's wheel and gather every dependency's wheel for the "
                                          "table's platform into one file, with a checksum manifest."))
    bundle.add_argument("--project", type=Path, default=Path("."), help=_("the checkout to build (default .)"))
    bundle.add_argument("--out", type=Path, default=Path("dist"), help=_("where to write it (default dist/)"))
    bundle.add_argument("--platform", action="append", metavar="linux_ARCH",
                        help=_("a platform to carry wheels for (repeatable; default: linux_aarch64, the table, "
                               "and this machine's)"))
    bundle.add_argument("--python", default="3.11", help=_("the table's Python (default 3.11, bookworm)"))
    bundle.add_argument("--wheels", type=Path, metavar="DIR",
                        help=_("take dependencies from this folder of wheels only (build with no network)"))
    bundle.add_argument("--sign", type=Path, metavar="KEY.pem", help=_("sign the manifest with this Ed25519 key"))
    bundle.add_argument("--new-key", nargs="?", const="release-signing", metavar="NAME",
                        help=_("write a new key pair NAME.pem (private) and NAME.pub (trusted by tables), then stop: "
                               "in ~/.config/mjtable/ (default NAME release-signing); a NAME with a folder, or "
                               "--key-out, elsewhere, but never where a git work tree would not ignore it"))
    bundle.add_argument("--key-out", type=Path, metavar="FILE",
                        help=_("with --new-key: the private key's file (the public key beside it, .pub)"))
    bundle.set_defaults(func=_bundle)


def _releases(args: argparse.Namespace):
    from firmware.release.releases import Releases
    from firmware.root.host import HOST_CLOCK

    return Releases(args.root, HOST_CLOCK)


def _list(args: argparse.Namespace) -> int:
    releases = _releases(args)
    installed = releases.installed()
    if not installed:
        print(_("no release installed under %(folder)s") % {"folder": releases.folder})
        return 1
    for release in installed:
        print(release.line())
    for entry in releases.state()["history"][-5:]:
        print(f"  {entry['at']}  {entry['what']} {entry['version'] or ''}".rstrip())
    return 0


def _activate(args: argparse.Namespace) -> int:
    releases = _releases(args)
    releases.activate(args.version)
    print(_("release %(version)s is current (on trial until the service reports READY): systemctl restart mjtable")
          % {"version": args.version})
    return 0


def _rollback(args: argparse.Namespace) -> int:
    back = _releases(args).rollback()
    print(_("release %(version)s is current again: systemctl restart mjtable") % {"version": back})
    return 0


def _selftest(args: argparse.Namespace) -> int:
    import tempfile

    from firmware.cli.error_words import said, said_text
    from firmware.cli.run_cmd import service_options
    from firmware.release.selftest import check_os, run_selftest
    from firmware.root.service import selftest_run

    def run_for(seconds: float) -> tuple:
        with tempfile.TemporaryDirectory(prefix="mjtable-selftest-") as tmp:
            args.sim = True                 # (the simulated table behind the pins and the port)
            return selftest_run(service_options(args, Path(tmp) / "table.db", None), seconds)

    checks = run_selftest(args, run_for)
    for check in checks:
        mark = _("ok") if check.ok else _("FAILED")
        print(_("%(mark)s  %(check)s: %(detail)s") % {"mark": mark, "check": _(check.name),
                                                       "detail": _check_detail(check, said, said_text)})
    lacking = check_os(args.os_root, said_text)
    if lacking:
        print(_("the operating system lacks, against power cuts (not a failure here; docs/table-os.md):"))
        print("\n".join("  " + line for line in lacking))
    failed = [_(c.name) for c in checks if not c.ok]
    if failed:
        print(_("selftest FAILED: %(checks)s") % {"checks": ", ".join(failed)}, file=sys.stderr)
        return 1
    print(_("selftest passed"))
    return 0


def _bundle(args: argparse.Namespace) -> int:
    from firmware.release.bundle import TABLE_PLATFORM, build_bundle, host_platform, make_key_pair

    if args.key_out is not None and args.new_key is None:
        raise TableError(_("--key-out goes with --new-key (it names the new private key's file)"))
    if args.new_key is not None:
        from firmware.release.bundle import default_key_dir, refuse_in_work_tree, signing_key_paths

        private, public = signing_key_paths(args.new_key, args.key_out)
        refuse_in_work_tree(private, "--key-out" if args.key_out is not None else "--new-key")
        if private.parent == default_key_dir():
            private.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        make_key_pair(private, public)
        print(_("signing key %(private)s (keep it off the tables: mjtable bundle --sign %(private)s), public key "
                "%(public)s (mjtable install --trust %(name)s)") % {"private": private, "public": public,
                                                                      "name": public.name})
        return 0
    platforms = args.platform or list(dict.fromkeys([TABLE_PLATFORM, host_platform()]))
    path = build_bundle(args.project, args.out, platforms, args.python, find_links=args.wheels,
                        sign_key=args.sign)
    sizes = {"file": path, "mb": f"{path.stat().st_size / 2**20:.1f}", "platforms": ", ".join(platforms)}
    print((_("%(file)s: %(mb)s MB, wheels for %(platforms)s, signed") if args.sign
           else _("%(file)s: %(mb)s MB, wheels for %(platforms)s")) % sizes)
    return 0


def _check_detail(check, said, said_text) -> str:
    """A self-test check's detail in this language: an error's message, or its worded text with the controller's
    state in words."""
    if check.error is not None:
        return said(check.error)
    values = getattr(check.detail, "values", None)
    template = getattr(check.detail, "template", None)
    if isinstance(values, dict) and isinstance(template, str) and "state" in values:
        return _(template) % {**values, "state": state(values["state"])}
    return said_text(check.detail)
