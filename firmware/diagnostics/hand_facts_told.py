"""What a referee tells the table about the hand in play that it cannot see: a side's void suit, the wall's end.

At a real table the reader knows the deal, not the draws, so facts the
rules need later come from a person at the table: ``mjtable diag void SIDE
SUIT`` (四川's 定缺, told once per side before its first discard) and
``mjtable diag drawn --yes`` (the live wall ran out with no win: 黄庄's money,
and where the rule set checks the hands still in at a drawn end, 四川's 查花猪 /
查大叫 / 退税, each such side's standing tiles with ``--show SIDE=TILES``,
taken with the wall's end all together or not at all).
"""

from __future__ import annotations

from typing import Any

from firmware.diagnostics.judge import Reply, money_since
from firmware.rules.hand_record import Action, Verb
from firmware.tiles.tile import SUITS, TileError, parse

SIDES = 4


def void(session, request: dict[str, Any], reply: Reply) -> None:
    """``mjtable diag void SIDE SUIT``: side SIDE's void suit (定缺: m, p or s) on the hand in play."""
    side, suit = request.get("side"), request.get("suit")
    if type(side) is not int or side not in range(SIDES):
        reply({"ok": False, "error": "'side' must be a side 0..3"})
        return
    if not isinstance(suit, str) or suit not in SUITS:
        reply({"ok": False, "error": f"'suit' must be m, p or s (the void suit), got {suit!r:.20}"})
        return
    if not session.rules.play.void_suit:
        reply({"ok": False, "error": f"rule set {session.rules.name} has no void suit (定缺)"})
        return
    if session.hand.hand is None:
        reply({"ok": False, "error": f"no hand in play (the table is {session.state})"})
        return
    why = session.hand.take(session.book.hand, Action(Verb.VOID, side, kind=suit))
    if why is not None:
        reply({"ok": False, "error": why})
        return
    reply({"ok": True, "hand": session.book.hand, "side": side, "void": suit})


def _shown(request: dict[str, Any]) -> dict[int, tuple[int, ...]]:
    """``show``: {side: tiles} (ValueError names the side at fault)."""
    raw = request.get("show") or {}
    if not isinstance(raw, dict):
        raise ValueError("'show' maps sides to their standing tiles, e.g. {\"1\": \"123m456m789m1234p\"}")
    out: dict[int, tuple[int, ...]] = {}
    for key, tiles in raw.items():
        if str(key) not in ("0", "1", "2", "3") or not isinstance(tiles, str) or len(tiles) > 60:
            raise ValueError(f"show: {key!r:.10} must be a side 0..3 with its tiles, e.g. 1=123m456m789m1234p")
        try:
            out[int(key)] = tuple(sorted(parse(tiles)))
        except TileError as exc:
            raise ValueError(f"show {key}: {exc}") from None
    return out


def drawn(session, request: dict[str, Any], reply: Reply) -> None:
    """``mjtable diag drawn``: the live wall ran out with no win (黄庄): its money where the rule set has it, and
    the hand's result (a drawn hand: the dealer rotation and the scoreboard follow); ``show``: the standing tiles
    of sides still in, for the rule sets that check them (四川)."""
    try:
        shown = _shown(request)
    except ValueError as exc:
        reply({"ok": False, "error": str(exc)})
        return
    hand = session.book.hand
    record = session.hand.referee.record if session.hand.hand is not None else None
    ends = [i for i, a in enumerate(record.actions) if a.verb is Verb.WALL_END] if record is not None else []
    taken = ends[0] if ends else len(record.actions) if record is not None else 0    # (asked again: its money)
    why = session.hand.wall_end(shown)
    if why is not None:
        if "show TILES" in why:
            why += "; with mjtable diag drawn: --show SIDE=TILES for each side still in"
        reply({"ok": False, "error": why})
        return
    reply({"ok": True, "hand": hand, "drawn": True, "recorded": session.scoreboard.recorded(hand)
           and not session.store.failing, **money_since(session, taken)})
