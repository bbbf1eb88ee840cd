"""What every configuration file shares: strict TOML sections, reading a file, an error naming the bad key.

Table models (:mod:`firmware.config`) and rule sets (:mod:`firmware.rules.config`)
are TOML files validated by pydantic models built on :class:`Section`
(unknown keys, wrong types and missing keys are errors); :func:`_format_error`
turns a validation error into ``FILE: table [SECTION] key 'KEY': problem``.
Kept apart from the table model so that a rule set loads without it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from firmware.faults import ConfigError, ConfigProblem
from firmware.i18n import N_


class _KeyError(ValueError):
    """A cross-field error that names the key it is about."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


PATTERN_HINTS: dict[str, str] = {}     # a string pattern -> what a value must look like (each model adds its own)


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def whole_number_of(*choices: int) -> Any:
    """One of ``choices``, an integer: ``144.0`` (a float) is refused like any other wrong type (pydantic's
    Literal takes 144.0 for 144 even when strict)."""
    def not_a_float(value: Any) -> Any:
        if isinstance(value, float):
            raise ValueError(f"must be {', '.join(map(str, choices[:-1]))} or {choices[-1]}, written as a whole "
                             f"number (no decimal point)")
        return value
    return Annotated[Literal[choices], BeforeValidator(not_a_float)]


def _text(value: str) -> str:
    if not value.strip():
        raise ValueError(N_("must not be empty (nor only spaces)"))
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError(N_("must not hold control characters (a newline, a tab ...)"))
    return value


Text = Annotated[str, AfterValidator(_text)]        # a name, a path, a URL: something there, on one line


def text_of(max_length: int) -> Any:
    """:data:`Text` of at most ``max_length`` characters."""
    return Annotated[str, Field(max_length=max_length), AfterValidator(_text)]


def config_problem(path: Path, err: dict) -> ConfigProblem:
    """One of pydantic's validation errors as the problem of a file: its table, its key, what and how."""
    loc = [str(p) for p in err["loc"] if not str(p).startswith("function-after")]
    msg = err["msg"]
    kind = err["type"]                                # (pydantic's own words: a caller may word the kind)
    ctx_err = (err.get("ctx") or {}).get("error")
    value = err.get("input")
    if isinstance(ctx_err, _KeyError):
        loc.append(ctx_err.key)
        msg, kind = str(ctx_err), ""
        value = value.get(ctx_err.key) if isinstance(value, dict) else None
    elif err["type"] == "string_pattern_mismatch":
        pattern = (err.get("ctx") or {}).get("pattern")
        msg = PATTERN_HINTS.get(pattern, f"does not match the pattern {pattern}")
        kind = "" if pattern in PATTERN_HINTS else kind
    elif msg.startswith("Value error, "):
        msg, kind = msg[len("Value error, "):], ""
    what = {"extra_forbidden": "unknown_key", "missing": "missing_key"}.get(err["type"], "invalid")
    if len(loc) > 2 and loc[-1] == "[key]":           # a name of a dict's entries ([backend.banks], [reader.registry])
        loc = loc[:-1]
        msg, kind = f"the name {loc.pop()!r}: {msg}", ""
        value = None
    table = loc[0] if len(loc) > 1 else "(top level)"
    key = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc[1:]).lstrip(".") or loc[0]
    got = repr(value) if what == "invalid" and value is not None else None
    return ConfigProblem(str(path), what, table, key, msg if what == "invalid" else "", got, kind)


def _format_error(path: Path, err: dict) -> str:
    """``FILE: table [SECTION] key 'KEY': problem``, in English."""
    return str(config_problem(path, err))


def validation_error(path: Path, errors: list[dict]) -> ConfigError:
    """A file's validation errors as one ConfigError (a line each in English; the problems in parts)."""
    return ConfigError(problems=tuple(config_problem(path, e) for e in errors))


def key_error(path: Path, table: str, key: str, detail: str) -> ConfigError:
    """A check across keys (after validation) that names the file, the table and the key."""
    return ConfigError(problems=(ConfigProblem(str(path), "invalid", table, key, detail),))


def read_toml(path: str | Path) -> dict:
    path = Path(path)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(problems=(ConfigProblem(str(path), "no_file"),)) from None
    except IsADirectoryError:
        raise ConfigError(problems=(ConfigProblem(str(path), "folder"),)) from None
    except PermissionError:
        raise ConfigError(problems=(ConfigProblem(str(path), "not_readable"),)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(problems=(ConfigProblem(str(path), "not_utf8", detail=f"{exc.reason} at byte {exc.start}"),
                                    )) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(problems=(ConfigProblem(str(path), "not_toml", detail=str(exc)),)) from None
