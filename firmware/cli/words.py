"""The command line's language: ``--lang``, else the environment; its messages through the catalogue ``cli``.

``mjtable`` speaks Simplified Chinese or English: ``--lang zh-CN`` or
``--lang en`` (a global option, before the command), else the environment
(LANGUAGE, LC_ALL, LC_MESSAGES, LANG, the first set: zh* is Chinese, any
other English).  Its messages are English in the code, marked with
:func:`_` and :func:`ngettext` (counts take their plural forms there);
Babel extracts them (``make i18n``, ``babel-cli.cfg``) into
``firmware/cli/locale/LANG/LC_MESSAGES/cli.po``, compiled into the ``.mo``
the wheel ships.  What the page's catalogue words already (a fault's text
and hint, a state's name, a seat wind) the command line takes from it: the
page's catalogue is this one's fallback.  A process runs one command, so
the language is the process's, set once by :func:`use` (``main``).  (Two
domains rather than one: the page's catalogue ships with the page, and a
message is translated once, where it is written.)  What a
command writes as data (JSON lines, reports, logs) stays as it is.
"""

from __future__ import annotations

import gettext
import os
from typing import Mapping

from firmware.i18n import ENGLISH, LOCALES, N_, catalogue, locale_of_environment, locale_of_tag

__all__ = ["N_", "_", "ngettext", "state", "tier", "refusal", "use", "choose", "language", "translations"]

_chosen: dict[str, gettext.NullTranslations] = {"tr": gettext.NullTranslations()}


def language(value: str) -> str:
    """``--lang``'s value as a locale (``zh-CN``, ``zh_CN``, ``zh``, ``en``): ValueError for another language."""
    chosen = locale_of_tag(value)
    if chosen is None:
        raise ValueError(_("%(value)r: the table speaks zh-CN or en") % {"value": value})
    return chosen


def choose(lang: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The locale of this run: ``--lang`` (already :func:`language`'s), else the environment's."""
    return lang if lang in LOCALES else locale_of_environment(os.environ if environ is None else environ)


def catalogue_of(locale: str) -> gettext.NullTranslations:
    """The command line's catalogue of ``locale``, falling back to the page's (faults, states, winds)."""
    own = catalogue("firmware.cli", "cli", locale)
    if locale != ENGLISH:
        own.add_fallback(catalogue("firmware.web", "messages", locale))
    return own


def use(locale: str) -> None:
    """This process speaks ``locale`` from now on."""
    _chosen["tr"] = catalogue_of(locale)


def translations() -> gettext.NullTranslations:
    """The catalogue in use (for code outside the command line that words a summary, e.g. the simulator's)."""
    return _chosen["tr"]


def _(message: str) -> str:
    return _chosen["tr"].gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _chosen["tr"].ngettext(singular, plural, n)


def state(name: str) -> str:
    """A controller state in words (the page's names), never its identifier."""
    from firmware.web.i18n import STATES      # (the page's word tables: imported when words are needed)

    return _(STATES[name]) if name in STATES else _("an unknown state")


def tier(name: str) -> str:
    """A fault's tier in words (needs a technician, holds the table, recovers by itself)."""
    from firmware.web.i18n import TIERS

    return _(TIERS.get(name, "fault"))


def refusal(answer: dict) -> str | None:
    """The controller's refusal in an answer (its code, :mod:`firmware.refusals`) in this language, or None."""
    from firmware.refusals import worded

    return worded(answer, _, state)


gettext = _          # (with ngettext, state, tier and refusal: this module is a diagnostics render's Wording)
