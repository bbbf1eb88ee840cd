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

from firmware.faults import ConfigError


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
        raise ValueError("must not be empty (nor only spaces)")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("must not hold control characters (a newline, a tab ...)")
    return value


Text = Annotated[str, AfterValidator(_text)]        # a name, a path, a URL: something there, on one line


def text_of(max_length: int) -> Any:
    """:data:`Text` of at most ``max_length`` characters."""
    return Annotated[str, Field(max_length=max_length), AfterValidator(_text)]


def _format_error(path: Path, err: dict) -> str:
    loc = [str(p) for p in err["loc"] if not str(p).startswith("function-after")]
    msg = err["msg"]
    ctx_err = (err.get("ctx") or {}).get("error")
    value = err.get("input")
    if isinstance(ctx_err, _KeyError):
        loc.append(ctx_err.key)
        msg = str(ctx_err)
        value = value.get(ctx_err.key) if isinstance(value, dict) else None
    elif err["type"] == "string_pattern_mismatch":
        pattern = (err.get("ctx") or {}).get("pattern")
        msg = PATTERN_HINTS.get(pattern, f"does not match the pattern {pattern}")
    elif msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    elif err["type"] == "missing":
        msg = "missing key"
    if len(loc) > 2 and loc[-1] == "[key]":           # a name of a dict's entries ([backend.banks], [reader.registry])
        loc = loc[:-1]
        msg = f"the name {loc.pop()!r}: {msg}"
        value = None
    table = loc[0] if len(loc) > 1 else "(top level)"
    key = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc[1:]).lstrip(".") or loc[0]
    if err["type"] not in ("missing", "extra_forbidden") and value is not None:
        msg += f" (got {value!r})"
    return f"{path}: table [{table}] key '{key}': {msg}"


def read_toml(path: str | Path) -> dict:
    path = Path(path)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a TOML file") from None
    except PermissionError:
        raise ConfigError(f"{path}: not readable (permission denied)") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
