"""``mjtable config check [FILE...]``: validate table-model files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.config import config_dir, load_table_config
from firmware.faults import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("config", help="configuration files", description="Check configuration files.")
    csub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    check = csub.add_parser("check", help="validate files (default: every shipped table model)")
    check.add_argument("files", nargs="*", type=Path, help="TOML files to check")
    check.set_defaults(func=run_check)


def shipped_files() -> list[Path]:
    return sorted((config_dir() / "tables").glob("*.toml"))


def run_check(args: argparse.Namespace) -> int:
    files = args.files or shipped_files()
    bad = 0
    for path in files:
        try:
            cfg = load_table_config(path)
        except ConfigError as exc:
            bad += 1
            print(exc, file=sys.stderr)
            continue
        print(f"{path}: ok ({cfg.table.name}, {cfg.table.tile_set} tiles, {len(cfg.all_pins())} pins)")
    return 1 if bad else 0
