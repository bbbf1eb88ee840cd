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
from firmware.i18n import worded
from firmware.refusals import answer_of, part, worded_answer
from firmware.rules.hand_record import Action, Verb
from firmware.tiles.tile import SUITS, TileError, parse

SIDES = 4


def void(session, request: dict[str, Any], reply: Reply) -> None:
    """``mjtable diag void SIDE SUIT``: side SIDE's void suit (定缺: m, p or s) on the hand in play."""
    side, suit = request.get("side"), request.get("suit")
    if type(side) is not int or side not in range(SIDES):
        reply(worded_answer("'side' must be a side 0..3"))
        return
    if not isinstance(suit, str) or suit not in SUITS:
        reply(worded_answer("'suit' must be m, p or s (the void suit), got %(suit)s", suit=repr(suit)[:20]))
        return
    if not session.rules.play.void_suit:
        reply(worded_answer("rule set %(rules)s has no void suit (定缺)", rules=session.rules.name))
        return
    if session.hand.hand is None:
        reply(worded_answer("no hand in play (the table is %(state)s)", state=session.state))
        return
    why = session.hand.take(session.book.hand, Action(Verb.VOID, side, kind=suit))
    if why is not None:
        reply(answer_of(why))
        return
    reply({"ok": True, "hand": session.book.hand, "side": side, "void": suit})


def _shown(request: dict[str, Any]) -> dict[int, tuple[int, ...]]:
    """``show``: {side: tiles} (ValueError names the side at fault)."""
    raw = request.get("show") or {}
    if not isinstance(raw, dict):
        raise worded(ValueError, "'show' maps sides to their standing tiles, e.g. {\"1\": \"123m456m789m1234p\"}")
    out: dict[int, tuple[int, ...]] = {}
    for key, tiles in raw.items():
        if str(key) not in ("0", "1", "2", "3") or not isinstance(tiles, str) or len(tiles) > 60:
            raise worded(ValueError, "show: %(key)s must be a side 0..3 with its tiles, e.g. 1=123m456m789m1234p",
                         key=repr(key)[:10])
        try:
            out[int(key)] = tuple(sorted(parse(tiles)))
        except TileError as exc:
            raise worded(ValueError, "show %(key)s: %(problem)s", key=key, problem=exc) from None
    return out


def drawn(session, request: dict[str, Any], reply: Reply) -> None:
    """``mjtable diag drawn``: the live wall ran out with no win (黄庄): its money where the rule set has it, and
    the hand's result (a drawn hand: the dealer rotation and the scoreboard follow); ``show``: the standing tiles
    of sides still in, for the rule sets that check them (四川)."""
    try:
        shown = _shown(request)
    except ValueError as exc:
        reply(answer_of(exc))
        return
    hand = session.book.hand
    record = session.hand.referee.record if session.hand.hand is not None else None
    ends = [i for i, a in enumerate(record.actions) if a.verb is Verb.WALL_END] if record is not None else []
    taken = ends[0] if ends else len(record.actions) if record is not None else 0    # (asked again: its money)
    why = session.hand.wall_end(shown)
    if why is not None:
        if "show TILES" in why:
            reply(worded_answer("%(why)s; with mjtable diag drawn: --show SIDE=TILES for each side still in",
                                why=part(why)))
            return
        reply(answer_of(why))
        return
    reply({"ok": True, "hand": hand, "drawn": True, "recorded": session.scoreboard.recorded(hand)
           and not session.store.failing, **money_since(session, taken)})
