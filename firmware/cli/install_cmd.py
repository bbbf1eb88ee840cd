"""``mjtable install``: put the controller on a Raspberry Pi OS image (or under a test root).

Lays out, under ``--root`` (``/`` on a table):

* ``opt/mjtable/venv``: a virtualenv with this checkout installed (``.[pi]``), unless ``--no-venv``;
* ``etc/mjtable/``: the configuration (table models, rule sets, tile registries, scenarios), with
  ``tables/table.toml`` the model the service runs;
* ``etc/systemd/system/mjtable.service``: the unit (restart on failure, watchdog);
* ``var/lib/mjtable/``: the table database's folder.

It prints the system steps it leaves to the administrator (user, groups, enabling the unit).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from firmware.rules.names import RULE_NAMES

PROJECT = Path(__file__).resolve().parent.parent.parent


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("install", help="install the service on a Raspberry Pi (or under a test root)",
                            description="Install the controller, its config and its systemd unit.")
    parser.add_argument("--root", type=Path, default=Path("/"), help="install under this root (default /)")
    parser.add_argument("--table", type=Path, help="the table model the service runs (default: four-port double)")
    parser.add_argument("--rules", choices=RULE_NAMES, default="mcr",
                        help="the rule set the service runs (default mcr; it must suit the table's tile set)")
    parser.add_argument("--no-venv", action="store_true", help="do not create the virtualenv (tests, dry runs)")
    parser.add_argument("--force", action="store_true", help="replace an existing configuration")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from firmware.config import config_dir, default_table_path, load_table_config

    root = args.root
    etc = root / "etc" / "mjtable"
    table_src = args.table or default_table_path()
    model = load_table_config(table_src)                      # refuse to install a broken model
    from firmware.rules.ruleset import load_ruleset, table_conflicts
    conflicts = table_conflicts(load_ruleset(args.rules), model.table.tile_set, str(table_src))
    if conflicts:
        raise ValueError("; ".join(conflicts))                 # the service would latch E03 at power-on
    if etc.exists() and not args.force:
        raise ValueError(f"{etc} exists; add --force to replace the configuration")
    if etc.exists():
        shutil.rmtree(etc)
    shutil.copytree(config_dir(), etc, ignore=shutil.ignore_patterns("systemd", "*.tmp"))
    shutil.copyfile(table_src, etc / "tables" / "table.toml")
    installed = load_table_config(etc / "tables" / "table.toml")   # its registry paths must still resolve
    from firmware.reader.registry import load_table_registry
    load_table_registry(installed)
    unit_dir = root / "etc" / "systemd" / "system"
    unit_dir.mkdir(parents=True, exist_ok=True)
    unit = (config_dir() / "systemd" / "mjtable.service").read_text(encoding="utf-8")
    (unit_dir / "mjtable.service").write_text(unit.replace("--rules mcr", f"--rules {args.rules}"), encoding="utf-8")
    (root / "var" / "lib" / "mjtable").mkdir(parents=True, exist_ok=True)
    venv = root / "opt" / "mjtable" / "venv"
    if not args.no_venv:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"{PROJECT}[pi]"],
                       check=True)
    print(f"installed under {root}: config {etc}, unit {unit_dir / 'mjtable.service'}"
          + ("" if args.no_venv else f", virtualenv {venv}"))
    print("system steps left to you (as root):\n"
          "  groupadd --system mjtable-tech      # technicians: may use 'mjtable diag'\n"
          "  useradd --system --groups gpio,dialout,mjtable-tech mjtable\n"
          "  usermod -aG mjtable-tech TECHNICIAN # each technician's login\n"
          "  chown -R mjtable:mjtable /var/lib/mjtable\n"
          "  systemctl daemon-reload && systemctl enable --now mjtable\n"
          "  journalctl -u mjtable -f          # the log, with fault codes")
    return 0
