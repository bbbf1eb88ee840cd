"""``mjtable run``: the controller on a table (the service's command), or against the simulated table.

The table model of the table's own configuration folder (``/etc/mjtable``,
or ``--config-dir``), the table database, the diagnostics socket; the
service is built and run by :mod:`firmware.root.service`: its pins through
gpiozero (``[backend]``), the reader on its serial URL, the OS CSPRNG for
electronic dice, the real-time loop.  ``--sim`` keeps all of that and puts
the simulated table's models behind the pins and the port (gpiozero mock
pins, ``rfidsim://``): a dry run at real time that stacks, reads, raises and
deals as the table will.  Faults are logged with their code and hint (to
the journal under systemd, else stderr).  Under systemd it reports READY,
STATUS and WATCHDOG; SIGTERM stops every motor and exits.  A table model
with a ``[fleet]`` section also connects its fleet link to the parlour's
broker (``docs/fleet.md``), and with a command key takes a staged update
(``--release-root``, ``/`` by default): the new release installed and
self-tested, the service exits with code 75 once the table is at rest, and
systemd starts it again into the new release.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from firmware.cli.arg_types import add_rules_option, seconds
from firmware.cli.words import _

if TYPE_CHECKING:
    from firmware.root.service import ServiceOptions

log = logging.getLogger("mjtable.run")

DEFAULT_STATE = Path("/var/lib/mjtable/table.db")
DIAG_SOCKET = Path("/run/mjtable/diag.sock")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help=_("run the controller: the service on a table, or --sim for a dry run"),
                            description=_("Run the table controller (the service), on the table or with --sim "
                                          "against the simulated table at real time."),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=_("examples:\n  mjtable run                       # the service: /etc/mjtable, "
                                     "/var/lib/mjtable/table.db\n  mjtable run --sim --seconds 60    "
                                     "# a dry run on a laptop: the simulated table at real time"))
    add_table_options(parser)
    add_rules_option(parser, _("the rule set the table plays"))
    parser.add_argument("--sim", action="store_true",
                        help=_("the simulated table behind the pins and the reader port, at real time (a dry run)"))
    parser.add_argument("--seed", type=int, default=1, help=_("with --sim: the simulated table's seed"))
    parser.add_argument("--seconds", type=seconds, help=_("stop after this long (tests, dry runs)"))
    parser.add_argument("--release-root", type=Path, default=Path("/"),
                        help=_("the install root of the table's releases, for a staged update over the fleet "
                               "(default /: /opt/mjtable, as mjtable install lays it out; 'none': take no update)"))
    parser.add_argument("--diag-socket", type=Path,
                        help=_("the technician's socket (default /run/mjtable/diag.sock, with --sim one in the run's "
                               "own folder; 'none' to disable)"))
    parser.set_defaults(func=run)


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """Where a table's controller finds its model and database (``run`` and ``diag --direct``)."""
    parser.add_argument("--config-dir", type=Path,
                        help=_("the table's configuration folder (default /etc/mjtable, written by mjtable install)"))
    parser.add_argument("--table", type=Path, help=_("a table model (TOML) instead of the folder's tables/table.toml"))
    parser.add_argument("--state", type=Path,
                        help=_("the table database (SQLite; default %(state)s, with --sim a fresh one)")
                        % {"state": DEFAULT_STATE})
    parser.add_argument("--pin-factory", choices=("lgpio", "rpigpio", "mock"),
                        help=_("override the table model's [backend] pin_factory"))


def table_model(args: argparse.Namespace, simulated: bool) -> tuple[Path, Path | None]:
    """The model to run and its configuration folder (:func:`firmware.config_paths.table_model`)."""
    from firmware.config_paths import table_model as chosen

    return chosen(args.table, args.config_dir, simulated)


def diag_model(args: argparse.Namespace) -> Path:
    """The table model a diagnostic uses: the table's own (its folder), or the shipped one for the
    simulated table and for a reader board on a port of this machine."""
    return table_model(args, simulated=bool(args.sim or args.port))[0]


def service_options(args: argparse.Namespace, state: Path, socket: Path | None) -> "ServiceOptions":
    """What ``run`` (and ``diag --direct``, the self-test) asks of the service."""
    from firmware.root.service import ServiceOptions

    simulated = bool(getattr(args, "sim", False))
    model, folder = table_model(args, simulated)
    release_root = getattr(args, "release_root", None)
    return ServiceOptions(model, folder, args.rules, state, simulated, getattr(args, "seed", 1), args.pin_factory,
                          getattr(args, "seconds", None), socket, getattr(args, "own_process", False),
                          None if release_root is None or str(release_root) == "none" else release_root)


def run(args: argparse.Namespace) -> int:
    from firmware.root.service import serve

    with tempfile.TemporaryDirectory(prefix="mjtable-run-") as scratch:
        dry = args.sim and not args.state               # a dry run keeps nothing: its database in a scratch folder
        state = args.state or (Path(scratch) / "table.db" if dry else DEFAULT_STATE)
        socket = args.diag_socket or (Path(scratch) / "diag.sock" if dry else DIAG_SOCKET)
        return serve(service_options(args, state, None if str(socket) == "none" else socket))
