"""argparse's own words (usage, options, its errors) in the command line's catalogue, and argparse speaking them.

:mod:`argparse` words its headings and refusals with the module-level
``_`` and ``ngettext`` it took from :mod:`gettext` at import (the global
domain, which the table never binds).  The messages a person can meet are
listed here, marked, so that ``make i18n`` extracts them into the ``cli``
catalogue (``N_``, and ``Nn_`` for a plural: ``-k Nn_:1,2``) and they are
translated with the others; a test checks that each is still argparse's
own, word for word, in the Python that runs.  :func:`speaking` points
argparse's two names at the command line's catalogue while a parser is
built and parses (``main``), and puts them back after.  (argparse's errors
of the programmer, a parser built wrong, stay English: no person meets
them.)
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Iterator

from firmware.cli import words
from firmware.i18n import N_


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Marks a plural message for the catalogue (its two English forms)."""
    return singular, plural


MESSAGES = (
    N_("usage: "), N_("positional arguments"), N_("options"), N_("show this help message and exit"),
    N_("argument %(argument_name)s: %(message)s"), N_("%(prog)s: error: %(message)s\n"),
    N_("unrecognized arguments: %s"), N_("not allowed with argument %s"), N_("ignored explicit argument %r"),
    N_("the following arguments are required: %s"), N_("one of the arguments %s is required"),
    N_("expected one argument"), N_("expected at most one argument"), N_("expected at least one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"), N_("unexpected option string: %s"),
    N_("invalid %(type)s value: %(value)r"), N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("can't open '%(filename)s': %(error)s"), N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
)
PLURALS = (Nn_("expected %s argument", "expected %s arguments"),)


@contextmanager
def speaking() -> Iterator[None]:
    """argparse words its headings and errors in the command line's language (its catalogue in use) inside."""
    saved = argparse._, argparse.ngettext
    argparse._, argparse.ngettext = words._, words.ngettext       # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved                       # type: ignore[attr-defined]
