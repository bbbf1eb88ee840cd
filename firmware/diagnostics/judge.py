"""A declared win checked from the winner's seat pad, on request: the real table's referee.

The player lays the hand on the pad in front of their seat; the panel (or
the person at the table) says which side won, on which tile, and from whose
discard (none: self-drawn), and which sets had been exposed (the pad reads
them with the rest but cannot tell them apart).  The pad's tags name the tiles, the rule set's
engine judges them with the table's context (seat and round wind from the
dealer and hand number, chips, the dealer's streak), and the verdict is
returned; with ``record`` during a hand it goes to the scoreboard like the
simulated referee's, payments and all.
"""

from __future__ import annotations

from typing import Any, Callable

from firmware.controller.states import SetLocation, TableState
from firmware.game.pad import parse_melds, read_pad, win_from_pad
from firmware.game.referee import Referee
from firmware.game.scoreboard import HandRecord
from firmware.tiles.tile import TileError, parse_one

SIDES = 4
Reply = Callable[[dict[str, Any]], None]


def judge_from_pad(controller, request: dict[str, Any], reply: Reply) -> None:
    side, discarder = request.get("side"), request.get("discarder")
    if side not in range(SIDES) or (discarder is not None and (discarder not in range(SIDES) or discarder == side)):
        reply({"ok": False, "error": "judge needs the winner's side 0..3 and, on a discard, another side"})
        return
    try:
        tile = parse_one(str(request.get("tile", "")))
    except TileError as exc:
        reply({"ok": False, "error": f"winning tile: {exc}"})
        return
    try:
        melds = parse_melds(str(request.get("melds") or ""))
    except ValueError as exc:
        reply({"ok": False, "error": str(exc)})
        return
    book = controller.book
    on_table = book.sets_at(SetLocation.TABLE)

    def got(read) -> None:
        if not read.ok:
            reply({"ok": False, "error": read.problem})
            return
        dealer = book.dealer
        seat_wind, round_wind = (side - dealer) % SIDES, (max(book.hand, 1) - 1) // 4 % 4
        try:
            win = win_from_pad(read, tile, discarder is None, seat_wind, round_wind, melds)
        except ValueError as exc:
            reply({"ok": False, "error": str(exc)})
            return
        chips = controller.scoreboard.chips
        verdict = Referee(controller.rules).judge(
            win, None if discarder is None else (discarder - dealer) % SIDES,
            [chips[(w + dealer) % SIDES] for w in range(SIDES)], book.dealer_streak)
        by_side = [verdict.payments[(s - dealer) % SIDES] for s in range(SIDES)]
        answer: dict[str, Any] = {
            "ok": True, "legal": verdict.legal, "total": verdict.total, "reason": verdict.reason,
            "fans": [{"name": n, "points": p, "count": c} for n, p, c in verdict.fans],
            "payments": {f"side{s}": by_side[s] for s in range(SIDES)}, "recorded": False}
        if request.get("record"):
            if controller.state != TableState.IN_PLAY.value:
                answer["error"] = f"not recorded: no hand in play (the table is {controller.state})"
            else:
                record = HandRecord(book.hand, dealer, [side] if verdict.legal else [], False, by_side,
                                    [[n, p, c] for n, p, c in verdict.fans],
                                    "" if verdict.legal else f"false win by side {side}: {verdict.reason}",
                                    round_wind)
                controller.hand_result(side if verdict.legal else None, record)
                answer["recorded"] = True
        reply(answer)

    read_pad(controller.table.reader, side, controller.registry, on_table[0] if on_table else None, got)
