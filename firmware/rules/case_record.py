"""A case of ``mjtable score`` as a hand's record, settled like any hand, and its result as one JSON answer.

A case is the end of a hand: the winner's tiles and sets, how the win came,
and (in ``table``) what is known of the rest: the dealer's streak, 长毛, each
seat's chips, the sets the other seats exposed and who fed them
(``table.melds``) or only which seats opened (``table.open_seats``), dead
hands, a liable seat, whether the dealer's first discard was followed; for
四川 each seat's void suit (``table.void``), the seats that have won already
(``table.won``) and the variant switches in play (``table.options``).  East
is the dealer, so a seat wind is the side of the record.  The record is
settled by :func:`firmware.rules.settlement.settle_hand`, the one the
simulated game and the table's referee use; the answer gives the win's
items (``name``, ``key``, ``en``, ``points``, ``count``) and, when the case
asks (a ``discarder`` key), every payment with its reason and the total by
seat.  A northeastern case that asks for payments must say who opened
(``table.open_seats`` or ``table.melds``): whether each payer was closed
changes what it pays, and a guess would be silent.
"""

from __future__ import annotations

from typing import Any

from firmware.rules.case_format import Case, CaseError, _integer, _meld, _winds, describe
from firmware.rules.hand_record import Action, HandRecord, Verb
from firmware.rules.money import SEATS, Payment, deltas
from firmware.rules.ruleset import RuleSet, WinSituation
from firmware.rules.settlement import WinVerdict, settle_hand
from firmware.rules.win import WIND_CODES, Meld, MeldKind
from firmware.tiles.sets import TileSet

OFFSET = {"left": 1, "opposite": 2, "right": 3}        # the feeder relative to the claimer, as in Meld.source
MAX_DEALER_STREAK = 1000
MAX_CHIPS = 10**12


def table_context(data: dict[str, Any]) -> dict[str, Any]:
    """The optional ``"table"`` context of a case, every field of its exact JSON type; CaseError names the
    field at fault."""
    raw = data.get("table")
    if raw is None or type(raw) is dict and not raw:        # (most cases: no context, every field its default)
        return {"dealer_streak": 0, "long_hair": 0, "open_seats": frozenset(), "open_known": False, "chips": None,
                "liable": None, "first_discard_followed": False, "dead_hands": [], "melds": {}, "void": {}, "won": [],
                "options": {}}
    if not isinstance(raw, dict):
        raise CaseError(f"field 'table' must be an object, got {describe(raw)}")
    known = {"dealer_streak", "long_hair", "open_seats", "chips", "liable", "first_discard_followed", "dead_hands",
             "melds", "void", "won", "options"}
    unknown = sorted(k for k in raw if k not in known)
    if unknown:
        raise CaseError(f"field 'table.{unknown[0]}' is not known (fields: {', '.join(sorted(known))})")
    winds = tuple(WIND_CODES)
    chips = raw.get("chips")
    if chips is not None:
        if not isinstance(chips, dict):
            raise CaseError(f"field 'table.chips' must be an object of seat winds to integers, got {describe(chips)}")
        unknown = [key for key in chips if key not in winds]
        if unknown:
            raise CaseError(f"field 'table.chips': {describe(unknown[0])} is not a seat wind (E, S, W or N)")
        chips = [_integer(chips, w, "table.chips", -MAX_CHIPS, MAX_CHIPS) for w in winds]
    liable = raw.get("liable")
    if liable is not None and not (isinstance(liable, str) and liable in winds):
        raise CaseError(f"field 'table.liable' must be a seat wind (E, S, W or N) or null, got {describe(liable)}")
    followed = raw.get("first_discard_followed")
    if followed is not None and not isinstance(followed, bool):
        raise CaseError(f"field 'table.first_discard_followed' must be true or false, got {describe(followed)}")
    melds = raw.get("melds")
    seat_melds: dict[int, list[Meld]] = {}
    if melds is not None:
        if not isinstance(melds, dict) or any(k not in winds for k in melds):
            raise CaseError("field 'table.melds' maps seat winds (E, S, W, N) to arrays of melds")
        for wind, items in melds.items():
            if not isinstance(items, list) or len(items) > 4:
                raise CaseError(f"field 'table.melds.{wind}' must be an array of at most 4 melds")
            seat_melds[winds.index(wind)] = [_meld(m, i) for i, m in enumerate(items)]
    void = raw.get("void")
    if void is not None and not (isinstance(void, dict) and all(k in winds and v in ("m", "p", "s")
                                                                for k, v in void.items())):
        raise CaseError(f"field 'table.void' maps seat winds (E, S, W, N) to their void suit (m, p or s), e.g. "
                        f'{{"E": "m", "S": "p"}}; got {describe(void)}')
    options = raw.get("options")
    if options is not None and not isinstance(options, dict):
        raise CaseError(f"field 'table.options' must be an object of the rule set's switches, got {describe(options)}")
    return {"dealer_streak": _integer(raw, "dealer_streak", "table", 0, MAX_DEALER_STREAK),
            "long_hair": _integer(raw, "long_hair", "table", 0, MAX_DEALER_STREAK),
            "open_seats": frozenset(winds.index(w) for w in _winds(raw, "open_seats")),
            "open_known": "open_seats" in raw or melds is not None,
            "chips": chips, "liable": winds.index(liable) if liable is not None else None,
            "first_discard_followed": bool(followed),
            "dead_hands": [winds.index(w) for w in _winds(raw, "dead_hands")], "melds": seat_melds,
            "void": {winds.index(w): suit for w, suit in (void or {}).items()},
            "won": [winds.index(w) for w in _winds(raw, "won")], "options": options or {}}


def _meld_actions(side: int, melds: tuple[Meld, ...] | list[Meld]) -> list[Action]:
    out = []
    for m in melds:
        if m.concealed:
            out.append(Action(Verb.CONCEALED_KONG, side, m.tile))
            continue
        feeder = (side - OFFSET[m.source or "left"]) % SEATS
        if m.added:
            out += [Action(Verb.PUNG, side, m.tile, feeder), Action(Verb.ADDED_KONG, side, m.tile)]
            continue
        kind = m.kind                   # (compared, not looked up: an enum member's hash is Python code)
        verb = Verb.CHOW if kind is MeldKind.CHOW else Verb.PUNG if kind is MeldKind.PUNG else Verb.KONG
        out.append(Action(verb, side, m.tile, feeder))
    return out


def case_record(case: Case, rules: str, table: dict[str, Any]) -> HandRecord:
    """The hand's record a case describes (East, side 0, deals)."""
    win = case.win
    winner = win.seat_wind
    chips = tuple(table["chips"]) if table["chips"] is not None else None
    record = HandRecord(rules, 0, 0, win.round_wind, table["dealer_streak"], table["long_hair"], chips)
    if table["void"]:
        record.actions += [Action(Verb.VOID, s, kind=suit) for s, suit in sorted(table["void"].items())]
    if winner in table["won"]:
        raise CaseError("field 'table.won': the winner is not among the seats that have won already")
    if table["won"]:
        record.actions += [Action(Verb.WON, s) for s in sorted(set(table["won"]))]
    for side, melds in sorted(table["melds"].items()):
        if side == winner:
            raise CaseError("field 'table.melds': the winner's sets are the case's 'melds'")
        record.actions += _meld_actions(side, melds)
    if table["open_seats"]:
        record.actions += [Action(Verb.OPENED, s) for s in sorted(table["open_seats"]) if s != winner]
    if table["dead_hands"]:
        record.actions += [Action(Verb.DEAD, s) for s in table["dead_hands"]]
    if table["first_discard_followed"]:
        record.actions.append(Action(Verb.FOLLOW))
    if table["liable"] is not None:
        record.actions.append(Action(Verb.LIABLE, table["liable"]))
    record.actions += _meld_actions(winner, win.melds)
    flags = {name for name, on in (("kong_win", win.kong_win), ("last_tile", win.last_tile),
                                   ("flower_win", win.flower_win), ("last_of_kind", win.last_of_kind),
                                   ("first_turn", win.first_turn), ("kong_discard", case.kong_discard)) if on}
    source = None
    if not win.self_drawn:
        # (a discard win whose discarder the case does not name asks for no payments: any other side will do)
        source = case.discarder if case.discarder is not None else (winner - 1) % SEATS
    record.actions.append(Action(Verb.WIN, winner, win.win_tile, source, win.hand, frozenset(flags), win.flowers))
    return record


def case_outcome(case: Case, ruleset: RuleSet, table: dict[str, Any],
                 wants: bool) -> tuple[WinVerdict, list[Payment]]:
    """(the win's verdict, the hand's payments) of one case (CaseError: it cannot be settled as given, e.g.
    context missing); ``wants``: the case asks for payments."""
    try:
        ruleset = ruleset.with_options(table["options"])
    except ValueError as exc:
        raise CaseError(f"field 'table.options': {exc}") from None
    if ruleset.play.void_suit and case.win.seat_wind not in table["void"]:
        raise CaseError(f"rule set {ruleset.name}: give each seat's void suit (定缺) in 'table.void', the winner's at "
                        'least, e.g. {"E": "m", "S": "p", "W": "s", "N": "m"}')
    if wants and ruleset.needs_open_seats and not table["open_known"]:
        raise CaseError(f"rule set {ruleset.name}: payments depend on which other seats were closed; give "
                        "'table.open_seats' (the seat winds that chowed, punged or exposed a kong; [] for none) or "
                        "'table.melds'")
    plain = plain_settlement(case, ruleset, table)
    if plain is not None:
        verdict, payments = plain
    else:
        settled = settle_hand(ruleset, case_record(case, ruleset.name, table))
        verdict, payments = settled.verdicts[-1], settled.payments
    return verdict, payments


def case_result(case: Case, ruleset: RuleSet, data: dict[str, Any], table: dict[str, Any]) -> dict[str, Any]:
    """The answer to one case (ValueError: the case cannot be settled as given, e.g. context missing)."""
    wants = "discarder" in data
    return outcome_answer(case, *case_outcome(case, ruleset, table, wants), wants)


def outcome_answer(case: Case, verdict: WinVerdict, payments: list[Payment], wants: bool) -> dict[str, Any]:
    """The answer to a case settled (``firmware.rules.case_json`` writes the same as JSON text)."""
    score = verdict.score
    assert score is not None
    if not score.shape:
        out: dict[str, Any] = {"id": case.id, "win": False, "reason": verdict.reason}
    else:
        extra = verdict.total - score.total                    # (the situation's items: 杠流泪, 长毛 ...)
        out = {"id": case.id, "win": True, "total": verdict.total,
               "total_without_flowers": score.total_without_flowers + extra,
               "meets_minimum": score.legal, "unit": score.unit, "fans": [i.to_json() for i in verdict.items]}
        if not verdict.legal:
            out["reason"] = verdict.reason
            if score.legal:
                out["refused"] = verdict.reason
    if wants:
        out["payments"] = {WIND_CODES[s]: d for s, d in enumerate(deltas(payments, include_held=True))}
        out["money"] = [dict(p.to_json(), payer=WIND_CODES[p.payer], payee=WIND_CODES[p.payee])
                        for p in payments]
        if verdict.breakdown:
            out["breakdown"] = {WIND_CODES[b.payer]: {"amount": b.amount, "items": [i.to_json() for i in b.items]}
                                for b in verdict.breakdown}
        if verdict.liable is not None:
            out["liable"] = WIND_CODES[verdict.liable]
    return out


_ROOM: dict[int, tuple[TileSet, int]] = {}      # by the set's id (the entry holds the set): a few sets at most
MAX_ROOM_ENTRIES = 16


def _flower_room(tiles: TileSet) -> int:
    """The flowers a win may declare in ``tiles`` with no tile of the record refused (at most 8, the most a Win
    holds); -1 when some kind of the 34 is not in the set (a case is then settled the record's way)."""
    kept = _ROOM.get(id(tiles))
    if kept is not None and kept[0] is tiles:
        return kept[1]
    copies = tiles.copies
    room = min(8, sum(copies[34:])) if all(copies[:34]) else -1
    if len(_ROOM) >= MAX_ROOM_ENTRIES:
        _ROOM.clear()
    _ROOM[id(tiles)] = (tiles, room)
    return room


def plain_settlement(case: Case, ruleset: RuleSet, table: dict[str, Any]) -> tuple[WinVerdict, list[Payment]] | None:
    """(the win's verdict, the hand's payments) as ``settle_hand`` gives them for the case's record, without the
    record, when nothing but the win can pay or refuse: a rule set of plain settlement (``RuleSet``), a table
    that says nothing of the other seats, no chips, a flower count the set holds; None otherwise.

    The record would hold the winner's sets (nothing paid, nothing refused: none but the winner's, no
    discard before them) and the win, the case's own win (the same tiles, sets, flags and winds), its
    number the count of those sets' actions.  tests/firmware/rules/test_plain_settlement.py compares the
    two ways on every case of tests/data and thousands of generated ones."""
    win = case.win
    if not ruleset.plain_settlement or ruleset.play.plays_on or table["chips"] is not None or table["void"] \
            or table["won"] or table["melds"] or table["open_seats"] or table["dead_hands"] \
            or table["first_discard_followed"] or table["liable"] is not None:
        return None
    if win.flowers > _flower_room(ruleset.tiles):
        return None
    side = win.seat_wind
    source = None
    if not win.self_drawn:
        source = case.discarder if case.discarder is not None else (side - 1) % SEATS
        if source == side:
            return None
    event = 0                                   # (the win's action: after its sets', a 加杠 two actions)
    for m in win.melds:
        event += 2 if m.added and not m.concealed else 1
    robbed = source is not None and win.kong_win
    situation = WinSituation(side, source, 0, robbed=robbed, kong_discard=source is not None and not robbed
                             and case.kong_discard, streak=table["dealer_streak"], long_hair=table["long_hair"],
                             event=event)
    verdict = WinVerdict(side, win.win_tile, source, False, win=win, event=event)
    score = verdict.score = ruleset.score(win)
    if not score.legal:
        verdict.reason = score.reason or "not a legal win"
        verdict.payments = list(ruleset.false_win_payments(side, situation))
        return verdict, list(verdict.payments)
    refused = ruleset.refusal(score, situation)
    money = ruleset.win_payments(win, score, situation) if refused is None else None
    if refused is not None or money is None:
        verdict.reason = refused or "refused"
        verdict.payments = list(ruleset.refused_win_payments(win, score, situation))
        return verdict, list(verdict.payments)
    verdict.legal = True
    verdict.liable = money.liable
    verdict.breakdown = money.breakdown
    verdict.context_items = money.context_items
    verdict.transferred = money.transferred
    verdict.payments = list(money.payments)
    return verdict, list(verdict.payments)


def record_result(case_id: Any, ruleset: RuleSet, record: HandRecord) -> dict[str, Any]:
    """The answer to a whole hand's record: every declared win's verdict and every payment with its reason (by
    side, the record's own numbering)."""
    settled = settle_hand(ruleset, record)
    verdicts = []
    for v in settled.verdicts:
        score = v.score
        verdicts.append({"side": v.side, "legal": v.legal, "reason": v.reason, "total": v.total,
                         "unit": score.unit if score else "", "fans": [i.to_json() for i in v.items],
                         "liable": v.liable})
    return {"id": case_id, "hand": record.hand, "winners": settled.winners, "drawn": settled.drawn,
            "followed": settled.followed, "verdicts": verdicts,
            "payments": {f"side{s}": d for s, d in enumerate(deltas(settled.payments, include_held=True))},
            "money": [p.to_json() for p in settled.payments]}
