"""The real table's referee on request: a declared win judged from the winner's seat pad, penalties, kongs and
the wall's end.

The player lays the hand on the pad in front of their seat; the referee says
which side won, on which tile, from whose discard (none: self-drawn), which
sets each side had exposed and who fed them (the pad reads the winner's with
the rest but cannot tell them apart), which sides had opened, and the way
of winning (杠上开花 / 抢杠, the last tile, 杠流泪, 跟庄).  That becomes the
end of the hand's record (:mod:`firmware.rules.hand_record`), after what the
table's referee already took this hand (penalties), and is settled by the
one settlement (:mod:`firmware.rules.settlement`), the table's context in
the record (dealer, round wind, the streak, 长毛, the chips at the deal).
Without ``record`` nothing is written (a question); with it, during a hand,
the actions are taken like the simulated players' (kong money on the spot),
a legal win ends the hand's scoring (四川: once three have won; before that
the hand goes on), and a false win is paid and the hand goes on (the
declarer plays on as a dead hand).  Several winners on one
discard (``more``: another follows) are judged one by one and taken
together with the last, in the order the discarder pays them (下家 first,
"点炮方按逆时针顺序付分"), whatever order they were judged in.  A whole hand's record
(``hand_record``, e.g. from a simulated run's report) is judged as it is.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from firmware.game.hand_in_play import round_wind_of
from firmware.controller.states import SetLocation, TableState
from firmware.game.pad import PadRead, meld_tiles, parse_melds, read_pad, standing_from_pad
from firmware.i18n import reworded, worded
from firmware.refusals import answer_of, part, worded_answer
from firmware.rules.hand_record import WIN_FLAGS, Action, BadRecord, HandRecord, Verb, in_paying_order
from firmware.rules.money import deltas
from firmware.rules.settlement import HandSettlement, WinVerdict, settle_hand
from firmware.rules.win import MeldKind
from firmware.tiles.tile import TileError, code, format_tiles, parse_one
from firmware.diagnostics.request_fields import Reply

SIDES = 4


class BadJudgeRequest(ValueError):
    """A judge request that cannot be judged; the message names the field."""


def judge_from_pad(session, request: dict[str, Any], reply: Reply) -> None:
    try:
        if request.get("hand_record") is not None:
            _judge_record(session, request, reply)
        else:
            _judge_declaration(session, request, reply)
    except (BadJudgeRequest, BadRecord) as exc:
        reply(answer_of(exc))


def _side(request: dict[str, Any], name: str, required: bool = True) -> int | None:
    value = request.get(name)
    if value is None and not required:
        return None
    if type(value) is not int or value not in range(SIDES):
        raise worded(BadJudgeRequest, "'%(name)s' must be a side 0..3", name=name)
    return value


def _declaration(session, request: dict[str, Any]) -> tuple[int, int, int | None, list[Action], list[Action],
                                                                 frozenset[str]]:
    """(side, tile, discarder, the winner's sets, the actions before the win, the win's flags) of a request."""
    side = _side(request, "side")
    discarder = _side(request, "discarder", required=False)
    assert side is not None
    if discarder == side:
        raise worded(BadJudgeRequest, "'discarder' must be another side than the winner's")
    try:
        tile = parse_one(str(request.get("tile", "")))
    except TileError as exc:
        raise worded(BadJudgeRequest, "winning tile: %(problem)s", problem=exc) from None
    if tile >= 34:
        raise worded(BadJudgeRequest, "winning tile: %(tile)s is a flower", tile=code(tile))
    before: list[Action] = []
    seat_melds = request.get("seat_melds") or {}
    if not isinstance(seat_melds, dict):
        raise worded(BadJudgeRequest, "'seat_melds' maps sides to their sets")
    try:
        for key, text in sorted(seat_melds.items()):
            other = int(key) if str(key) in ("0", "1", "2", "3") else -1
            if other not in range(SIDES) or other == side or not isinstance(text, str):
                raise worded(BadJudgeRequest, "'seat_melds': %(key)r is not another side 0..3 with its sets as text",
                             key=key)
            before += parse_melds(text, other)
        own = parse_melds(str(request.get("melds") or ""), side)
    except ValueError as exc:
        raise reworded(BadJudgeRequest, exc) from None
    opened = request.get("open")
    if opened is not None and (not isinstance(opened, list)
                               or any(type(s) is not int or s not in range(SIDES) for s in opened)):
        raise worded(BadJudgeRequest, "'open' lists the sides that had opened (0..3; [] for none)")
    if session.rules.needs_open_seats and opened is None and not seat_melds:
        # (as mjtable score: a side not named would be taken as closed, its 闭门 items and share a guess)
        raise worded(BadJudgeRequest, "rule set %(rules)s: what each payer pays depends on whether it had opened; say "
                     "who had: --open 1,3 (the sides that chowed, punged or exposed a kong), --open none (nobody "
                     "had: every other side closed) or --seat-melds SIDE=SETS (over the socket: 'open', [] for "
                     "none, or 'seat_melds')", rules=session.rules.name)
    opened = opened or []
    before += [Action(Verb.OPENED, s) for s in sorted(set(opened)) if s != side]
    if request.get("followed"):
        before.append(Action(Verb.FOLLOW))
    liable = _side(request, "liable", required=False)
    if liable is not None:
        before.append(Action(Verb.LIABLE, liable))
    flags = request.get("flags") or []
    if not isinstance(flags, list) or any(f not in WIN_FLAGS for f in flags):
        raise worded(BadJudgeRequest, "'flags' are some of %(flags)s", flags=", ".join(WIN_FLAGS))
    more = request.get("more", False)
    if not isinstance(more, bool):
        raise worded(BadJudgeRequest, "'more' is true or false")
    if more and not session.rules.several_winners:
        raise worded(BadJudgeRequest, "rule set %(rules)s: one winner per discard (no --more)",
                     rules=session.rules.name)
    if more and discarder is None:
        raise worded(BadJudgeRequest, "--more: another winner on the same discard; a self-drawn win has none")
    pending = _pending_win(session)
    if pending is not None and (pending.tile, pending.source) != (tile, discarder):
        raise worded(BadJudgeRequest, "side %(side)s won on side %(source)s's %(tile)s (--more): only another "
                     "winner on that discard may be judged now (--tile %(tile)s --discarder %(source)s; the last "
                     "without --more records them all)", side=pending.side, source=pending.source,
                     tile=code(pending.tile))
    if pending is not None and side in {a.side for a in session.hand.referee.pending if a.verb is Verb.WIN}:
        raise worded(BadJudgeRequest, "side %(side)s is judged on this discard already (--more): judge the next winner",
                     side=side)
    return side, tile, discarder, own, before + own, frozenset(flags)


def _pending_win(session) -> Action | None:
    """The first win judged with ``more`` on the hand in play's discard (waiting for the last winner on it)."""
    if session.hand.hand is None or session.scoreboard.recorded(session.hand.hand):
        return None
    return next((a for a in session.hand.referee.pending if a.verb is Verb.WIN), None)


def _judge_declaration(session, request: dict[str, Any], reply: Reply) -> None:
    side, tile, discarder, own, before, flags = _declaration(session, request)
    book = session.book
    on_table = book.sets_at(SetLocation.TABLE)

    def got(read: PadRead) -> None:
        if not read.ok:
            reply(answer_of(read.problem))
            return
        try:
            hand = standing_from_pad(read, tile, own)
        except ValueError as exc:
            reply(answer_of(exc))
            return
        win = Action(Verb.WIN, side, tile, discarder, hand, flags, read.flowers)
        actions = _not_recorded(session, before) + [win]
        in_play = session.state == TableState.IN_PLAY.value and session.hand.hand is not None
        if request.get("record") and in_play:
            reply(_record(session, actions, more=bool(request.get("more"))))
            return
        if in_play:
            actions = in_paying_order(_together(session.hand.referee.pending, actions))
        try:
            settled = settle_hand(session.rules, _hand_so_far(session, actions))
        except BadRecord as exc:
            reply(answer_of(exc))
            return
        out = answer(settled, recorded=False, since=len(_hand_so_far(session, []).actions))
        if request.get("record"):
            out.update({k: v for k, v in worded_answer("not recorded: no hand in play (the table is %(state)s)",
                                                       state=session.state).items() if k != "ok"})
        reply(out)

    read_pad(session.table.reader, side, session.registry, on_table[0] if on_table else None, got)


def _hand_so_far(session, actions: list[Action]) -> HandRecord:
    """The hand in play's record with ``actions`` after it (or, between hands, a record of the table's context)."""
    live = session.hand.referee.record if session.hand.hand is not None else None
    if live is not None:
        record = HandRecord(live.rules, live.hand, live.dealer, live.round_wind, live.streak, live.long_hair,
                            live.chips, list(live.actions))
    else:
        b = session.book
        record = HandRecord(session.rules.name, b.hand, b.dealer, round_wind_of(b.hand), b.dealer_streak,
                            b.long_hair, tuple(session.scoreboard.chips))
    record.actions += actions
    return record


SET_VERBS = frozenset({Verb.CHOW, Verb.PUNG, Verb.KONG, Verb.ADDED_KONG, Verb.CONCEALED_KONG})


def _set_keys(melds) -> Counter[tuple[str, int, str | None]]:
    """A side's sets in the record as the actions that make them ((verb, tile, the feeder's direction)): a pung
    made a kong is its pung and its ``added_kong``."""
    keys: Counter[tuple[str, int, str | None]] = Counter()
    for m in melds:
        if m.kind is MeldKind.KONG and m.added:
            keys[(Verb.PUNG.value, m.tile, m.source)] += 1
            keys[(Verb.ADDED_KONG.value, m.tile, None)] += 1
        elif m.concealed:
            keys[(Verb.CONCEALED_KONG.value, m.tile, None)] += 1
        else:
            keys[(m.kind.value, m.tile, m.source)] += 1
    return keys


def _not_recorded(session, actions: list[Action]) -> list[Action]:
    """``actions`` without the sets the hand in play's record has already for their side (taken by an earlier
    declaration, a false win that let the hand go on, or ``mjtable diag kong`` when it happened): a set named
    again is the same set, not another one (its kong money is not paid twice)."""
    settler = session.hand.referee.settler if session.hand.hand is not None else None
    if settler is None:
        return list(actions)
    facts = settler.facts
    have = {side: _set_keys(facts.sides[side].melds) for side in range(SIDES)}
    out: list[Action] = []
    for a in actions:
        if a.verb in SET_VERBS and a.side is not None and a.tile is not None:
            source = facts.feeder_source(a.side, a.source) if a.source is not None else None
            key = (a.verb.value, a.tile, source)
            if have[a.side][key] > 0:
                have[a.side][key] -= 1
                continue
        out.append(a)
    return out


def _record(session, actions: list[Action], more: bool = False) -> dict[str, Any]:
    """Take the judged actions into the hand in play, all of them or (one cannot have happened) none; a legal win
    ends its scoring.  ``more``: another winner on the same discard follows: these actions wait (judged now,
    nothing taken) and are taken with the last winner's, the wins in the order the discarder pays them."""
    hand = session.book.hand
    referee = session.hand.referee
    taken = len(referee.record.actions)
    actions = _together(referee.pending, actions)
    if more:
        try:
            settled = settle_hand(session.rules, _hand_so_far(session, in_paying_order(actions)))
        except BadRecord as exc:
            return {**worded_answer("not recorded: %(why)s", why=part(exc)), "recorded": False}
        verdict = next(v for v in reversed(settled.verdicts) if v.side == actions[-1].side)
        if not verdict.legal:
            return {**worded_answer("not recorded: side %(side)s's is not a legal win (%(reason)s); judge it without "
                                    "--more to record a false win", side=verdict.side, reason=verdict.reason),
                    "recorded": False}
        referee.pending = actions
        out = answer(settled, recorded=False, since=taken, side=actions[-1].side)
        out.update(pending=True, note="judged, not paid yet: the hand waits for the other winners on this discard; "
                                      "judge them with --record (the last one without --more records them all, paid "
                                      "下家 first)")
        return out
    why = session.hand.take_all(hand, actions)
    if why is not None:
        return {**worded_answer("not recorded: %(why)s", why=part(why)), "recorded": False}
    referee.pending = []
    settled = session.hand.referee.settlement()
    assert settled is not None
    verdict = next(v for v in reversed(settled.verdicts) if v.side == actions[-1].side)
    finished = session.rules.hand_over(settled.winners)
    if finished:
        why = session.hand.finish(hand)
        if why is not None:
            return {**worded_answer("not recorded: %(why)s", why=part(why)), "recorded": False}
    out = answer(settled, recorded=not session.store.failing, since=taken, side=verdict.side)
    if not verdict.legal:
        out["note"] = "a false win: paid now; " + (
            f"the hand's result is written with the win of side {', '.join(map(str, settled.winners))}" if finished
            else "the hand goes on and the declarer may not win it")
    elif not finished:
        out["note"] = (f"paid now; the hand goes on ({len(set(settled.winners))} won so far): judge the next win, or "
                       "'mjtable diag drawn' when the wall runs out")
    return out


def _together(pending: list[Action], actions: list[Action]) -> list[Action]:
    """The actions of the declarations judged on one discard so far and of this one, as one: the sets first (one
    named by two declarations is taken once), then the wins."""
    sets: list[Action] = []
    seen: Counter[tuple] = Counter()
    for a in pending:
        if a.verb is not Verb.WIN:
            seen[(a.verb, a.side, a.tile, a.source)] += 1
            sets.append(a)
    for a in actions:
        key = (a.verb, a.side, a.tile, a.source)
        if a.verb is not Verb.WIN and seen[key] > 0:
            seen[key] -= 1
            continue
        if a.verb is not Verb.WIN:
            sets.append(a)
    return sets + [a for a in pending + actions if a.verb is Verb.WIN]


def _judge_record(session, request: dict[str, Any], reply: Reply) -> None:
    """A whole hand's record, judged as it is (nothing is written); with ``check_pad`` the first winner's pad
    must show the tiles the record declares."""
    if request.get("record"):
        raise worded(BadJudgeRequest, "a hand's record is judged, not recorded: record the hand in play with its "
                     "sets and the pad")
    record = HandRecord.from_json(request["hand_record"])
    if record.rules != session.rules.name:
        raise worded(BadJudgeRequest, "the record is of rule set %(record)r; this table plays %(rules)s",
                     record=record.rules, rules=session.rules.name)
    settled = settle_hand(session.rules, record)
    if not request.get("check_pad") or not settled.verdicts:
        reply(answer(settled, recorded=False))
        return
    v = settled.verdicts[0]
    assert v.win is not None
    expected = Counter(list(v.win.hand) + [v.tile] + meld_tiles([a for a in record.actions if a.side == v.side
                                                                   and a.verb in (Verb.CHOW, Verb.PUNG, Verb.KONG,
                                                                                  Verb.ADDED_KONG,
                                                                                  Verb.CONCEALED_KONG)]))

    def got(read: PadRead) -> None:
        if not read.ok:
            reply(answer_of(read.problem))
        elif Counter(read.kinds) != expected:
            shown = format_tiles(list(read.kinds)) if read.kinds else "no tiles"
            reply(worded_answer("the pad of side %(side)s shows %(shown)s, the record declares %(declared)s",
                                side=v.side, shown=shown, declared=format_tiles(list(expected.elements()))))
        else:
            reply(answer(settled, recorded=False))

    on_table = session.book.sets_at(SetLocation.TABLE)
    read_pad(session.table.reader, v.side, session.registry, on_table[0] if on_table else None, got)


def answer(settled: HandSettlement, recorded: bool, since: int = 0, side: int | None = None) -> dict[str, Any]:
    """The judge's answer: the last declared win's verdict (``side``'s last, when given), and the hand's money from
    action ``since`` on."""
    verdicts = [v for v in settled.verdicts if side is None or v.side == side]
    verdict: WinVerdict | None = verdicts[-1] if verdicts else None
    money = [p for p in settled.payments if p.event >= since]
    out: dict[str, Any] = {"ok": True}
    if verdict is None:
        out.update(legal=False, total=0, reason="no win in the record", fans=[])
    else:
        score = verdict.score
        out.update({"legal": verdict.legal, "side": verdict.side, "tile": code(verdict.tile),
                    "discarder": verdict.discarder, "total": verdict.total,
                    "unit": score.unit if score else "", "reason": verdict.reason,
                    "fans": [i.to_json() for i in verdict.items], "liable": verdict.liable,
                    "breakdown": [{"payer": b.payer, "amount": b.amount, "items": [i.to_json() for i in b.items]}
                                  for b in verdict.breakdown]})
    out.update({"hand": settled.record.hand, "payments": {f"side{s}": d for s, d in enumerate(deltas(money))},
                "money": [p.to_json() for p in money], "recorded": recorded})
    return out


def penalty(session, request: dict[str, Any], reply: Reply) -> None:
    """``mjtable diag penalty SIDE KIND [--to SIDE]``: a referee's penalty on the hand in play, paid now."""
    try:
        side = _side(request, "side")
        to = _side(request, "to", required=False)
    except BadJudgeRequest as exc:
        reply(answer_of(exc))
        return
    kind = request.get("kind")
    known = session.rules.config.penalties
    if not isinstance(kind, str) or kind not in known:
        reply(worded_answer("penalty %(kind)s: rule set %(rules)s has the kinds %(kinds)s", kind=repr(kind)[:40],
                            rules=session.rules.name, kinds=", ".join(known)) if known else
              worded_answer("penalty %(kind)s: rule set %(rules)s has no penalties", kind=repr(kind)[:40],
                            rules=session.rules.name))
        return
    if to == side:
        reply(worded_answer("a penalty goes to another side"))
        return
    referee = session.hand.referee
    taken = len(referee.record.actions) if referee.record is not None else 0
    why = session.hand.penalty(side, kind, to)
    if why is not None:
        reply(answer_of(why))
        return
    settled = referee.settlement()
    assert settled is not None
    money = [p for p in settled.payments if p.event >= taken]
    reply({"ok": True, "hand": session.book.hand, "side": side, "kind": kind, "name": known[kind].name,
           "dead_hand": known[kind].dead_hand, "warning": not money, "money": [p.to_json() for p in money],
           "payments": {f"side{s}": d for s, d in enumerate(deltas(money, include_held=True))},
           "chips": {f"side{s}": c for s, c in enumerate(session.scoreboard.chips)}})


def hand(session, request: dict[str, Any], reply: Reply) -> None:
    """``mjtable diag hand [N]``: a hand's record and its money by reason (default: the hand in play, else the
    last one scored); the record is what ``judge --hand-record`` judges again."""
    number = request.get("hand")
    board = session.scoreboard
    live = session.hand.referee.record if session.hand.hand is not None else None
    if number is not None and (type(number) is not int or number < 1):
        reply(worded_answer("'hand' must be a hand number from 1"))
        return
    if live is not None and number in (None, live.hand) and not board.recorded(live.hand):
        settled = session.hand.referee.settlement()
        assert settled is not None
        reply({"ok": True, "hand": live.hand, "in_play": True, "record": live.to_json(),
               "money": [p.to_json() for p in settled.payments],
               "payments": {f"side{s}": d for s, d in enumerate(settled.deltas(include_held=True))}})
        return
    row = board.rows.hand_result(number) if number else next(iter(board.rows.hand_results(None, limit=1)), None)
    if row is None:
        reply(worded_answer("hand %(hand)s has no recorded result", hand=number) if number
              else worded_answer("no hand is recorded"))
        return
    import json

    record = json.loads(row["record"]) if row["record"] else None
    reply({"ok": True, "hand": row["hand"], "in_play": False, "winners": row["winners"], "drawn": row["drawn"],
           "note": row["note"], "fans": row["fans"], "record": record,
           "money": [dict(p, name=board.reason(p["reason"]).name) for p in row["money"]],
           "payments": {f"side{s}": d for s, d in enumerate(row["payments"])}})


def money_since(session, taken: int) -> dict[str, Any]:
    """The hand in play's money from action ``taken`` on, and the chips now."""
    settled = session.hand.referee.settlement()
    assert settled is not None
    money = [p for p in settled.payments if p.event >= taken]
    return {"money": [p.to_json() for p in money],
            "payments": {f"side{s}": d for s, d in enumerate(deltas(money, include_held=True))},
            "chips": {f"side{s}": c for s, c in enumerate(session.scoreboard.chips)}}


def kong(session, request: dict[str, Any], reply: Reply) -> None:
    """``mjtable diag kong SIDE TILE --from SIDE | --added | --concealed``: a kong when it is made, its money paid
    now (a later ``judge`` that names it again does not take it twice).  ``added`` with ``from``: the pung it
    was added to, fed by that side, when the hand's record does not have it yet."""
    try:
        side = _side(request, "side")
        source = _side(request, "from", required=False)
        assert side is not None
        tile = parse_one(str(request.get("tile", "")))
        if tile >= 34:
            raise worded(BadJudgeRequest, "%(tile)s is a flower (a set of four flowers is a 花杠, paid when shown)",
                         tile=code(tile))
        added, concealed = request.get("added", False), request.get("concealed", False)
        if not isinstance(added, bool) or not isinstance(concealed, bool):
            raise worded(BadJudgeRequest, "'added' and 'concealed' are true or false")
        if source == side:
            raise worded(BadJudgeRequest, "'from': a kong on a discard is fed by another side")
        if (source is None and not added and not concealed) or (added and concealed) \
                or (concealed and source is not None):
            raise worded(BadJudgeRequest, "say which kong: 'from' SIDE (on that side's discard, 明杠), 'added' (a "
                         "pung made a kong, 加杠) or 'concealed' (暗杠)")
    except TileError as exc:
        reply(worded_answer("tile: %(problem)s", problem=part(exc)))
        return
    except BadJudgeRequest as exc:
        reply(answer_of(exc))
        return
    if session.hand.hand is None:
        reply(worded_answer("no hand in play (the table is %(state)s)", state=session.state))
        return
    referee = session.hand.referee
    if concealed:
        actions, kind = [Action(Verb.CONCEALED_KONG, side, tile)], "concealed"
    elif added:
        kind = "added"
        punged = any(m.kind is MeldKind.PUNG and m.tile == tile for m in referee.settler.facts.sides[side].melds)
        if not punged and source is None:
            reply(worded_answer("side %(side)s has no pung of %(tile)s in the hand's record: say who fed it ('from' "
                                "SIDE, --from SIDE)", side=side, tile=code(tile)))
            return
        actions = ([] if punged else [Action(Verb.PUNG, side, tile, source)]) + [Action(Verb.ADDED_KONG, side, tile)]
    else:
        actions, kind = [Action(Verb.KONG, side, tile, source)], "melded"
    taken = len(referee.record.actions)
    why = session.hand.take_all(session.book.hand, actions)
    if why is not None:
        reply(answer_of(why))
        return
    reply({"ok": True, "hand": session.book.hand, "side": side, "tile": code(tile), "kind": kind,
           "actions": [a.text() for a in actions], **money_since(session, taken)})
