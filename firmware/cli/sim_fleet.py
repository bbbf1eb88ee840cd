"""``mjtable sim --fleet N --broker URL``: a simulated parlour of N tables in one process, on a real broker.

Each table is the real controller on its own simulated table, with its own
table database and MQTT client id (``t001`` ...), seeded ``--seed + i``,
playing ``--hands`` hands under ``--rules``; its fleet link publishes to
``--broker`` under ``--site`` exactly as a table would: to a parlour's
broker (``broker-config``) over the tables' TLS listener, each with its own
certificate (``--ca`` the parlour's ``ca.crt``, ``--certs`` a folder with
``t001.crt``, ``t001.key`` ...: the ACL confines each to its own subtree as
it does a table), or to a test broker's anonymous plain listener.  The
tables' time is simulated (as fast as possible, or ``--speed X``), the MQTT
traffic real
(:mod:`sim.fleet_run`).  At the end it waits up to ``--drain-s`` real
seconds for every outbox to be acknowledged and prints the fleet summary:
hands per table, events written, published and acknowledged, outbox depth,
reconnects.  Exit 1 if a table did not finish or events were left
unacknowledged.  A broker that refuses the tables (a listener for
accounts, another site) stops the run at once, said in one line with what
to do.

``--await-assignments``: the tables play the hall's tournament rounds only.
Each waits for its signed assignment on its ``assign`` topic
(:mod:`firmware.game.rounds`), plays each round it is given with the
round's hands, rule set and seats (the simulated players play the seats),
and waits for the next, until SIGINT or SIGTERM ends the run cleanly (the
outboxes drained, the summary printed, exit 0).  A table's wall clock is
the real time while it waits; from the moment a round is assigned it runs
at the simulator's speed (as fast as possible, or ``--speed X``), so a
round's ``ends_at`` of the real time + D is reached after D simulated
seconds of that round (:mod:`sim.fleet_run`).  The tables need the
parlour's command key to check the signatures (``--command-key FILE``: the
public key or HMAC secret, as a table's ``command_key_file``).

``--state-dir DIR``: each table's database kept as ``DIR/t001.db`` ... (its
simulated table in it, as one table's ``--state``) and ``DIR/fleet.json``
naming the fleet; the same command after a stop or a kill at any instant
resumes every table (``--hands`` counting its hands in all, a hand left in
play ended void, a round's game going on, the outboxes sending again what
was not acknowledged under the same message ids).  SIGINT and SIGTERM end
any fleet run cleanly (a second stops the drain; :class:`Signals`).

Faults: ``--inject SPEC`` goes into every table's simulated table (the same
spec, each table at its own time: their seeds differ), ``--inject
tNNN:SPEC`` into table ``tNNN`` alone (``t003:jam:stacker1@hand2``); a
simulated technician acknowledges after ``--auto-ack-s`` as for one table.
``--report FILE`` writes the fleet's JSON report: every table's report of
``mjtable sim --report`` with its link's counters and the faults injected
into it, and the fleet's totals.  A table that ends latched, with chips that
do not add up or a motor that ran under an interlock fails the run (exit
1), as one table's run does.  What does not go with a fleet says why and
what to do instead (:data:`NOT_WITH_FLEET`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from firmware.cli.arg_types import count, seconds
from firmware.cli.words import N_, _, ngettext
from firmware.cli.error_words import said

# what does not go with --fleet, and what to do instead (tNNN plays seed --seed + NNN - 1)
NOT_WITH_FLEET = {
    "one_cycle": N_("a fleet plays hands; one stacking cycle is mjtable sim --one-cycle, one table"),
    "service": N_("a fleet plays hands; service mode is for one table: mjtable sim --service --speed 1"),
    "state": N_("each simulated table has a database of its own: keep them with --state-dir DIR (DIR/t001.db ...; "
                "the same command resumes them), or run one table alone: mjtable sim --seed S --state FILE (table "
                "tNNN plays seed --seed + NNN - 1)"),
    "diag_socket": N_("the technician's socket serves one table; run that table alone: mjtable sim --seed S "
                      "--diag-socket PATH --speed X (table tNNN plays seed --seed + NNN - 1)"),
    "tiles": N_("the rule set decides the tile set (--rules)"),
    "until_s": N_("it goes with --service (one table)"),
    "web": N_("the web page serves one table; watch the parlour with mjtable fleet watch --broker URL --site SITE, "
              "or one table's page alone: mjtable sim --seed S --web PORT --speed X (table tNNN plays seed --seed + "
              "NNN - 1)"),
    "web_users": N_("it goes with --web (one table)"),
}
TABLE_PREFIX = re.compile(r"^(t\d{3,4}):(.+)$")          # --inject t003:jam:stacker1@hand2: table t003 alone


def add_fleet_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(_("a simulated parlour"))
    group.add_argument("--fleet", type=count(1, 1000), metavar="N",
                       help=_("N simulated tables in one process, each its own controller, database and MQTT client, "
                              "publishing to --broker"))
    group.add_argument("--broker", metavar="URL", help=_("with --fleet: the broker, mqtt://HOST:PORT"))
    group.add_argument("--site", default="sim", help=_("with --fleet: the site id of the tables' topics (default sim)"))
    group.add_argument("--ca", type=Path, metavar="FILE",
                       help=_("with --fleet and an mqtts:// --broker: the parlour's ca.crt"))
    group.add_argument("--certs", type=Path, metavar="DIR",
                       help=_("with --fleet and an mqtts:// --broker: the simulated tables' certificates and keys, "
                              "t001.crt, t001.key ... (mjtable fleet certs table t001 t002 ... --out DIR)"))
    group.add_argument("--await-assignments", action="store_true",
                       help=_("with --fleet: each table waits for the hall's signed assignment on its assign topic "
                              "and plays each tournament round it is given, until SIGINT / SIGTERM (--hands does not "
                              "apply)"))
    group.add_argument("--command-key", type=Path, metavar="FILE",
                       help=_("with --fleet: the parlour's command key the tables check commands and assignments with "
                              "(a public key or hmac-sha256:<hex> line, as a table's [fleet] command_key_file)"))
    group.add_argument("--state-dir", type=Path, metavar="DIR",
                       help=_("with --fleet: keep the tables' databases in DIR (t001.db ..., each with its simulated "
                              "table, as one table's --state); the same command resumes them after a stop or a kill "
                              "at any instant, --hands counting each table's hands in all"))
    group.add_argument("--drain-s", type=seconds, default=30.0, metavar="S",
                       help=_("with --fleet: real seconds to wait at the end for the broker to acknowledge every event "
                              "(default 30)"))


def check_fleet_args(args: argparse.Namespace) -> None:
    """One line naming the argument (ValueError: exit 2) for what does not go with ``--fleet``."""
    from firmware.ports.broker import parse_broker_url
    from firmware.fleet.topics import check_id

    if args.fleet is None:
        for flag in ("await_assignments", "command_key", "state_dir"):
            if getattr(args, flag, None) not in (None, False):
                raise ValueError(_("%(option)s goes with --fleet N (a simulated parlour)")
                                 % {"option": "--" + flag.replace("_", "-")})
        for name in ("broker", "site", "ca", "certs"):
            if getattr(args, name) is not None and not (name == "site" and args.site == "sim"):
                raise ValueError(_("%(option)s goes with --fleet N (a simulated parlour)") % {"option": "--" + name})
        return
    if args.broker is None:
        raise ValueError(_("--fleet needs --broker URL (mqtt://HOST:PORT)"))
    try:
        broker = parse_broker_url(args.broker)
    except ValueError as exc:
        raise ValueError(_("--broker: %(problem)s") % {"problem": said(exc)}) from None
    if broker.tls and (args.ca is None or args.certs is None):
        raise ValueError(_("--broker %(broker)s: the simulated tables need --ca FILE (the parlour's ca.crt) and "
                           "--certs DIR (their certificates: %(make)s)")
                         % {"broker": args.broker, "make": make_certs_hint(args.fleet)})
    if not broker.tls and (args.ca is not None or args.certs is not None):
        raise ValueError(_("%(option)s goes with an mqtts:// --broker (the tables' TLS listener)")
                         % {"option": "--ca" if args.ca is not None else "--certs"})
    try:
        check_id(args.site, "--site")
    except ValueError as exc:
        raise ValueError(said(exc)) from None
    if broker.tls:
        _check_certs(args)
    for name, why in NOT_WITH_FLEET.items():
        value = getattr(args, name, None)
        if value not in (None, False, []):
            raise ValueError(_("%(option)s does not go with --fleet: %(why)s")
                             % {"option": "--" + name.replace("_", "-"), "why": _(why)})
    if args.await_assignments and args.command_key is None:
        raise ValueError(_("--await-assignments needs --command-key FILE (the parlour's command key: the tables "
                           "check the assignments' signatures with it)"))
    if args.command_key is not None:
        from firmware.fleet.command_auth import load_verify_keys
        try:
            load_verify_keys(args.command_key)
        except ValueError as exc:
            raise ValueError(_("--command-key: %(problem)s") % {"problem": said(exc)}) from None
    args.fleet_faults = fleet_faults(args.inject, args.fleet, args.hands)
    if getattr(args, "state_dir", None) is not None:
        check_state_dir(args)
    if args.report is not None:
        from firmware.file_checks import check_writable
        check_writable(args.report, "--report")


FLEET_FILE = "fleet.json"       # in --state-dir: what the fleet was started with (the same command resumes it)


def fleet_identity(args: argparse.Namespace) -> dict:
    """What a --state-dir's fleet must keep to be resumed: its tables, their seeds, rules, site and mode."""
    return {"version": 1, "tables": args.fleet, "seed": args.seed, "rules": args.rules, "site": args.site,
            "await_assignments": bool(args.await_assignments)}


def check_state_dir(args: argparse.Namespace) -> None:
    """``--state-dir DIR``: a folder (made if its parent is there) that is new, or the same fleet's, whose table
    databases can each be resumed (one line naming DIR or the file, ValueError: exit 2)."""
    from firmware.root.simulator import check_resume, table_ids
    from firmware.rules.registry import load_ruleset

    folder: Path = args.state_dir
    if folder.exists() and not folder.is_dir():
        raise ValueError(_("--state-dir %(dir)s: not a folder") % {"dir": folder})
    if not folder.exists() and not folder.parent.is_dir():
        raise ValueError(_("--state-dir %(dir)s: its folder %(parent)s does not exist")
                         % {"dir": folder, "parent": folder.parent})
    saved_file = folder / FLEET_FILE
    want = fleet_identity(args)
    if saved_file.exists():
        try:
            saved = json.loads(saved_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(_("--state-dir %(dir)s: %(file)s cannot be read (%(problem)s); give another folder "
                               "to start afresh") % {"dir": folder, "file": saved_file.name, "problem": exc}) from None
        differs = [key for key in want if not isinstance(saved, dict) or saved.get(key) != want[key]]
        if differs:
            was = ", ".join(f"{key} {saved.get(key)!r}" for key in differs) if isinstance(saved, dict) else "?"
            raise ValueError(_("--state-dir %(dir)s keeps a fleet started with %(was)s: run the same command to "
                               "resume it, or give another folder to start afresh") % {"dir": folder, "was": was})
    elif folder.exists() and any(folder.glob("t*.db")):
        raise ValueError(_("--state-dir %(dir)s holds table databases but no %(file)s: give another folder")
                         % {"dir": folder, "file": FLEET_FILE})
    folder.mkdir(exist_ok=True)
    tile_set = load_ruleset(args.rules).tile_set
    for table in table_ids(args.fleet):
        try:
            check_resume(folder / f"{table}.db", args.rules, tile_set)
        except Exception as exc:                  # (a ResumeError names the file and what to do)
            raise ValueError(str(exc).replace("--state ", "--state-dir: ", 1)) from None


def keep_fleet_identity(args: argparse.Namespace) -> None:
    """Write DIR/fleet.json (once, before any table database is made there)."""
    folder: Path = args.state_dir
    folder.mkdir(exist_ok=True)
    saved = folder / FLEET_FILE
    if not saved.exists():
        part = folder / (FLEET_FILE + ".part")
        part.write_text(json.dumps(fleet_identity(args)) + "\n", encoding="utf-8")
        part.replace(saved)


def fleet_faults(specs: list[str], tables: int, hands: int) -> dict[str, list]:
    """Each table's faults from ``--inject``: a SPEC for every table, ``tNNN:SPEC`` for table tNNN alone; each
    checked as for one table (ValueError naming the spec)."""
    from firmware.root.simulator import check_fits_run, parse_fault
    from firmware.root.simulator import table_ids

    ids = table_ids(tables)
    out: dict[str, list] = {table: [] for table in ids}
    for text in specs:
        prefix = TABLE_PREFIX.match(text.strip())
        targets, spec_text = (([prefix.group(1)], prefix.group(2)) if prefix else (ids, text))
        if prefix and prefix.group(1) not in out:
            raise ValueError(ngettext("--inject %(spec)r: no table %(table)s in a fleet of %(tables)s "
                                      "(%(first)s..%(last)s)",
                                      "--inject %(spec)r: no table %(table)s in a fleet of %(tables)s "
                                      "(%(first)s..%(last)s)", tables)
                             % {"spec": text, "table": prefix.group(1), "tables": tables, "first": ids[0],
                                "last": ids[-1]})
        try:
            spec = parse_fault(spec_text)
            check_fits_run([spec], hands)
        except ValueError as exc:
            raise ValueError(_("--inject: %(problem)s") % {"problem": exc}) from None
        for table in targets:
            out[table].append(spec)
    return out


def make_certs_hint(tables: int) -> str:
    return f"mjtable fleet certs table $(seq -f 't%03g' {tables}) --ca parlour/ca --out parlour/sim"


def _check_certs(args: argparse.Namespace) -> None:
    """Every simulated table's certificate and key, as config check checks a table's (the first problem, one
    line naming the argument)."""
    from firmware.fleet.table_files import check_tls_files
    from firmware.root.host import wall_clock_s
    from firmware.root.simulator import table_ids

    for table in table_ids(args.fleet):
        problems = check_tls_files(table, args.ca, args.certs / f"{table}.crt", args.certs / f"{table}.key",
                                   wall_clock_s())
        if problems:
            problem = problems[0]
            option = "--ca" if problem.key == "ca_file" else "--certs"
            hint = _(" (make them: %(make)s)") % {"make": make_certs_hint(args.fleet)} \
                if "cannot be read" in problem.what else ""
            raise ValueError(f"{option}: {problem.path}: {problem.what}{hint}")


def refusal_line(args: argparse.Namespace, table: str, refusal: str) -> str:
    """What to do when the broker refused the simulated tables (``refusal``: the link's)."""
    if refusal.startswith("connect refused"):
        advice = _("that listener does not take tables. A simulated table is known by its certificate, as a "
                   "table is: make them (%(make)s) and use the tables' TLS listener: --broker mqtts://HOST:8883 --ca "
                   "parlour/ca/ca.crt --certs parlour/sim") % {"make": make_certs_hint(args.fleet)}
    else:
        advice = _("its ACL lets a table write only under mj/v1/<its site>/tbl/<its certificate's CN>/: is --site "
                   "%(site)s the broker's site (broker-config --site)?") % {"site": args.site}
    return "mjtable sim: " + _("%(broker)s refused the simulated tables (%(table)s: %(refusal)s): %(advice)s") % {
        "broker": args.broker, "table": table, "refusal": refusal, "advice": advice}


class Signals:
    """SIGINT and SIGTERM counted, from before the tables are built (the first ends the run cleanly: outboxes
    drained, summary printed; a second ends the drain too).  The handler only counts: it takes no lock (the main
    thread may hold any lock when a signal lands) and the driver looks at the count after every slice."""

    def __init__(self) -> None:
        self.count = 0
        self.last: str | None = None
        self._previous: dict = {}

    def __enter__(self) -> "Signals":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._heard)
        return self

    def _heard(self, signum, _frame) -> None:
        import signal

        self.count += 1
        self.last = signal.Signals(signum).name

    def __exit__(self, *_exc) -> None:
        import signal

        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def run_fleet(args: argparse.Namespace) -> int:
    with Signals() as signals:
        return _run_fleet(args, signals)


def _run_fleet(args: argparse.Namespace, signals: Signals) -> int:
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    from firmware.cli.console_log import console_prefix
    from firmware.cli.words import translations
    from firmware.config import default_table_path, load_table_config
    from firmware.root.simulator import FleetSim, fleet_summary_lines as summary_lines
    from firmware.root.simulator import Stopwatch

    cfg = load_table_config(args.table or default_table_path())
    faults = getattr(args, "fleet_faults", None) or fleet_faults(args.inject, args.fleet, args.hands)
    watch = Stopwatch()
    awaiting = bool(getattr(args, "await_assignments", False))
    state_dir = getattr(args, "state_dir", None)
    if state_dir is not None:
        keep_fleet_identity(args)
    fleet = FleetSim(args.fleet, args.broker, args.site, rules=args.rules, hands=args.hands, seed=args.seed,
                     speed=args.speed, cfg=cfg, tls=(args.ca, args.certs) if args.certs is not None else None,
                     faults=faults, auto_ack_s=args.auto_ack_s, await_assignments=awaiting,
                     command_key=getattr(args, "command_key", None), folder=state_dir)
    refused = None
    report = None
    try:
        total = args.fleet * args.hands if not awaiting else None
        with console_prefix(lambda: fleet.current), \
                tqdm(total=total, unit=_("hand"), disable=args.quiet, dynamic_ncols=True, mininterval=0.5,
                     file=sys.stderr) as bar, logging_redirect_tqdm():
            def played() -> int:
                return sum(run.game.hands_recorded for run in fleet.runs if run.game is not None)

            try:
                while fleet.step():
                    done = played()
                    if done > bar.n:
                        bar.update(done - bar.n)
                        bar.set_postfix_str(_("outbox %(depth)s") % {"depth": fleet.outbox_depth()})
                    refused = fleet.refusal()
                    if refused is not None:              # (trying again will not change it: stop, and say so)
                        break
                    if signals.count:
                        print(_("stopped by %(signal)s: %(what)s; waiting up to %(seconds)s s for the broker to "
                                "acknowledge their events (again: stop waiting)")
                              % {"signal": signals.last, "seconds": f"{args.drain_s:g}",
                                 "what": _("the tables wait for no more rounds") if awaiting
                                 else _("the tables play no more")}, file=sys.stderr)
                        break
                else:
                    for run in fleet.runs:
                        run.settle()
            except KeyboardInterrupt:                    # (the handlers were not ours: not the main thread)
                print(_("stopped by Ctrl-C"), file=sys.stderr)
            bar.update(played() - bar.n)
        stopped = signals.count
        drained = fleet.drain(args.drain_s, give_up=lambda: signals.count > stopped) \
            if refused is None else False
        refused = refused or fleet.refusal()
        wall_s = watch.elapsed_s
        rows = fleet.summary()
        report = fleet.report(wall_s, faults, broker=args.broker, site=args.site, drained=drained)
    finally:
        fleet.close()
    if args.report is not None and report is not None:
        args.report.write_text(json.dumps(report, indent=2, default=str, ensure_ascii=False) + "\n")
    for line in summary_lines(rows, wall_s, verbose=args.verbose > 0, tr=translations()):
        print(line)
    if refused is not None:
        print(refusal_line(args, *refused), file=sys.stderr)
        return 1
    unfinished = [r.table for r in rows if not r.completed]
    if unfinished:
        print("mjtable sim: " + ngettext("%(count)s table did not finish its hands (%(tables)s)",
                                         "%(count)s tables did not finish their hands (%(tables)s)", len(unfinished))
              % {"count": len(unfinished), "tables": ", ".join(unfinished[:10])}, file=sys.stderr)
    if not drained:
        left = sum(max(0, r.outbox_depth) for r in rows)
        print("mjtable sim: " + ngettext("%(count)s event not acknowledged by %(broker)s within %(seconds)s s (it "
                                         "waits in its table's outbox)",
                                         "%(count)s events not acknowledged by %(broker)s within %(seconds)s s (they "
                                         "wait in the tables' outboxes)", left)
              % {"count": left, "broker": args.broker, "seconds": f"{args.drain_s:g}"}, file=sys.stderr)
    broken = [r for r in rows if r.latched or not r.chips_conserved or r.motor_under_interlock]
    for r in broken[:10]:
        why = ", ".join(w for w, bad in ((_("ended latched"), r.latched),
                                        (_("INVARIANT BROKEN: the stored payments and chips do not add up"),
                                         not r.chips_conserved),
                                        (_("INVARIANT BROKEN: a motor ran while an interlock was active"),
                                         r.motor_under_interlock)) if bad)
        print("mjtable sim: " + _("table %(table)s: %(why)s") % {"table": r.table, "why": why}, file=sys.stderr)
    return 1 if unfinished or not drained or broken else 0
