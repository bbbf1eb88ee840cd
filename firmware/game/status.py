"""What the table is doing, per component, for everyone who looks: diagnostics, the web page, telemetry.

As Klipper's objects each answer ``get_status()``, the table's parts are
read here, in one place (through the table's session), instead of by
reaching into the bookkeeping, the store and private fields from outside.  Each component is a small dict of
plain JSON values whose keys never change (a field that has nothing to say
is ``None``), so that a subscriber can be sent only the fields that changed
(:mod:`firmware.diagnostics.socket.subscriptions`):

========== ===============================================================
``table``   the state, the fault the table is stopped by, interlocks, what moves
``book``    the hand, the dealer and streak, the round wind, the last dice
``stacking`` the set being stacked, its target and the progress per side
``reader``  the tile reader's line counters
``faults``  the active faults, each with code, tier, text, hint and lamp pattern
``chips``   the scoreboard's chips per side, the rule set, the starting chips
``sensors`` every input by name, now
``deal``    the last deal: hand, dealer, dice and the four starting hands as read
``round``   a tournament round: its assignment, the names by seat, hands, time left, one waiting, a refusal
            (``players``: the names staff set when no round's assignment is shown)
``session`` the table session (开台) staff opened: state, minutes, time left, warning, hands; the names, the
            rule set and the chips staff chose (:mod:`firmware.game.staff`)
========== ===============================================================

Everything is read from memory on the loop's thread: a status never touches
the table database, so it can be asked for a few times a second.  The last
deal is heard on the event bus (one subscription per controller, made on the
first status asked of it).  :func:`live_line` is the line ``mjtable sim
--speed`` shows, from the same status, so the page and the terminal say the
same words.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterable

from firmware.controller.lamps import lamp_pattern
from firmware.controller.states import SetLocation, TableState
from firmware.faults import Fault, FaultCode
from firmware.game.rounds import round_line
from firmware.game.staff import NO_SESSION, session_line

if TYPE_CHECKING:
    from firmware.events import Event
    from firmware.game.session import TableSession

log = logging.getLogger(__name__)

WINDS = "ESWN"


def fault_dict(fault: Fault, tier: str | None = None) -> dict[str, Any]:
    """One fault as a technician reads it: code, tier, text, hint, lamp pattern, where and when."""
    return {"code": fault.code.value, "tier": tier or fault.tier.value, "text": fault.code.text,
            "hint": fault.code.hint, "lamps": lamp_pattern(fault.code), "source": fault.source,
            "at_s": round(fault.at_s, 3), "detail": {k: v for k, v in fault.detail.items()}}


def round_wind(hand: int) -> int:
    """The round wind of a hand number (0..3 = E S W N), as the referee and the simulated game count it."""
    return (max(hand, 1) - 1) // 4 % 4


class StatusSource:
    """The components of one table's status; :meth:`of` gives the one kept for a session's controller."""

    _kept: "weakref.WeakKeyDictionary[Any, StatusSource]" = weakref.WeakKeyDictionary()

    def __init__(self, session: "TableSession") -> None:
        self.session = session
        self.c = session.controller
        self.last_deal: dict[str, Any] | None = None
        self._subscription = session.table.bus.subscribe("deal", self._dealt)
        self.components: dict[str, Callable[[], dict[str, Any]]] = {
            "table": self.table, "book": self.book, "stacking": self.stacking, "reader": self.reader,
            "faults": self.faults, "chips": self.chips, "sensors": self.sensors, "deal": self.deal,
            "round": self.round, "session": self.session_status,
            "warnings": self.warnings}

    @classmethod
    def of(cls, session: "TableSession") -> "StatusSource":
        source = cls._kept.get(session.controller)
        if source is None:
            source = cls._kept[session.controller] = cls(session)
        return source

    def get_status(self, components: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """Every component (or the ones named), each a dict of JSON values with fixed keys."""
        names = list(self.components) if components is None else list(components)
        unknown = [n for n in names if n not in self.components]
        if unknown:
            raise ValueError(f"no status component {unknown[0]!r}; components: {', '.join(self.components)}")
        return {name: self.components[name]() for name in names}

    # -- the components -----------------------------------------------------------------------
    def table(self) -> dict[str, Any]:
        c = self.c
        t = c.table
        moving = [m.name for m in t.mechanisms() if m.busy]
        if t.turntable.running and t.turntable.name not in moving:
            moving.append(t.turntable.name)
        return {"state": c.state, "fault": c.fault.code.value if c.fault else None,
                "interlocks": [f"{f.detail['interlock']} ({f.code.value})" for f in t.safety.active()],
                "stuck_keys": sorted(t.panel.stuck), "service_mode": c.state == TableState.SERVICE.value,
                "service_test": c.service_test.current is not None, "moving": moving,
                "motors_safe": t.motors_safe(), "sets": dict(sorted(c.book.sets.items())),
                "enrol": self.session.registry.enrol_hint() or None}

    def book(self) -> dict[str, Any]:
        b = self.c.book
        deal = self.last_deal
        return {"hand": b.hand, "hand_open": b.hand_open, "dealer": b.dealer, "dealer_streak": b.dealer_streak,
                "round_wind": WINDS[round_wind(b.hand)], "last_winner": b.last_winner,
                "dice": list(deal["dice"]) if deal and deal["hand"] == b.hand else None,
                "walls": {s: b.wall_mode(s) for s in sorted(b.sets_at(SetLocation.STACKED)
                                                           + b.sets_at(SetLocation.TABLE))},
                "commitment": self.c.sealer.commitment_up()}

    def stacking(self) -> dict[str, Any]:
        c = self.c
        progress = c.book.stacking
        cycle = c.stacker.cycle
        return {"active": progress is not None, "set_id": progress.set_id if progress else None,
                "target": cycle.target_tiles if cycle is not None else None,
                "counted": list(progress.counted) if progress else None,
                "stacked": list(progress.stacked) if progress else None,
                "paused": c.state == TableState.PAUSED.value}

    def reader(self) -> dict[str, Any]:
        return dict(self.c.table.reader.counters_dict())

    def warnings(self) -> dict[str, Any]:
        """Warnings that are not faults: shuffle bias (``fairness``) and parts wearing (``maintenance``)."""
        return self.c.watch.status()

    def faults(self) -> dict[str, Any]:
        c, policy = self.c, self.c.policy
        active = [fault_dict(c.fault, policy.tier(c.fault).value)] if c.fault else []
        shown = {f["code"] for f in active}
        active += [fault_dict(f) for f in c.table.safety.active() if f.code.value not in shown]
        e62 = c.fault is not None and c.fault.code is FaultCode.E62
        return {"active": active, "look_for": list(policy.missing_tiles) if e62 else None,
                "check": (policy.check_hint or None) if e62 else None,
                "storage_error": policy.storage_error}

    def chips(self) -> dict[str, Any]:
        s = self.session.scoreboard
        return {"chips": list(s.chips), "rules": s.rules.name, "start": s.start_chips, "game": s.game}

    def sensors(self) -> dict[str, Any]:
        return {name: bool(sensor.active) for name, sensor in self.c.table.inputs().items()}

    def deal(self) -> dict[str, Any]:
        deal = self.last_deal
        if deal is None:
            return {"hand": None, "dealer": None, "dice": None, "hands": None, "wall": None}
        return dict(deal)

    def round(self) -> dict[str, Any]:
        rounds = self.session.rounds
        out = dict(NO_ROUND) if rounds is None else rounds.status()
        staff = self.session.staff
        if out["players"] is None and out["assignment"] is None and staff is not None and staff.players:
            out["players"] = dict(staff.players)         # (the names staff set, when no round's are shown)
        return out

    def session_status(self) -> dict[str, Any]:
        staff = self.session.staff
        return dict(NO_SESSION) if staff is None else staff.status()

    def _dealt(self, event: "Event") -> None:
        d = event.data
        hands = d.get("hands") or {}
        self.last_deal = {"hand": d["hand"], "dealer": d["dealer"], "dice": list(d["dice"]),
                          "hands": {str(side): list(tiles) for side, tiles in sorted(hands.items())} or None,
                          "wall": d.get("wall")}


def get_status(session: "TableSession", components: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """The table's status, every component or the ones named (see the module)."""
    return StatusSource.of(session).get_status(components)


LIVE_COMPONENTS = ("table", "book", "stacking", "chips", "round", "session")
NO_ROUND = {"state": None, "assignment": None, "players": None, "rules": None, "hands": None, "hands_played": None,
            "ends_at": None, "seconds_left": None, "warning": False, "reason": None, "pending": None,
            "pending_players": None, "refused": None, "refusals": 0}


def live_line(status: dict[str, dict[str, Any]], shown_now_s: float | None = None, w: Any = None) -> str:
    """The live line of ``mjtable sim --speed``: time, state, hand, dealer, stacking progress, chips; in the words
    of ``w`` (``gettext`` and ``state``: the command line's language) or, without one, the code's English with
    the state's identifier (the page's data: the page words it itself)."""
    _ = w.gettext if w is not None else str
    table, book, stacking, chips = (status[name] for name in LIVE_COMPONENTS[:4])
    counted = _(" stacking %(n)s tiles") % {"n": sum(stacking["counted"])} if stacking["counted"] is not None else ""
    clock = f"t={shown_now_s:7.1f}s " if shown_now_s is not None else ""
    state = w.state(table["state"]) if w is not None else table["state"]
    line = _("%(state)s hand %(hand)s dealer side %(dealer)s") % {"state": _padded(state, 9), "hand": book["hand"],
                                                                   "dealer": book["dealer"]}
    round_status = status.get("round") or NO_ROUND
    return (f"{clock}{line}{counted} " + _("chips %(chips)s") % {"chips": " ".join(str(x) for x in chips["chips"])}
            + round_line(round_status, _)
            + session_line(status.get("session") or NO_SESSION, bool(round_status.get("assignment")), _))


def _padded(text: str, columns: int) -> str:
    """``text`` padded with spaces to ``columns`` terminal columns (a Chinese character takes two)."""
    from unicodedata import east_asian_width

    used = sum(2 if east_asian_width(ch) in ("W", "F") else 1 for ch in text)
    return text + " " * max(0, columns - used)
