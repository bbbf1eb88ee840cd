"""``mjtable score [--rules R] [FILE|-]``: score hands in the JSON-lines case format.

One result line per case line, in order; a line that cannot be read gets an
``error`` result naming the problem and scoring goes on.  The exit status is
0 when every line was read, 2 when the input itself cannot be opened.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.rules.names import RULE_NAMES


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("score", help="score hands given as JSON lines",
                            description="Score hands given as JSON lines (one case per line).",
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog="examples:\n  mjtable score tests/data/mcr-random.jsonl\n"
                                   "  echo '{\"id\": 1, \"rules\": \"mcr\", \"hand\": \"56s678pWW\", \"melds\": "
                                   "[{\"kind\": \"chow\", \"tiles\": \"123m\", \"from\": \"left\"}, "
                                   "{\"kind\": \"chow\", \"tiles\": \"345m\", \"from\": \"left\"}], "
                                   "\"win_tile\": \"7s\", \"seat_wind\": \"S\", \"round_wind\": \"E\", "
                                   "\"discarder\": \"E\"}' | mjtable score")
    parser.add_argument("--rules", choices=RULE_NAMES,
                        help="rule set for cases without a 'rules' field (default mcr)")
    parser.add_argument("input", nargs="?", default="-", help="JSON-lines file, or - for standard input (default)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from firmware.rules.case_scoring import score_stream     # (imported here: ``mjtable --help`` scores nothing)

    if args.input == "-":
        score_stream(sys.stdin, sys.stdout, args.rules)
        return 0
    path = Path(args.input)
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with handle:
        score_stream(handle, sys.stdout, args.rules)
    return 0
