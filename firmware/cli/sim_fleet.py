"""``mjtable sim --fleet N --broker URL``: a simulated parlour of N tables in one process, on a real broker.

Each table is the real controller on its own simulated table, with its own
table database and MQTT client id (``t001`` ...), seeded ``--seed + i``,
playing ``--hands`` hands under ``--rules``; its fleet link publishes to
``--broker`` under ``--site`` exactly as a table would.  The tables' time is
simulated (as fast as possible, or ``--speed X``), the MQTT traffic real
(:mod:`sim.fleet_run`).  At the end it waits up to ``--drain-s`` real
seconds for every outbox to be acknowledged and prints the fleet summary:
hands per table, events written, published and acknowledged, outbox depth,
reconnects.  Exit 1 if a table did not finish or events were left
unacknowledged.
"""

from __future__ import annotations

import argparse
import sys

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
    group.add_argument("--drain-s", type=seconds, default=30.0, metavar="S",
                       help="with --fleet: real seconds to wait at the end for the broker to acknowledge every event "
                            "(default 30)")


def check_fleet_args(args: argparse.Namespace) -> None:
    """One line naming the argument (ValueError: exit 2) for what does not go with ``--fleet``."""
    from firmware.fleet.adapter import parse_broker_url
    from firmware.fleet.topics import check_id

    if args.fleet is None:
        for name in ("broker", "site"):
            if name == "broker" and args.broker is not None or name == "site" and args.site != "sim":
                raise ValueError(f"--{name} goes with --fleet N (a simulated parlour)")
        return
    if args.broker is None:
        raise ValueError("--fleet needs --broker URL (mqtt://HOST:PORT)")
    try:
        broker = parse_broker_url(args.broker)
    except ValueError as exc:
        raise ValueError(f"--broker: {exc}") from None
    if broker.tls:
        raise ValueError("--broker: the simulated tables have no certificates; use a plain mqtt:// listener")
    try:
        check_id(args.site, "--site")
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    for name in NOT_WITH_FLEET:
        value = getattr(args, name, None)
        if value not in (None, False, []):
            raise ValueError(f"--{name.replace('_', '-')} does not go with --fleet")


def run_fleet(args: argparse.Namespace) -> int:
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    from firmware.config import default_table_path, load_table_config
    from sim.fleet_run import FleetSim, summary_lines
    from sim.pacer import Stopwatch

    cfg = load_table_config(args.table or default_table_path())
    watch = Stopwatch()
    fleet = FleetSim(args.fleet, args.broker, args.site, rules=args.rules, hands=args.hands, seed=args.seed,
                     speed=args.speed, cfg=cfg)
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
                for run in fleet.runs:
                    run.settle()
            except KeyboardInterrupt:
                print("stopped by Ctrl-C", file=sys.stderr)
            bar.update(played() - bar.n)
        drained = fleet.drain(args.drain_s)
        wall_s = watch.elapsed_s
        rows = fleet.summary()
    finally:
        fleet.close()
    for line in summary_lines(rows, wall_s, verbose=args.verbose > 0):
        print(line)
    unfinished = [r.table for r in rows if not r.completed]
    if unfinished:
        print(f"mjtable sim: {len(unfinished)} tables did not finish their hands ({', '.join(unfinished[:10])})",
              file=sys.stderr)
    if not drained:
        left = sum(max(0, r.outbox_depth) for r in rows)
        print(f"mjtable sim: {left} events not acknowledged by {args.broker} within {args.drain_s:g} s "
              f"(they wait in the tables' outboxes)", file=sys.stderr)
    return 1 if unfinished or not drained else 0
