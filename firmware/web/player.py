"""The player's view (``/``): what anyone at the table sees without a login, from the live status and the game's hands.

Who sits where (the names of the round the table is assigned, else each
side's position: 东 南 西 北), the dealer and the round wind, the chips,
the state in words (with what to do next), the stacking per head as a
picture of the table, and this game's hands one line each (winner, items,
money), each opening on its details.  Read only: nothing here asks the
controller anything, and the hands are read from the table database at most
once per change of the game (:class:`HandsCache`).
"""

from __future__ import annotations

import functools

from collections import OrderedDict
from typing import Any

from firmware.web.i18n import STATE_TONE, WINDS, Words, side_number
from firmware.web.scoreboard import SIDES, seat_wind

WALLS_SHOWN = ("ready", "raising", "dice", "in_play", "rejected")     # states whose walls stand whole
LATEST_HANDS = 8                 # hands listed open on the phone's first screens; the earlier ones fold away
HEX = frozenset("0123456789abcdef")
NOT_DEALT = ("ready", "raising", "dice", "rejected")      # states whose walls up are not dealt yet


def names(status: dict[str, Any]) -> list[str | None]:
    """The names of the people by side (None: nobody named): the assigned round's players by seat (its seats
    are the sides in order, E S W N), or names set at the table (a ``names`` list by side, where a status
    carries one)."""
    found: list[str | None] = [None] * SIDES
    set_here = (status.get("players") or {}).get("names") if isinstance(status.get("players"), dict) else None
    if isinstance(set_here, list):
        for side, name in enumerate(set_here[:SIDES]):
            found[side] = str(name) if name else None
    rnd = status.get("round") or {}
    players = rnd.get("players") or rnd.get("pending_players") or {}
    for side, seat in enumerate(WINDS):
        if players.get(seat):
            found[side] = str(players[seat])
    return found


def who(words: Words, status: dict[str, Any], side: int) -> str:
    """A side's person: their name, else the side's position (东, South ...)."""
    name = names(status)[int(side) % SIDES]
    return name or words.position(side)


def live(status: dict[str, Any], words: Words) -> dict[str, Any]:
    """The live part of the view: state, fault, hand, dealer, round, seats with chips and stacking."""
    g = words.gettext
    table, book = status.get("table") or {}, status.get("book") or {}
    stacking, chips = status.get("stacking") or {}, status.get("chips") or {}
    link = status.get("link") or {}
    state = table.get("state")
    dealer = book.get("dealer") if book.get("dealer") is not None else 0
    counted = stacking.get("counted") if stacking.get("active") else None
    target = stacking.get("target") or 0
    fault = None
    active = (status.get("faults") or {}).get("active") or []
    if active:
        f = active[0]
        fault = {"code": f.get("code"), "text": words.fault_text(f.get("text", "")),
                 "hint": words.fault_text(f.get("hint", "")), "tier": f.get("tier"), "tier_words": words.tier(
                     f.get("tier", ""))}
    person_names = names(status)
    walls_up = state in WALLS_SHOWN and counted is None         # (a set stacked or on the table: the walls whole)
    seats = []
    for side in range(SIDES):
        amount = (chips.get("chips") or [None] * SIDES)[side]
        done = counted[side] if counted else None
        seats.append({"side": side, "number": side_number(side), "name": person_names[side] or words.position(side),
                      "named": person_names[side] is not None, "wind": words.seat_wind(seat_wind(side, dealer)),
                      "dealer": side == dealer and book.get("hand") is not None, "chips": amount,
                      "counted": done, "share": (min(1.0, done / target) if done is not None and target
                                                 else 1.0 if walls_up else None),
                      "last_winner": book.get("last_winner") == side})
    rnd = status.get("round") or {}
    tag = rnd.get("assignment") or rnd.get("pending")
    round_text = None
    if tag:
        round_text = g("%(event)s, round %(round)s") % {"event": tag.get("event", ""), "round": tag.get("round", "")}
        if rnd.get("state") == "playing" and rnd.get("hands"):
            round_text += " · " + g("hand %(played)s of %(hands)s") % {"played": rnd.get("hands_played"),
                                                                      "hands": rnd.get("hands")}
        if rnd.get("seconds_left") is not None:
            minutes = max(0, round(rnd["seconds_left"] / 60))
            round_text += " · " + words.ngettext("%(num)d minute left", "%(num)d minutes left", minutes) % {
                "num": minutes}
    return {
        "state": state, "state_words": words.state(state), "hint": words.state_hint(state),
        "tone": STATE_TONE.get(state or "", "calm"), "fault": fault,
        "link_up": bool(link.get("up")) if link else False, "hand": book.get("hand"),
        "round_wind": words.round_wind(book.get("round_wind")), "dealer": seats[dealer]["name"] if book else None,
        "streak": book.get("dealer_streak") or 0, "dice": book.get("dice") or [],
        "seats": seats, "stacking": counted is not None, "target": target, "round": round_text,
        "rules": ruleset_title(chips.get("rules")),
        "key": hands_key(status),
        "commitment": _commitment(book.get("commitment")),
        # the hand the walls up are (or will be) dealt for: the next one until the dice are thrown
        "walls_hand": (book.get("hand") or 0) + (1 if state in NOT_DEALT else 0),
    }


def _commitment(commitment: Any) -> dict[str, str] | None:
    """The commitment of the walls up, for the players to keep before the dice: its text and QR code."""
    if not (isinstance(commitment, str) and len(commitment) == 64 and all(c in HEX for c in commitment)):
        return None
    return {"text": commitment, "qr": _qr(commitment)}


@functools.lru_cache(maxsize=4)
def _qr(commitment: str) -> str:
    from firmware.web.fairplay import qr_svg

    return qr_svg(commitment)


def hands_key(status: dict[str, Any]) -> str:
    """What changes when the game's list of hands may have: the game, the hand, whether it is open, its winner."""
    book, chips = status.get("book") or {}, status.get("chips") or {}
    return f"{chips.get('game')}.{book.get('hand')}.{book.get('hand_open')}.{book.get('last_winner')}"


def ruleset_title(rules: str | None) -> str | None:
    """A rule set's own title (锦州麻将, MCR / 国粹麻将), never its file name."""
    if not rules:
        return None
    from firmware.faults import ConfigError
    from firmware.rules.registry import load_ruleset

    try:
        return load_ruleset(rules).title
    except (ConfigError, ValueError):
        return None


def hand_line(view: dict[str, Any], status: dict[str, Any], words: Words) -> dict[str, Any]:
    """One hand of :func:`firmware.web.scoreboard.hand_view` as the player's view lists it."""
    g = words.gettext
    winners = [{"who": who(words, status, w["side"]), "wind": words.seat_wind(w["wind"])} for w in view["winners"]]
    gains = [0] * SIDES
    for line in view["payments"]:
        for side, amount in enumerate(line["amounts"]):
            gains[side] += amount
    if view["drawn"]:
        result = g("Drawn")
    elif winners:
        result = ", ".join(g("%(who)s (%(wind)s) won") % w for w in winners)
    else:
        result = g("No win")
    money = [{"who": who(words, status, side), "amount": gains[side]} for side in range(SIDES)]
    won = sum(gains[w["side"]] for w in view["winners"]) if view["winners"] else None
    return {"hand": view["hand"], "result": result, "fans": view["fans"], "total": view["total"],
            "unit": words.unit(view["unit"].key), "value_total": view["unit"].value(view["total"]),
            "won": won, "money": money, "payments": view["payments"]}


class HandsCache:
    """The rendered hands of the last few (game, hand, locale) keys: a phone polling, or many, read the table
    database once per change."""

    def __init__(self, kept: int = 8) -> None:
        self.kept = kept
        self.entries: OrderedDict[tuple[str, str], str] = OrderedDict()

    def get(self, key: tuple[str, str]) -> str | None:
        return self.entries.get(key)

    def put(self, key: tuple[str, str], html: str) -> None:
        self.entries[key] = html
        self.entries.move_to_end(key)
        while len(self.entries) > self.kept:
            self.entries.popitem(last=False)
