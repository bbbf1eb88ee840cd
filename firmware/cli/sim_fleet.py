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
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.cli.arg_types import count, seconds

NOT_WITH_FLEET = ("one_cycle", "service", "state", "diag_socket", "inject", "report", "tiles", "until_s", "web",
                  "web_users")


def add_fleet_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("a simulated parlour")
    group.add_argument("--fleet", type=count(1, 1000), metavar="N",
                       help="N simulated tables in one process, each its own controller, database and MQTT client, "
                            "publishing to --broker")
    group.add_argument("--broker", metavar="URL", help="with --fleet: the broker, mqtt://HOST:PORT")
    group.add_argument("--site", default="sim", help="with --fleet: the site id of the tables' topics (default sim)")
    group.add_argument("--ca", type=Path, metavar="FILE",
                       help="with --fleet and an mqtts:// --broker: the parlour's ca.crt")
    group.add_argument("--certs", type=Path, metavar="DIR",
                       help="with --fleet and an mqtts:// --broker: the simulated tables' certificates and keys, "
                            "t001.crt, t001.key ... (mjtable fleet certs table t001 t002 ... --out DIR)")
    group.add_argument("--drain-s", type=seconds, default=30.0, metavar="S",
                       help="with --fleet: real seconds to wait at the end for the broker to acknowledge every event "
                            "(default 30)")


def check_fleet_args(args: argparse.Namespace) -> None:
    """One line naming the argument (ValueError: exit 2) for what does not go with ``--fleet``."""
    from firmware.fleet.adapter import parse_broker_url
    from firmware.fleet.topics import check_id

    if args.fleet is None:
        for name in ("broker", "site", "ca", "certs"):
            if getattr(args, name) is not None and not (name == "site" and args.site == "sim"):
                raise ValueError(f"--{name} goes with --fleet N (a simulated parlour)")
        return
    if args.broker is None:
        raise ValueError("--fleet needs --broker URL (mqtt://HOST:PORT)")
    try:
        broker = parse_broker_url(args.broker)
    except ValueError as exc:
        raise ValueError(f"--broker: {exc}") from None
    if broker.tls and (args.ca is None or args.certs is None):
        raise ValueError(f"--broker {args.broker}: the simulated tables need --ca FILE (the parlour's ca.crt) and "
                         f"--certs DIR (their certificates: {make_certs_hint(args.fleet)})")
    if not broker.tls and (args.ca is not None or args.certs is not None):
        raise ValueError(f"--{'ca' if args.ca is not None else 'certs'} goes with an mqtts:// --broker (the tables' "
                         f"TLS listener)")
    try:
        check_id(args.site, "--site")
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    if broker.tls:
        _check_certs(args)
    for name in NOT_WITH_FLEET:
        value = getattr(args, name, None)
        if value not in (None, False, []):
            raise ValueError(f"--{name.replace('_', '-')} does not go with --fleet")


def make_certs_hint(tables: int) -> str:
    return f"mjtable fleet certs table $(seq -f 't%03g' {tables}) --ca parlour/ca --out parlour/sim"


def _check_certs(args: argparse.Namespace) -> None:
    """Every simulated table's certificate and key, as config check checks a table's (the first problem, one
    line naming the argument)."""
    from firmware.fleet.table_files import check_tls_files
    from hal.runtime import wall_clock_s
    from sim.fleet_run import table_ids

    for table in table_ids(args.fleet):
        problems = check_tls_files(table, args.ca, args.certs / f"{table}.crt", args.certs / f"{table}.key",
                                   wall_clock_s())
        if problems:
            problem = problems[0]
            option = "--ca" if problem.key == "ca_file" else "--certs"
            hint = f" (make them: {make_certs_hint(args.fleet)})" if "cannot be read" in problem.what else ""
            raise ValueError(f"{option}: {problem.path}: {problem.what}{hint}")


def refusal_line(args: argparse.Namespace, table: str, refusal: str) -> str:
    """What to do when the broker refused the simulated tables (``refusal``: the link's)."""
    if refusal.startswith("connect refused"):
        advice = (f"that listener does not take tables. A simulated table is known by its certificate, as a "
                  f"table is: make them ({make_certs_hint(args.fleet)}) and use the tables' TLS listener: --broker "
                  f"mqtts://HOST:8883 --ca parlour/ca/ca.crt --certs parlour/sim")
    else:
        advice = (f"its ACL lets a table write only under mj/v1/<its site>/tbl/<its certificate's CN>/: is --site "
                  f"{args.site} the broker's site (broker-config --site)?")
    return f"mjtable sim: {args.broker} refused the simulated tables ({table}: {refusal}): {advice}"


def run_fleet(args: argparse.Namespace) -> int:
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    from firmware.config import default_table_path, load_table_config
    from sim.fleet_run import FleetSim, summary_lines
    from sim.pacer import Stopwatch

    cfg = load_table_config(args.table or default_table_path())
    watch = Stopwatch()
    fleet = FleetSim(args.fleet, args.broker, args.site, rules=args.rules, hands=args.hands, seed=args.seed,
                     speed=args.speed, cfg=cfg, tls=(args.ca, args.certs) if args.certs is not None else None)
    refused = None
    try:
        total = args.fleet * args.hands
        with tqdm(total=total, unit="hand", disable=args.quiet, dynamic_ncols=True, mininterval=0.5,
                  file=sys.stderr) as bar, logging_redirect_tqdm():
            def played() -> int:
                return sum(run.game.hands_recorded for run in fleet.runs if run.game is not None)

            try:
                while fleet.step():
                    done = played()
                    if done > bar.n:
                        bar.update(done - bar.n)
                        bar.set_postfix_str(f"outbox {fleet.outbox_depth()}")
                    refused = fleet.refusal()
                    if refused is not None:              # (trying again will not change it: stop, and say so)
                        break
                else:
                    for run in fleet.runs:
                        run.settle()
            except KeyboardInterrupt:
                print("stopped by Ctrl-C", file=sys.stderr)
            bar.update(played() - bar.n)
        drained = fleet.drain(args.drain_s) if refused is None else False
        refused = refused or fleet.refusal()
        wall_s = watch.elapsed_s
        rows = fleet.summary()
    finally:
        fleet.close()
    for line in summary_lines(rows, wall_s, verbose=args.verbose > 0):
        print(line)
    if refused is not None:
        print(refusal_line(args, *refused), file=sys.stderr)
        return 1
    unfinished = [r.table for r in rows if not r.completed]
    if unfinished:
        print(f"mjtable sim: {len(unfinished)} tables did not finish their hands ({', '.join(unfinished[:10])})",
              file=sys.stderr)
    if not drained:
        left = sum(max(0, r.outbox_depth) for r in rows)
        print(f"mjtable sim: {left} events not acknowledged by {args.broker} within {args.drain_s:g} s "
              f"(they wait in the tables' outboxes)", file=sys.stderr)
    return 1 if unfinished or not drained else 0
