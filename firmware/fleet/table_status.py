"""A table's status for the fleet's retained leaves, read from the table's session (never written).

:func:`table_status` is what the link's ``status()`` returns: the ``state``
leaf (the table's state, the hand, the dealer, the chips of the game being
played, the rule set, whether stacking is under way), ``faults`` (the fault
the table is stopped for, latched or held, then the recoverable faults not
yet acknowledged), ``warnings`` (shuffle bias, parts wearing) and ``counters`` (hands dealt, stacking cycles, the
players' waiting time).  :func:`table_meta` is the ``meta`` leaf.  Nothing
here changes the table: a status that cannot be read is the link's problem
(logged, the table plays on).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from firmware import __version__
from firmware.faults import Fault, FaultTier

if TYPE_CHECKING:
    from firmware.config import TableConfig
    from firmware.controller.controller import Controller
    from firmware.game.session import TableSession
    from firmware.rules.ruleset import RuleSet

log = logging.getLogger(__name__)


def fault_entry(fault: Fault, tier: FaultTier) -> dict[str, Any]:
    """One active fault as the ``faults`` leaf lists it (what a technician reads before walking over)."""
    return {"code": fault.code.value, "tier": tier.value, "text": fault.code.text, "hint": fault.code.hint,
            "source": fault.source, "at_s": round(fault.at_s, 3)}


def active_faults(controller: "Controller") -> list[dict[str, Any]]:
    """The fault the table is stopped for (latched, held, rejected walls), then the unacknowledged recoverable
    ones, newest last."""
    c = controller
    out = []
    if c.fault is not None:
        out.append(fault_entry(c.fault, c.policy.tier(c.fault)))
    for code, fault in c.policy.active.items():
        if c.fault is None or code != c.fault.code.value:
            out.append(fault_entry(fault, FaultTier.RECOVERABLE))
    return out


def table_status(session: "TableSession") -> dict[str, Any]:
    """The table's status as the link publishes it (``state`` leaf, ``faults``, ``counters``)."""
    c, board = session.controller, session.scoreboard
    b = c.book
    return {"state": c.state, "hand": b.hand, "hand_open": b.hand_open, "dealer": b.dealer,
            "dealer_streak": b.dealer_streak, "chips": list(board.chips), "game": board.game,
            "rules": c.rules.name, "stacking": b.stacking is not None,
            **round_status(session),
            "faults": active_faults(c),
            "warnings": c.watch.status(),
            "counters": {"hands": b.hand, "cycles": b.cycles, "players_waited_s": round(b.players_waited_s, 1),
                         "faults_seen": len(c.policy.recent)}}


def round_status(session: "TableSession") -> dict[str, Any]:
    """A tournament round on the ``state`` leaf: ``assignment`` in words (``playing <id>``, ``ended <id>
    (<reason>)``, ``pending <id>``, ``refused: <why>`` or None) and ``round`` (the status's component)."""
    rounds = session.rounds
    if rounds is None:
        return {}
    st = rounds.status()
    words = None
    if st["refused"]:
        words = f"refused: {st['refused']}"
    elif st["pending"] is not None:
        words = f"pending {st['pending']['id']}"
    elif st["assignment"] is not None:
        words = f"{st['state']} {st['assignment']['id']}" + (f" ({st['reason']})" if st["reason"] else "")
    return {"assignment": words, "round": {k: st[k] for k in ("state", "assignment", "players", "hands",
                                                              "hands_played", "ends_at", "reason", "pending")}}


def table_meta(cfg: "TableConfig", rules: "RuleSet") -> dict[str, Any]:
    """The ``meta`` leaf: the firmware, the table model, the rule set, the tile set."""
    return {"firmware": __version__, "model": cfg.table.name, "rules": rules.name, "tile_set": cfg.table.tile_set,
            "double_set": cfg.table.double_set}
