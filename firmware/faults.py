"""The fault-code registry: every code the table can show, its tier, text and hint.

Codes are stable: they blink on the dealer lamps, appear in ``mjtable diag``,
in the log and in reports.  A code has a tier, and this table is the only
place that decides it: *recoverable* faults are reported and the table goes
on (or retries); *hold* faults stop every motor until the players act (take
the key off, close the lid, add a tile) and press a lift key; *latched*
faults drive every output to its safe value and wait for a technician's
acknowledge.  A fault leaves the part that found it through one
:class:`FaultReporter`: a direct call to the controller's fault policy, then
the event bus for observers.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from firmware.events import EventBus

log = logging.getLogger(__name__)


class FaultTier(enum.Enum):
    RECOVERABLE = "recoverable"     # reported; the table goes on (or retries by itself)
    HOLD = "hold"                   # recoverable by the players: every motor stops until they act and press a lift key
    LATCHED = "latched"             # every output safe until a technician acknowledges

    @property
    def stops_table(self) -> bool:
        return self is not FaultTier.RECOVERABLE


@dataclass(frozen=True)
class FaultInfo:
    code: str
    tier: FaultTier
    text: str
    hint: str


def _side(base: int, tier: FaultTier, text: str, hint: str) -> dict[str, FaultInfo]:
    return {
        f"E{base + s + 1}": FaultInfo(f"E{base + s + 1}", tier, text.format(side=s), hint.format(side=s))
        for s in range(4)
    }


R, H, L = FaultTier.RECOVERABLE, FaultTier.HOLD, FaultTier.LATCHED

_TABLE: dict[str, FaultInfo] = {
    "E01": FaultInfo("E01", L, "supply out of range / brown-out",
                     "Check the 24 V supply and its connector; the supply-good input dropped. The fault cannot be "
                     "acknowledged while the input still reads low."),
    "E02": FaultInfo("E02", H, "reset key pressed (all stopped)",
                     "Release the reset key, then press a lift key to resume; nothing is broken."),
    "E03": FaultInfo("E03", L, "configuration invalid",
                     "Run 'mjtable config check --rules RULES' and fix the file, table and key it names "
                     "(the fault's detail names them too)."),
    "E04": FaultInfo("E04", H, "lid open while motors could run",
                     "Close the service lid, then press a lift key to resume (closing the lid never restarts a motor "
                     "by itself)."),
    "E05": FaultInfo("E05", H, "panel key held too long (stuck)",
                     "Free the key named in the fault (stuck, or something resting on it); it is ignored until it "
                     "comes up, then a lift key resumes. Replace the key if it sticks again."),
    "E10": FaultInfo("E10", L, "centre lift: up sensor not reached",
                     "Look for tiles under the centre island; check the up sensor and the lift motor."),
    "E11": FaultInfo("E11", L, "centre lift: down sensor not reached",
                     "Look for a tile caught at the drop hole; check the down sensor and the lift motor."),
    "E12": FaultInfo("E12", L, "centre lift: up and down sensors both active",
                     "One of the two centre sensors is stuck or shorted; test them with 'mjtable diag sensors'."),
    "E60": FaultInfo("E60", L, "turntable / ring stall",
                     "Turn the disk by hand: a tile wedged under the ring or a slipping belt stops it."),
    "E61": FaultInfo("E61", R, "stacking too slow (over the cycle limit)",
                     "Tiles feed slowly: clean the magnet ring and the feed ramps; learn nominal times again."),
    "E62": FaultInfo("E62", H, "tiles missing: the set ran out before the walls were complete",
                     "Count the set; add the missing tile (both lift keys pause the table for it)."),
    "E63": FaultInfo("E63", H, "too many tiles: a side over its target",
                     "Remove the extra tile from the set; check the side's tile counter optic."),
    "E70": FaultInfo("E70", R, "dice motor or dice sensor fault",
                     "Check the dice dome for an obstruction and the dice motor relay."),
    "E80": FaultInfo("E80", R, "RFID reader not answering / link lost",
                     "Check the reader board's cable and power; 'mjtable diag reader ping'."),
    "E81": FaultInfo("E81", R, "RFID antenna fault",
                     "Check the antenna cable of the side named; 'mjtable diag reader antennas'."),
    "E82": FaultInfo("E82", R, "tile set mismatch: duplicate, unknown or foreign tile, or wrong faces",
                     "Remove the tile named; re-enroll the set if tiles were replaced."),
    "E83": FaultInfo("E83", R, "wall read incomplete (tiles counted but not read)",
                     "Likely causes, in order: a tile passed its antenna before the reader streamed (the first "
                     "tile of a side, after a reader restart or reconnect mid-cycle: nothing to repair if it "
                     "does not recur); the head's antenna (the same side again: 'mjtable diag reader' checks the "
                     "antennas; look at the tag's seat in the tile); the reader cable (tag events lost in the "
                     "detail, CRC errors and drops in 'mjtable diag counters': reseat or replace the cable)."),
    "E84": FaultInfo("E84", H, "tile reader not streaming: stacking waits (a wall not read is never dealt)",
                     "The reader's link is down (E80) or a head antenna is faulty (E81): check the reader board's "
                     "cable and power ('mjtable diag reader ping', 'mjtable diag reader antennas'), then press a "
                     "lift key; the set is stacked as soon as the reader streams."),
    "E90": FaultInfo("E90", L, "over-temperature / motor duty protection",
                     "Let the table cool; a motor ran longer than its duty limit allows."),
    "E98": FaultInfo("E98", L, "table database unavailable (a write failed, or an unreadable database was moved "
                                "aside)",
                     "The SD card or its file system failed (the SQLite error is in the detail), or the database "
                     "could not be read and was moved aside (the detail names both files): check the card ('dmesg', "
                     "'df') and replace it if this comes back; send a moved file with the log. After a move the "
                     "table goes on from a fresh database once acknowledged; if no database could be opened at "
                     "all, restart the table once the card is fixed."),
    "E99": FaultInfo("E99", L, "controller software error",
                     "A bug in the controller, not a hardware fault: send the log ('journalctl -u mjtable', it has "
                     "the traceback) to the firmware team, then acknowledge; the table re-homes and carries on."),
}
_TABLE.update(_side(20, L, "wall lift side {side}: home not reached, or switch stuck",
                    "Check side {side}'s wall lift cam for a tile and its home switch."))
_TABLE.update(_side(30, L, "stacking head side {side}: cam home not reached (jam)",
                    "Clear tiles jammed in side {side}'s stacking head; check its cam home interrupter."))
_TABLE.update(_side(40, R, "side {side} starved: no tile while others progress",
                    "Side {side}'s feed ramp is blocked or its gate does not open."))
_TABLE.update(_side(50, L, "side {side} feed-full sensor stuck",
                    "Clean or replace side {side}'s feed-full sensor; check for a tile stuck in front of it. "
                    "If the track is full of tiles, its tile counter (tile_in) missed them: clean or replace "
                    "it and put those tiles back on the disk."))


class FaultCode(str, enum.Enum):
    """Every fault code of the table, by its panel code."""

    E01 = "E01"; E02 = "E02"; E03 = "E03"; E04 = "E04"; E05 = "E05"  # noqa: E702
    E10 = "E10"; E11 = "E11"; E12 = "E12"  # noqa: E702
    E21 = "E21"; E22 = "E22"; E23 = "E23"; E24 = "E24"  # noqa: E702
    E31 = "E31"; E32 = "E32"; E33 = "E33"; E34 = "E34"  # noqa: E702
    E41 = "E41"; E42 = "E42"; E43 = "E43"; E44 = "E44"  # noqa: E702
    E51 = "E51"; E52 = "E52"; E53 = "E53"; E54 = "E54"  # noqa: E702
    E60 = "E60"; E61 = "E61"; E62 = "E62"; E63 = "E63"  # noqa: E702
    E70 = "E70"
    E80 = "E80"; E81 = "E81"; E82 = "E82"; E83 = "E83"; E84 = "E84"  # noqa: E702
    E90 = "E90"
    E98 = "E98"; E99 = "E99"  # noqa: E702

    @property
    def info(self) -> FaultInfo:
        return _TABLE[self.value]

    @property
    def tier(self) -> FaultTier:
        return self.info.tier

    @property
    def text(self) -> str:
        return self.info.text

    @property
    def hint(self) -> str:
        return self.info.hint

    @property
    def number(self) -> int:
        """The two digits the dealer lamps blink."""
        return int(self.value[1:])

    @classmethod
    def wall_lift(cls, side: int) -> "FaultCode":
        return cls(f"E{21 + side}")

    @classmethod
    def stacker(cls, side: int) -> "FaultCode":
        return cls(f"E{31 + side}")

    @classmethod
    def starved(cls, side: int) -> "FaultCode":
        return cls(f"E{41 + side}")

    @classmethod
    def feed_full_stuck(cls, side: int) -> "FaultCode":
        return cls(f"E{51 + side}")


@dataclass(frozen=True)
class Fault:
    """One occurrence of a fault: the code, when, and what the mechanism saw."""

    code: FaultCode
    at_s: float
    source: str
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def tier(self) -> FaultTier:
        return self.code.tier

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.detail.items())
        return f"{self.code.value} {self.code.text} [{self.source}{': ' + extra if extra else ''}]"


FaultHandler = Callable[[Fault], None]


class FaultReporter:
    """The one way out for a fault: a direct call to whoever keeps the table safe, then the bus.

    The handler (the controller's fault policy) changes the state, the outputs
    and the lamps and persists the fault before :meth:`report` returns;
    observers (the log, reports, diagnostics, telemetry) hear of it on the bus
    afterwards and nothing on the safety path waits for them.  Without a
    handler (mechanisms on a test bench) the fault is only logged and
    published.
    """

    def __init__(self, bus: "EventBus") -> None:
        self.bus = bus
        self._handler: FaultHandler | None = None

    def attach(self, handler: FaultHandler) -> None:
        self._handler = handler

    def report(self, fault: Fault) -> None:
        level = logging.WARNING if fault.tier is FaultTier.RECOVERABLE else logging.ERROR
        log.log(level, "%s (%s) hint: %s", fault, fault.tier.value, fault.code.hint)
        if self._handler is not None:
            self._handler(fault)
        self.bus.publish("fault", fault=fault)


class TableError(Exception):
    """Root of the firmware's exceptions; carries a fault code when it has one."""

    def __init__(self, message: str, code: FaultCode | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ConfigProblem:
    """One problem of a configuration file, in parts a caller words in its own language: the file, the table and
    the key it is about (None for the whole file), what is wrong as a code, and the technical detail (English: the
    validator's or the TOML parser's message) with the value found.

    ``what``: ``unknown_key``, ``missing_key``, ``invalid`` (``detail`` says how), or for the whole file
    ``no_file``, ``folder``, ``not_readable``, ``not_utf8``, ``not_toml`` (``detail``: the parser's words).
    """

    file: str
    what: str
    table: str | None = None
    key: str | None = None
    detail: str = ""
    got: str | None = None              # the value found, as Python writes it (repr), when it says something
    kind: str = ""                      # the validator's code of the detail (pydantic's error type), if it has one

    WHOLE_FILE = {"no_file": "no such file", "folder": "is a folder, not a TOML file",
                  "not_readable": "not readable (permission denied)", "not_utf8": "not valid TOML: not UTF-8 text",
                  "not_toml": "not valid TOML"}

    def __str__(self) -> str:
        """In English: ``FILE: table [TABLE] key 'KEY': problem (got VALUE)``, or ``FILE: problem``."""
        if self.table is None:
            said = self.WHOLE_FILE.get(self.what, self.what)
            if self.what == "not_utf8":
                return f"{self.file}: {said} ({self.detail})"
            return f"{self.file}: {said}" + (f": {self.detail}" if self.detail else "")
        said = {"unknown_key": "unknown key", "missing_key": "missing key"}.get(self.what, self.detail)
        got = f" (got {self.got})" if self.got is not None else ""
        return f"{self.file}: table [{self.table}] key '{self.key}': {said}{got}"


class ConfigError(TableError, ValueError):
    """A configuration file is invalid; the message names file, table and key (in English; ``problems``: the same
    in parts, when the error has them, for a caller to word in its language)."""

    def __init__(self, message: str | None = None, problems: tuple[ConfigProblem, ...] = ()) -> None:
        super().__init__(message if message is not None else "\n".join(map(str, problems)), FaultCode.E03)
        self.problems = tuple(problems)


def registry() -> list[FaultInfo]:
    """Every fault, in code order (for documentation and ``diag faults``)."""
    return [_TABLE[c.value] for c in FaultCode]
