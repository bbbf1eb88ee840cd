"""The hand's record: what happened at the table, in order, as the settlement and the referee read it.

A hand is settled from its record alone: the context it was played in (rule
set, hand number, dealer side, round wind, the dealer's streak, 长毛 carried
in, each side's chips at the deal) and its actions in order.  The simulated
game writes every action; a referee at a real table writes what the table
cannot see (the sets exposed and who fed them, kongs, the win, penalties);
``mjtable score`` makes one from a case.  Each action is one line of text,
``SIDE VERB ARGS`` (sides are physical sides 0..3, tiles in the compact
notation):

====================================  ======================================================
``2 deal 123m456p789s1234sE``         a starting hand (the reader knew it)
``2 swap 129m to 3``                  换三张: three tiles of one suit passed to side 3 (all four pass, then all
                                      receive)
``2 void p``                          定缺: side 2's void suit (m, p or s), named after the deal
``0 draw 5m`` / ``0 draw ?``          a draw (the tile, or not known)
``1 discard 9m``                      a discard
``3 chow 789m from 2``                a chow on side 2's discard (the claimed tile is the discard)
``3 pung 9m from 1``                  a pung on side 1's discard
``2 kong 5s from 0``                  a kong on a discard (点杠 / 直杠)
``2 added_kong 5s``                   a drawn tile added to an exposed pung (加杠)
``2 concealed_kong 5s``               a concealed kong (暗杠)
``0 flower 3f``                       a flower shown (and replaced from the tail)
``0 flower_discard``                  a flower thrown away: 相公, that side may not win this hand
``0 win 5s from 2 hand 123m... ...``  a declared win, on side 2's discard (no ``from``: self-drawn), with the
                                      standing tiles without the winning tile and the flags ``kong_win``
                                      (杠上开花 / on a discard: 抢杠和), ``last_tile``, ``flower_win``,
                                      ``last_of_kind``, ``kong_discard`` (杠流泪) and ``flowers N``
``wall_end``                          the live wall ran out: a drawn hand (荒牌 / 黄庄)
``1 show 123m456p789s11p``            a side's standing tiles shown at a drawn end (查叫)
``1 penalty early_draw [to 2]``       a penalty the referee gave (to one harmed side, or each other side)
====================================  ======================================================

A referee who knows less may state facts instead of the actions behind them:
``2 opened`` (side 2 chowed, punged or exposed a kong), ``1 dead`` (相公),
``follow`` (the other three followed the dealer's first discard), ``3 liable``
(side 3 alone pays for the next win: 包付 found at the table), ``1 won`` (side 1
won earlier in this hand and left it: 血战到底).  A win's ``first_turn`` flag is
天胡 (the dealer, before any discard) or 地胡 (on the dealer's first discard).

Parsing is strict and linear; an error names the action and what is wrong
with it, so a bad record is refused rather than half settled.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from firmware.i18n import worded
from firmware.frozen import quick_init
from firmware.tiles.tile import FLOWER_BASE, PLAYABLE, TileError, code, format_tiles, parse, show

SIDES = 4
MAX_ACTIONS = 600            # a hand has at most 144 draws and as many discards, plus claims
WIN_FLAGS = ("kong_win", "last_tile", "flower_win", "last_of_kind", "kong_discard", "first_turn")


class Verb(enum.Enum):
    DEAL = "deal"
    DRAW = "draw"
    DISCARD = "discard"
    CHOW = "chow"
    PUNG = "pung"
    KONG = "kong"
    ADDED_KONG = "added_kong"
    CONCEALED_KONG = "concealed_kong"
    FLOWER = "flower"
    FLOWER_DISCARD = "flower_discard"
    WIN = "win"
    WALL_END = "wall_end"
    PENALTY = "penalty"
    OPENED = "opened"
    DEAD = "dead"
    FOLLOW = "follow"
    LIABLE = "liable"
    SWAP = "swap"
    VOID = "void"
    SHOW = "show"
    WON = "won"


CLAIMS = frozenset({Verb.CHOW, Verb.PUNG, Verb.KONG})
TABLE_VERBS = frozenset({Verb.WALL_END, Verb.FOLLOW})          # no side


def paying_rank(discarder: int, side: int) -> int:
    """Where ``side`` comes among several winners on ``discarder``'s discard: 1 下家, 2 对家, 3 上家 (the order
    the discarder pays them: counter-clockwise from the discarder)."""
    return (side - discarder) % SIDES


def in_paying_order(actions: list["Action"]) -> list["Action"]:
    """``actions`` with every run of wins on one discard (数家同时和牌: one after another, on the same side's same
    tile) in the order the discarder pays them, 下家 first; the rest as they are.  Wins on one discard happen at
    once, so their order in a record says nothing but how they are paid."""
    out: list[Action] = []
    run: list[Action] = []

    def flush() -> None:
        out.extend(sorted(run, key=lambda a: paying_rank(a.source, a.side)))      # (stable)
        run.clear()

    for action in actions:
        one_discard = action.verb is Verb.WIN and action.source is not None
        if not (one_discard and run and (run[0].source, run[0].tile) == (action.source, action.tile)):
            flush()
        if one_discard:
            run.append(action)
        else:
            out.append(action)
    flush()
    return out


class BadRecord(ValueError):
    """A hand's record that cannot be settled; the message names the action at fault."""


@quick_init
@dataclass(frozen=True)
class Action:
    verb: Verb
    side: int | None = None
    tile: int | None = None            # the tile (a chow: its lowest tile); None: not known (a draw)
    source: int | None = None          # the side whose discard was claimed or won on
    hand: tuple[int, ...] = ()         # deal: the starting tiles; win: the standing tiles without the winning tile
    flags: frozenset[str] = frozenset()
    flowers: int | None = None         # win: flowers held (None: count the side's ``flower`` actions)
    kind: str = ""                     # penalty: its kind; void: the suit (m, p or s)
    to: int | None = None              # penalty: the one side it goes to; swap: the side that receives

    @property
    def self_drawn(self) -> bool:
        return self.verb is Verb.WIN and self.source is None

    @property
    def chow_tiles(self) -> tuple[int, int, int]:
        assert self.tile is not None
        return (self.tile, self.tile + 1, self.tile + 2)

    def text(self) -> str:
        """The action as its log line says it (made once: the referee logs each action as it takes it and the
        hand's record gives it again at the end)."""
        said = self.__dict__.get("_text")
        if said is None:
            said = self.__dict__["_text"] = self._text()        # (the action is frozen: its words never change)
        return said

    def _text(self) -> str:
        if self.verb in TABLE_VERBS:
            return self.verb.value
        words = [str(self.side), self.verb.value]
        if self.verb in (Verb.DEAL, Verb.SWAP, Verb.SHOW):
            words.append(format_tiles(self.hand))
        elif self.verb is Verb.CHOW:
            words.append(format_tiles(self.chow_tiles, sort=False))
        elif self.verb in (Verb.PENALTY, Verb.VOID):
            words.append(self.kind)
        elif self.tile is not None:
            words.append(code(self.tile))
        elif self.verb is Verb.DRAW:
            words.append("?")
        if self.source is not None:
            words += ["from", str(self.source)]
        if self.verb is Verb.WIN:
            words += ["hand", format_tiles(self.hand) if self.hand else "-"]
            words += [f for f in WIN_FLAGS if f in self.flags]
            if self.flowers is not None:
                words += ["flowers", str(self.flowers)]
        if self.to is not None:
            words += ["to", str(self.to)]
        return " ".join(words)

    def __str__(self) -> str:
        return self.text()


@dataclass
class HandRecord:
    """One hand: its context and its actions, in order.  ``chips`` by side at the deal (None: not known,
    no chips floor applies)."""

    rules: str
    hand: int = 0
    dealer: int = 0
    round_wind: int = 0
    streak: int = 0                    # hands the dealer has kept the seat (竞技麻将 倍打 when > 0)
    long_hair: int = 0                 # 长毛 carried into this hand (辽宁)
    chips: tuple[int, ...] | None = None
    actions: list[Action] = field(default_factory=list)
    dealt: dict[int, str] = field(default_factory=dict)    # the starting tiles the reader knew, by side (for people)

    def add(self, action: Action) -> int:
        """Append an action; its index (the ``event`` of the payments it causes)."""
        if len(self.actions) >= MAX_ACTIONS:
            raise worded(BadRecord, "more than %(most)s actions in one hand", most=MAX_ACTIONS)
        self.actions.append(action)
        return len(self.actions) - 1

    def seat_wind(self, side: int) -> int:
        return (side - self.dealer) % SIDES

    def to_json(self) -> dict[str, Any]:
        return {"rules": self.rules, "hand": self.hand, "dealer": self.dealer, "round_wind": "ESWN"[self.round_wind],
                "streak": self.streak, "long_hair": self.long_hair,
                "chips": list(self.chips) if self.chips is not None else None,
                **({"dealt": {str(s): t for s, t in sorted(self.dealt.items())}} if self.dealt else {}),
                "actions": [a.text() for a in self.actions]}

    @classmethod
    def from_json(cls, data: Any) -> "HandRecord":
        """A record from its JSON form (``to_json``), several wins on one discard in the order they are paid
        (:func:`in_paying_order`); BadRecord names the field at fault."""
        if not isinstance(data, dict):
            raise worded(BadRecord, "a hand's record is a JSON object")
        unknown = sorted(set(data) - {"rules", "hand", "dealer", "round_wind", "streak", "long_hair", "chips",
                                      "actions", "dealt"})
        if unknown:
            raise worded(BadRecord, "unknown field %(name)r in the hand's record", name=unknown[0])
        rules = data.get("rules")
        if not isinstance(rules, str) or not rules:
            raise worded(BadRecord, "field 'rules' must name the rule set")
        wind = data.get("round_wind", "E")
        if wind not in ("E", "S", "W", "N"):
            raise worded(BadRecord, "field 'round_wind' must be E, S, W or N, got %(got)s", got=f"{wind!r:.20}")
        chips = data.get("chips")
        if chips is not None:
            if not (isinstance(chips, list) and len(chips) == SIDES and all(type(c) is int and abs(c) <= 10**12
                                                                              for c in chips)):
                raise worded(BadRecord, "field 'chips' must be four integers (by side) or null")
            chips = tuple(chips)
        actions = data.get("actions", [])
        if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
            raise worded(BadRecord, "field 'actions' must be an array of action lines")
        if len(actions) > MAX_ACTIONS:
            raise worded(BadRecord, "%(count)s actions; a hand has at most %(most)s", count=len(actions),
                         most=MAX_ACTIONS)
        dealt = data.get("dealt") or {}
        if not isinstance(dealt, dict) or any(k not in ("0", "1", "2", "3") or not isinstance(v, str) or len(v) > 60
                                              for k, v in dealt.items()):
            raise worded(BadRecord, "field 'dealt' maps sides 0..3 to their starting tiles")
        record = cls(rules, _int(data, "hand", 0, 10**9), _int(data, "dealer", 0, SIDES - 1), "ESWN".index(wind),
                     _int(data, "streak", 0, 1000), _int(data, "long_hair", 0, 1000), chips,
                     dealt={int(k): v for k, v in dealt.items()})
        record.actions += in_paying_order([parse_action(line, i) for i, line in enumerate(actions)])
        return record


def _int(data: dict, name: str, low: int, high: int) -> int:
    value = data.get(name, low)
    if type(value) is not int or not low <= value <= high:
        raise worded(BadRecord, "field '%(name)s' must be an integer from %(low)s to %(high)s, got %(got)s", name=name,
                     low=low, high=high, got=f"{value!r:.20}")
    return value


def parse_action(line: str, index: int = 0) -> Action:
    """One action line (see the module's table); BadRecord names it."""
    words = line.split()
    if not words:
        raise worded(BadRecord, "action %(index)s (%(line)s): empty", index=index, line=show(line, 60))
    try:
        if words[0] in (v.value for v in TABLE_VERBS):
            if len(words) != 1:
                raise worded(BadRecord, "takes no side and no arguments")
            return Action(Verb(words[0]))
        side = _side(words[0])
        if len(words) < 2:
            raise worded(BadRecord, "a side and a verb")
        try:
            verb = Verb(words[1])
        except ValueError:
            raise worded(BadRecord, "unknown verb %(verb)s; verbs: %(verbs)s", verb=show(words[1], 20),
                         verbs=", ".join(v.value for v in Verb)) from None
        if verb in TABLE_VERBS:
            raise worded(BadRecord, "'%(verb)s' takes no side", verb=verb.value)
        return _parse(verb, side, words[2:])
    except (TileError, BadRecord) as exc:
        raise worded(BadRecord, "action %(index)s (%(line)s): %(why)s", index=index, line=show(line, 60),
                     why=exc) from None


def _side(word: str) -> int:
    if word not in ("0", "1", "2", "3"):
        raise worded(BadRecord, "side %(side)s: a side is 0, 1, 2 or 3", side=show(word, 10))
    return int(word)


def _one_tile(word: str, flowers: bool = False) -> int:
    kinds = parse(word)
    if len(kinds) != 1:
        raise worded(BadRecord, "one tile expected, got %(got)s", got=show(word, 20))
    kind = kinds[0]
    if flowers != (kind >= FLOWER_BASE):
        if flowers:
            raise worded(BadRecord, "%(tile)s is not a flower", tile=code(kind))
        raise worded(BadRecord, "%(tile)s is a flower", tile=code(kind))
    return kind


def _parse(verb: Verb, side: int, args: list[str]) -> Action:
    rest = list(args)
    source = to = None
    if "from" in rest:
        i = rest.index("from")
        if i + 1 >= len(rest):
            raise worded(BadRecord, "'from' needs a side")
        source = _side(rest[i + 1])
        del rest[i:i + 2]
        if source == side:
            raise worded(BadRecord, "a side cannot claim or win on its own discard")
    if "to" in rest and verb in (Verb.PENALTY, Verb.SWAP):
        i = rest.index("to")
        if i + 1 >= len(rest):
            raise worded(BadRecord, "'to' needs a side")
        to = _side(rest[i + 1])
        del rest[i:i + 2]
        if to == side:
            raise worded(BadRecord, "a %(verb)s goes to another side", verb=verb.value)
    needs_source = verb in CLAIMS
    if needs_source and source is None:
        raise worded(BadRecord, "a %(verb)s says whose discard it took: 'from SIDE'", verb=verb.value)
    if source is not None and not (needs_source or verb is Verb.WIN):
        raise worded(BadRecord, "a %(verb)s takes no 'from'", verb=verb.value)
    if verb is Verb.WIN:
        return _win(side, source, rest)
    if verb in (Verb.FLOWER_DISCARD, Verb.OPENED, Verb.DEAD, Verb.LIABLE, Verb.WON):
        _none(rest)
        return Action(verb, side)
    if verb is Verb.VOID:
        if len(rest) != 1 or rest[0] not in ("m", "p", "s"):
            raise worded(BadRecord, "a void names its suit: m, p or s")
        return Action(verb, side, kind=rest[0])
    if verb is Verb.SWAP and to is None:
        raise worded(BadRecord, "a swap says who receives the tiles: 'to SIDE'")
    if verb is Verb.PENALTY:
        if len(rest) != 1 or not rest[0].replace("_", "").isalnum() or len(rest[0]) > 40:
            raise worded(BadRecord, "a penalty names its kind (e.g. early_draw)")
        return Action(verb, side, kind=rest[0], to=to)
    if not rest:
        raise worded(BadRecord, "a %(verb)s names its tile", verb=verb.value)
    word = rest.pop(0)
    _none(rest)
    if verb is Verb.DEAL:
        hand = tuple(parse(word))
        if len(hand) > 14 + 8:
            raise worded(BadRecord, "%(count)s tiles dealt to one side", count=len(hand))
        return Action(verb, side, hand=hand)
    if verb in (Verb.SWAP, Verb.SHOW):
        hand = tuple(sorted(parse(word)))
        if any(k >= PLAYABLE for k in hand) or len(hand) > (3 if verb is Verb.SWAP else 14):
            raise worded(BadRecord, "a %(verb)s names at most %(most)s tiles and no flower", verb=verb.value,
                         most=3 if verb is Verb.SWAP else 14)
        return Action(verb, side, hand=hand, to=to)
    if verb is Verb.DRAW and word == "?":
        return Action(verb, side)
    if verb is Verb.CHOW:
        tiles = sorted(parse(word))
        if len(tiles) != 3 or tiles != [tiles[0], tiles[0] + 1, tiles[0] + 2] or tiles[0] >= 27 or tiles[0] % 9 > 6:
            raise worded(BadRecord, "a chow is three consecutive tiles of one suit, got %(got)s", got=show(word, 20))
        return Action(verb, side, tiles[0], source)
    if verb in (Verb.DRAW, Verb.FLOWER):
        return Action(verb, side, _one_tile(word, flowers=verb is Verb.FLOWER), source)
    kind = _one_tile(word)
    return Action(verb, side, kind, source)


def _none(rest: list[str]) -> None:
    if rest:
        raise worded(BadRecord, "unexpected %(got)s", got=show(" ".join(rest), 30))


def _win(side: int, source: int | None, rest: list[str]) -> Action:
    if not rest:
        raise worded(BadRecord, "a win names its winning tile")
    tile = _one_tile(rest.pop(0))
    hand: tuple[int, ...] = ()
    flags: set[str] = set()
    flowers = None
    while rest:
        word = rest.pop(0)
        if word == "hand":
            if not rest:
                raise worded(BadRecord, "'hand' needs the standing tiles")
            text = rest.pop(0)
            hand = () if text == "-" else tuple(sorted(parse(text)))
            if any(k >= PLAYABLE for k in hand) or len(hand) > 13:
                raise worded(BadRecord, "the standing hand holds at most 13 tiles and no flower")
        elif word == "flowers":
            if not rest or rest[0] not in [str(n) for n in range(9)]:
                raise worded(BadRecord, "'flowers' needs a count 0..8")
            flowers = int(rest.pop(0))
        elif word in WIN_FLAGS:
            flags.add(word)
        else:
            raise worded(BadRecord, "unexpected %(got)s (flags: %(flags)s)", got=show(word, 20),
                         flags=", ".join(WIN_FLAGS))
    return Action(Verb.WIN, side, tile, source, hand, frozenset(flags), flowers)

