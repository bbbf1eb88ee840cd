"""Argument types of the command line: numbers that are finite and in range, checked before any work.

argparse turns a ``ValueError`` (or ``ArgumentTypeError``) raised here into
``mjtable sim: argument --hands: ...``, one line naming the argument.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable

from firmware.cli.error_words import said
from firmware.cli.words import _


MAX_SECONDS = 7 * 86_400.0       # a week: longer than any run or service test a user means


def seconds(text: str) -> float:
    """A duration: a finite number of seconds above 0 (at most a week)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("%(text)r is not a number of seconds") % {"text": text}) from None
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(_("%(text)r: seconds above 0 and at most %(max)s") % {"text": text,
                                                                                           "max": f"{MAX_SECONDS:g}"})
    return value


def seconds_or_zero(text: str) -> float:
    """A duration where 0 means 'not at all'."""
    try:
        if float(text) == 0:
            return 0.0
    except ValueError:
        pass
    return seconds(text)


def probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("%(text)r is not a probability") % {"text": text}) from None
    if not 0.0 <= value <= 1.0:               # (NaN fails this too)
        raise argparse.ArgumentTypeError(_("%(text)r: a probability is between 0 and 1") % {"text": text})
    return value


def count(low: int, high: int) -> Callable[[str], int]:
    """A whole number from ``low`` to ``high``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(_("%(text)r is not a whole number") % {"text": text}) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(_("%(text)s: from %(low)s to %(high)s")
                                             % {"text": text, "low": low, "high": high})
        return value
    parse.__name__ = f"count {low}..{high}"
    return parse


def rule_set(text: str) -> str:
    """A rule set's name, one the registry knows."""
    from firmware.rules.names import rules_name

    try:
        return rules_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(said(exc)) from None


def add_rules_option(parser: argparse.ArgumentParser, help: str, default: str | None = "mcr") -> None:
    """``--rules NAME``: one option for every command, its choices the registry's."""
    from firmware.rules.names import RULE_NAMES

    parser.add_argument("--rules", type=rule_set, default=default, metavar="NAME",
                        help=f"{help}: {', '.join(RULE_NAMES)}"
                        + (_(" (default %(rules)s)") % {"rules": default} if default else ""))
