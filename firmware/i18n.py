"""The table's languages, neutral: which locale a language tag or the environment asks for, and a compiled catalogue.

The table speaks Simplified Chinese (``zh_CN``) and English (``en``).  Its
messages are English in the code, marked for the catalogue (``_()``,
``ngettext()``, ``N_()`` where a message is kept in a table or a code and
translated where it is shown); Babel extracts them (``make i18n``) into two
domains: ``messages`` (the web page: ``firmware/web/locale``, ``babel.cfg``)
and ``cli`` (the command line: ``firmware/cli/locale``, ``babel-cli.cfg``).
The table reads the compiled ``.mo`` with the standard library's
:mod:`gettext` (Babel is a tool of the build, not a dependency of the
table).  Nothing here keeps a current language: each caller (a web request,
the command line's process) chooses its own and asks for its catalogue.  An
error the firmware raises deep down may carry its words in parts
(:func:`worded`: its English template and values), so that the caller says
it in its own language.
"""

from __future__ import annotations

import gettext
import importlib
import logging
import sys
from pathlib import Path
from typing import Any, Mapping, TypeVar

log = logging.getLogger(__name__)

LOCALES = ("zh_CN", "en")
ENGLISH = "en"
# the environment's variables that name a language, in the order gettext reads them (the first set decides)
ENVIRONMENT = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


E = TypeVar("E", bound=BaseException)


def N_(message: str) -> str:
    """Marks a message for the catalogue; translated where it is shown."""
    return message


class Phrase(str):
    """A value of a :func:`worded` error that is words itself (an id's name: site, table id): translated where the
    error is said; mark its English with ``N_`` where it is written."""


def worded(kind: type[E], template: str, /, **values: Any) -> E:
    """An error of ``kind`` whose message is ``template`` (English, a ``%(name)s`` for each value) with ``values``:
    its str() is the English (the log's, a test's); it keeps ``template`` and ``values``, so that a caller with a
    catalogue says it in its language (the command line: ``firmware.cli.error_words``).  ``make i18n`` extracts
    the template where it is written (``-k worded:2``)."""
    exc = kind(template % values)
    exc.template, exc.values = template, values           # type: ignore[attr-defined]
    return exc


class WordedText(str):
    """Text made by :func:`worded_text`: its str is the English; it keeps ``template`` and ``values``."""

    template: str
    values: dict[str, Any]


def worded_text(template: str, /, **values: Any) -> WordedText:
    """Text (not an error: a check's detail, its fix) whose English is ``template`` with ``values``, kept in parts
    as :func:`worded` keeps them, so that the command line says it in its language (``said_text``).  ``make i18n``
    extracts the template (``-k worded_text``)."""
    text = WordedText(template % values)
    text.template, text.values = template, values
    return text


def reworded(kind: type[E], exc: BaseException) -> E:
    """An error of ``kind`` saying what ``exc`` says, its parts kept where :func:`worded` made it."""
    out = kind(str(exc))
    template, values = getattr(exc, "template", None), getattr(exc, "values", None)
    if isinstance(template, str) and isinstance(values, dict):
        out.template, out.values = template, values       # type: ignore[attr-defined]
    return out


def text_of(exc: BaseException) -> str:
    """An error's message as text (a reason a caller returns rather than raises): its parts kept (a
    :class:`WordedText`) where :func:`worded` made it, else its English."""
    template, values = getattr(exc, "template", None), getattr(exc, "values", None)
    if not (isinstance(template, str) and isinstance(values, dict)):
        return str(exc)
    text = WordedText(str(exc))
    text.template, text.values = template, values
    return text


def locale_of_tag(tag: str | None) -> str | None:
    """The locale a language tag asks for (``zh-CN``, ``zh_TW.UTF-8``, ``en-GB``: any zh is Chinese, the table's
    characters are simplified; any en is English), or None for any other language."""
    primary = (tag or "").strip().lower().replace("_", "-").split("-")[0].split(".")[0].split("@")[0]
    if primary == "zh":
        return "zh_CN"
    if primary == "en":
        return "en"
    return None


def locale_of_environment(environ: Mapping[str, str]) -> str:
    """The locale the environment asks for: the first of LANGUAGE (its first entry), LC_ALL, LC_MESSAGES, LANG that
    is set; zh* is Chinese, anything else (C, POSIX, another language, nothing) English."""
    for name in ENVIRONMENT:
        value = (environ.get(name) or "").strip()
        if value:
            return locale_of_tag(value.split(":")[0]) or ENGLISH
    return ENGLISH


def catalogue(package: str, domain: str, locale: str) -> gettext.NullTranslations:
    """The compiled catalogue ``domain`` of ``locale`` in ``package``'s ``locale`` folder, read by :mod:`gettext`
    (a copy of its own: a caller may chain a fallback to it).  English is the code's own, so a missing catalogue is
    English, said in the log."""
    module = sys.modules.get(package) or importlib.import_module(package)
    # (the catalogues are files beside the package's modules, as pip and a checkout lay them out; a package run
    # from a zip has none to read here: English, said in the log)
    folder = Path(module.__file__ or "").parent / "locale"
    found = gettext.translation(domain, str(folder), languages=[locale], fallback=True)
    if not isinstance(found, gettext.GNUTranslations) and locale != ENGLISH:
        log.warning("no compiled catalogue %s for %s in %s: English is shown", domain, locale, package)
    return found
