"""``mjtable config check [FILE...] [--rules R]``: validate table models and rule sets, and one against the other."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.cli.arg_types import add_rules_option
from firmware.cli.error_words import said
from firmware.cli.words import _


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("config", help=_("configuration files"), description=_("Check configuration files."))
    csub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    check = csub.add_parser("check", help=_("validate files (default: every shipped table model and rule set)"))
    check.add_argument("files", nargs="*", type=Path, help=_("TOML files to check"))
    check.add_argument("--config-dir", type=Path, metavar="DIR",
                       help=_("check a table's configuration folder (e.g. /etc/mjtable) instead of the shipped files"))
    add_rules_option(check, _("also check each table model against this rule set (as the controller does at "
                              "power-on)"), default=None)
    check.set_defaults(func=run_check)


def folder_files(folder: Path | None = None) -> list[Path]:
    """The table models and rule sets of a configuration folder (the shipped one by default)."""
    from firmware.config_paths import shipped_dir

    folder = folder or shipped_dir()
    if not folder.is_dir():
        raise ValueError(_("--config-dir %(folder)s: not a folder") % {"folder": folder})
    return sorted((folder / "tables").glob("*.toml")) + sorted((folder / "rules").glob("*.toml"))


def run_check(args: argparse.Namespace) -> int:
    from firmware.config import load_table_config, read_toml
    from firmware.faults import ConfigError
    from firmware.reader.registry import load_table_registry
    from firmware.rules.config import load_ruleset_file
    from firmware.rules.registry import from_config

    files = args.files or folder_files(args.config_dir)
    bad = 0
    for path in files:
        try:
            if "rules" in read_toml(path):
                rs = load_ruleset_file(path)
                try:
                    from_config(rs)                    # (the family checks what it needs of the file)
                except ValueError as exc:
                    raise ConfigError(f"{path}: {exc}") from None
                print(_("%(file)s: ok (rule set %(rules)s, %(tiles)s tiles)")
                      % {"file": path, "rules": rs.rules.name, "tiles": rs.rules.tile_set})
            else:
                cfg = load_table_config(path)
                if cfg.fleet is not None:
                    _check_fleet_files(cfg)
                registry = load_table_registry(cfg) if cfg.reader.registry else None
                sets = (_(", tile registry %(sets)s") % {"sets": "/".join(registry.sets)} if registry
                        else _(", no tile registry"))
                if registry and registry.unenrolled:
                    sets += _(" (%(sets)s not enrolled: walls counted, not verified)") % {
                        "sets": ", ".join(registry.unenrolled)}
                if args.rules:
                    from firmware.rules.config import table_conflicts
                    from firmware.rules.registry import load_ruleset
                    conflicts = table_conflicts(load_ruleset(args.rules), cfg.table.tile_set, str(path))
                    if conflicts:
                        raise ConfigError("\n".join(conflicts))
                print(_("%(file)s: ok (%(table)s, %(tiles)s tiles, %(pins)s pins%(sets)s)")
                      % {"file": path, "table": cfg.table.name, "tiles": cfg.table.tile_set,
                         "pins": len(cfg.all_pins()), "sets": sets})
        except ConfigError as exc:
            bad += 1
            print(said(exc), file=sys.stderr)
    return 1 if bad else 0


def _check_fleet_files(cfg) -> None:
    """The [fleet] section's files as the link will need them (ConfigError naming file, table and key)."""
    from firmware.faults import ConfigError
    from firmware.fleet.table_files import problem_lines
    from firmware.root.host import wall_clock_s

    problems = problem_lines(cfg, wall_clock_s())
    if problems:
        raise ConfigError("\n".join(problems))
