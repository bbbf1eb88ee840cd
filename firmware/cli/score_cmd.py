"""``mjtable score [--rules R] [--jobs N] [FILE|-]``: score hands in the JSON-lines case format (one case per line)."""

# One strict-JSON answer per non-blank line, in order; a line that cannot be read or is not a valid case
# gets an ``error`` answer naming the problem, and scoring goes on.  The input is read as bytes (lines of
# at most 64 KiB, decoded one by one) and the output written as UTF-8.  Exit status: 0 when every line was
# read as a JSON object (some may be invalid cases or not wins), 1 when some line could not be read, 2 when
# the input cannot be opened or is one JSON document rather than JSON lines.

from __future__ import annotations

import argparse
import gc
import io
import sys
from pathlib import Path
from typing import TextIO

from firmware.cli.arg_types import add_rules_option, count
from firmware.cli.words import _, ngettext


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("score", help=_("score hands given as JSON lines"),
                            description=_("Score hands given as JSON lines (one case per line)."),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=_("examples:\n  mjtable score tests/data/mcr-random.jsonl\n"
                                     "  echo '{\"id\": 1, \"rules\": \"mcr\", \"hand\": \"56s678pWW\", \"melds\": "
                                     "[{\"kind\": \"chow\", \"tiles\": \"123m\", \"from\": \"left\"}, "
                                     "{\"kind\": \"chow\", \"tiles\": \"345m\", \"from\": \"left\"}], "
                                     "\"win_tile\": \"7s\", \"seat_wind\": \"S\", \"round_wind\": \"E\", "
                                     "\"discarder\": \"E\"}' | mjtable score"))
    add_rules_option(parser, _("rule set for cases without a 'rules' field (default mcr)"), default=None)
    parser.add_argument("input", nargs="?", default="-",
                        help=_("JSON-lines file (one case per line, at most 64 KiB each), or - for standard input "
                               "(default); exit status 0 when every line was read, 1 when some line could not be "
                               "read, 2 when the input cannot be opened or is one JSON document"))
    parser.add_argument("--jobs", type=_jobs, default="auto", metavar="N|auto",
                        help=_("worker processes that answer a file's lines (the answers stay in the input's "
                               "order); auto (default): one per CPU, at most 4, for a file of 1 MiB or more, "
                               "else one; standard input and pipes are answered in one process"))
    parser.set_defaults(func=run)


def _jobs(text: str) -> int | str:
    if text == "auto":
        return text
    return count(1, 64)(text)


def run(args: argparse.Namespace) -> int:
    from firmware.cli.score_workers import WorkerAnswers, jobs_for
    from firmware.rules.case_scoring import score_input     # (imported here: ``mjtable --help`` scores nothing)

    if getattr(args, "own_process", False):
        # what is loaded so far (modules, parsers, catalogues) lives as long as the process: the collector, run
        # every few hundred objects a line makes, need not look at it again (some 5% of a long file's time)
        gc.freeze()
    out = _utf8(sys.stdout)
    path = None if args.input == "-" else Path(args.input)
    jobs = jobs_for(path, getattr(args, "jobs", "auto"))
    answers = WorkerAnswers(jobs) if jobs > 1 else None
    if path is None:
        return _told(score_input(getattr(sys.stdin, "buffer", sys.stdin), out, args.rules, answers))
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise ValueError(_("%(file)s: cannot read: %(error)s") % {"file": path, "error": exc.strerror or exc}) from None
    with handle:
        return _told(score_input(handle, out, args.rules, answers))


def _told(summary) -> int:
    """The exit status; when some answer is an error, a line on standard error for the person who ran it (the
    answers themselves, on standard output, are data: their errors stay as the format has them)."""
    if summary.document:
        print("mjtable score: " + _("the input is one JSON document, not JSON lines (one case per line)"),
              file=sys.stderr)
    elif summary.unreadable or summary.invalid:
        counts = {"answered": ngettext("%(n)s line answered", "%(n)s lines answered", summary.answered)
                  % {"n": summary.answered},
                  "unreadable": ngettext("%(n)s could not be read", "%(n)s could not be read", summary.unreadable)
                  % {"n": summary.unreadable},
                  "invalid": ngettext("%(n)s is not a valid case", "%(n)s are not valid cases", summary.invalid)
                  % {"n": summary.invalid}}
        print("mjtable score: " + _("%(answered)s, %(unreadable)s, %(invalid)s (see each answer's error)") % counts,
              file=sys.stderr)
    return summary.exit_status


def _utf8(out: TextIO) -> TextIO:
    """``out`` writing UTF-8 (JSON lines are UTF-8, whatever the locale says)."""
    if isinstance(out, io.TextIOWrapper) and out.encoding.replace("-", "").lower() != "utf8":
        out.reconfigure(encoding="utf-8")
    return out
