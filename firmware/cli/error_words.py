"""An error from deep in the firmware, said in the command line's language (its parts worded; its detail kept).

The firmware's errors are English (for the log, the fleet, a test); one
that carries its parts, a :class:`~firmware.faults.ConfigError` with its
:class:`~firmware.faults.ConfigProblem` (file, table, key, what), is worded
here in the command line's language around its technical detail (the
validator's or the TOML parser's message, which stays as it is); one made
by :func:`firmware.i18n.worded` (its English template and values: the
fleet's certificates, keys, broker set-up, ids, broker URLs, waves; a
bundle, its signature, a release; what the hall's desk refuses) is its
template translated, and so is a text made by
:func:`firmware.i18n.worded_text` (the operating system's checks).  Any other error is its own message.
"""

from __future__ import annotations

from firmware.cli.words import N_, _
from firmware.faults import ConfigError, ConfigProblem
from firmware.i18n import Phrase

WHOLE_FILE = {
    "no_file": N_("%(file)s: no such file"),
    "folder": N_("%(file)s: is a folder, not a TOML file"),
    "not_readable": N_("%(file)s: not readable (permission denied)"),
    "not_utf8": N_("%(file)s: not valid TOML: not UTF-8 text (%(detail)s)"),
    "not_toml": N_("%(file)s: not valid TOML: %(detail)s"),
}
KEY_PROBLEMS = {"unknown_key": N_("unknown key"), "missing_key": N_("missing key")}
# the validator's (pydantic's) kinds of a wrong value that need no more words than these
KINDS = {"string_type": N_("must be text (in quotes)"), "int_type": N_("must be a whole number"),
         "int_from_float": N_("must be a whole number"), "float_type": N_("must be a number"),
         "bool_type": N_("must be true or false"), "list_type": N_("must be a list [...]"),
         "dict_type": N_("must be a table"), "model_type": N_("must be a table")}


def _detail(problem: ConfigProblem) -> str:
    """The detail of a wrong value: in words where its kind or its message is known, else as the validator wrote
    it (the firmware's own messages are in the catalogue: config_files, config, rules/config)."""
    if problem.kind in KINDS:
        return _(KINDS[problem.kind])
    return _(problem.detail) if problem.detail else problem.detail


def problem_said(problem: ConfigProblem) -> str:
    """One problem of a configuration file in this language (its detail as the validator wrote it)."""
    if problem.table is None:
        if problem.what in WHOLE_FILE:
            return _(WHOLE_FILE[problem.what]) % {"file": problem.file, "detail": problem.detail}
        return str(problem)
    said = _(KEY_PROBLEMS[problem.what]) if problem.what in KEY_PROBLEMS else _detail(problem)
    if problem.got is not None:
        said += _(" (got %(value)s)") % {"value": problem.got}
    words = {"file": problem.file, "table": problem.table, "key": problem.key, "problem": said}
    if problem.table == "(top level)":
        return _("%(file)s: table [(top level)] key '%(key)s': %(problem)s") % words
    return _("%(file)s: table [%(table)s] key '%(key)s': %(problem)s") % words


def said_text(text: str) -> str:
    """A text of the firmware's in this language: one :func:`firmware.i18n.worded_text` made (its template
    translated, its values kept, a ``Phrase`` translated), else the text itself through the catalogue (a constant
    marked ``N_``; any other text is its own)."""
    worded = _parts_said(text)
    if worded is not None:
        return worded
    return _(text) if text else text


def said(exc: BaseException) -> str:
    """An error's message in this language, where its parts are known: a configuration file's problems, or an
    error :func:`firmware.i18n.worded` made (its English template, translated, with its values; a value that is an
    error itself said the same way)."""
    if isinstance(exc, ConfigError) and exc.problems:
        return "\n".join(problem_said(p) for p in exc.problems)
    worded = _parts_said(exc)
    return worded if worded is not None else str(exc)


def _parts_said(thing: object) -> str | None:
    """``thing``'s English template translated with each value said in turn, where it carries them (``worded()``,
    ``worded_text()``); None where it does not; its English where a translation does not fit its values."""
    template, values = getattr(thing, "template", None), getattr(thing, "values", None)
    if not (isinstance(template, str) and isinstance(values, dict)):
        return None
    try:
        return _(template) % {k: _value_said(v) for k, v in values.items()}
    except (KeyError, TypeError, ValueError):
        return str(thing)


def _value_said(value: object) -> object:
    if isinstance(value, BaseException):
        return said(value)
    if isinstance(value, Phrase):
        return _(value)
    if hasattr(value, "template"):
        return said_text(value)          # type: ignore[arg-type]
    return value
