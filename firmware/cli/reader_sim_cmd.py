"""``mjtable reader-sim``: the simulated tile reader board on a pseudo-terminal, in real time.

For technicians training on ``mjtable diag`` and for testing the service
against a board without hardware: it prints the port path and serves until
Ctrl-C (or ``--seconds``).
"""

from __future__ import annotations

import argparse
from firmware.cli.arg_types import count, probability, seconds
from firmware.cli.words import _


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("reader-sim", help=_("serve a simulated reader board on a pseudo-terminal"),
                            description=_("Serve the simulated tile reader board on a pseudo-terminal."),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=_("example:\n  mjtable reader-sim --feed-set A --antenna 0 &\n"
                                     "  mjtable diag --port /dev/pts/5 enroll --set A --antenna 0 --out a.csv"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--noise", type=probability, default=0.0, help=_("probability that a byte is corrupted"))
    parser.add_argument("--drop", type=probability, default=0.0, help=_("probability that a board frame is lost"))
    parser.add_argument("--faulty-antenna", type=int, action="append", default=[], choices=range(8))
    parser.add_argument("--feed-set", choices=("A", "B"), help=_("pass the simulated set's tiles over --antenna"))
    parser.add_argument("--antenna", type=int, default=0, choices=range(8))
    parser.add_argument("--interval-s", type=seconds, default=0.5, help=_("time between fed tiles"))
    parser.add_argument("--pad-tiles", type=count(0, 14), default=14,
                        help=_("tiles lying on each seat pad (inventory)"))
    parser.add_argument("--seconds", type=seconds, help=_("stop after this long (default: until Ctrl-C)"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from firmware.root.host import real_loop
    from firmware.root.simulator import PtyReader
    from firmware.root.simulator import generated_set

    loop = real_loop()
    server = PtyReader(loop, args.seed, args.noise, args.drop, tuple(args.faulty_antenna))
    set_a = [uid for uid, _ in generated_set("A")]
    for pad in range(4):
        server.pads[4 + pad] = set_a[pad * args.pad_tiles:(pad + 1) * args.pad_tiles]
    if args.feed_set:
        server.feed(args.antenna, [uid for uid, _ in generated_set(args.feed_set)], args.interval_s)
    print(_("simulated reader board on %(port)s (Ctrl-C to stop)") % {"port": server.path}, flush=True)
    if args.seconds:
        loop.call_later(args.seconds, loop.stop)
    try:
        loop.run_forever()
    finally:
        server.close()
    return 0
