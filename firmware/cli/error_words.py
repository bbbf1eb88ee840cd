"""An error from deep in the firmware, said in the command line's language (its parts worded; its detail kept).

The firmware's errors are English (for the log, the fleet, a test); one
that carries its parts, a :class:`~firmware.faults.ConfigError` with its
:class:`~firmware.faults.ConfigProblem` (file, table, key, what), is worded
here in the command line's language around its technical detail (the
validator's or the TOML parser's message, which stays as it is).  Any
other error is its own message.
"""

from __future__ import annotations

from firmware.cli.words import N_, _
from firmware.faults import ConfigError, ConfigProblem

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


def said(exc: BaseException) -> str:
    """An error's message in this language, where its parts are known (a configuration file's problems)."""
    if isinstance(exc, ConfigError) and exc.problems:
        return "\n".join(problem_said(p) for p in exc.problems)
    return str(exc)
