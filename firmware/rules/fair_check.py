"""Checking a hand against its committed walls: the reveal hashes to the commitment, and deals what was played.

A hand's seal (:mod:`firmware.tiles.fair_walls`) is checked in three steps,
each from the hand's own data:

1. the revealed preimage hashes to the commitment published before the dice;
2. the dice: electronic dice must be the faces the revealed seed gives;
   physical dice were thrown by people after the commitment and are taken
   as recorded;
3. the revealed walls, dealt with those dice by the table's own dealing
   procedure (:func:`firmware.tiles.dealing.deal`, the rule set's
   parameters), give exactly each side's starting tiles (the ``dealt`` of
   the hand's record, and its ``deal`` actions), the flowers replaced at the
   start, and every draw of the record in order: a live draw from the next
   place of the live wall, a replacement (after a flower or a kong) from the
   tail; a ``wall_end`` only when the wall really ran out.

A record without draws (a referee at a real table writes what it sees, not
every draw) is checked as far as it goes: its deal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from firmware.rules.hand_record import Action, BadRecord, HandRecord, Verb
from firmware.rules.ruleset import RuleSet
from firmware.tiles.dealing import Deal, deal
from firmware.tiles.fair_walls import SealError, commitment_of, dice_faces, parse_preimage
from firmware.tiles.tile import code, is_flower
from firmware.tiles.wall import Position, Wall

KONG_VERBS = (Verb.KONG, Verb.ADDED_KONG, Verb.CONCEALED_KONG)


@dataclass
class SealedHand:
    """What a hand's record says about its seal (a row of the table database, or a line of an export)."""

    hand: int
    set_id: str
    dealer: int
    dice: tuple[int, ...]
    dice_by: str                       # "physical" or "electronic": how this hand's dice were thrown
    commitment: str
    reveal: str | None                 # the preimage (None: the hand is not over, nothing is revealed)
    record: dict[str, Any] | None      # the hand's record (HandRecord.to_json), None when not written

    def to_json(self) -> dict[str, Any]:
        return {"hand": self.hand, "set_id": self.set_id, "dealer": self.dealer, "dice": list(self.dice),
                "dice_by": self.dice_by, "commitment": self.commitment, "reveal": self.reveal, "record": self.record}

    @classmethod
    def from_json(cls, data: Any) -> "SealedHand":
        """One exported line; ValueError names what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("a hand is a JSON object")
        try:
            dice = data["dice"]
            if not (isinstance(dice, list) and all(type(d) is int for d in dice)):
                raise ValueError("'dice' is a list of faces")
            hand, dealer = data["hand"], data["dealer"]
            if type(hand) is not int or type(dealer) is not int:
                raise ValueError("'hand' and 'dealer' are integers")
            texts = [data["set_id"], data["dice_by"], data["commitment"]]
            if not all(isinstance(t, str) for t in texts):
                raise ValueError("'set_id', 'dice_by' and 'commitment' are text")
            reveal, record = data.get("reveal"), data.get("record")
            if reveal is not None and not isinstance(reveal, str):
                raise ValueError("'reveal' is text or null")
            if record is not None and not isinstance(record, dict):
                raise ValueError("'record' is an object or null")
        except KeyError as exc:
            raise ValueError(f"field {exc.args[0]!r} is missing") from None
        return cls(hand, texts[0], dealer, tuple(dice), texts[1], texts[2], reveal, record)


@dataclass
class Check:
    """The outcome for one hand: ``problems`` empty when it passed; ``pending`` when it is not revealed yet."""

    hand: int
    problems: list[str] = field(default_factory=list)
    pending: bool = False
    draws: int = 0                     # draws and replacements checked against the walls

    @property
    def ok(self) -> bool:
        return not self.problems


def check_hand(sealed: SealedHand, rules_of: Callable[[str], RuleSet]) -> Check:
    """Check one hand (``rules_of(name)``: the rule set its record names)."""
    out = Check(sealed.hand)
    if not sealed.commitment:
        out.problems.append("no commitment was recorded for this hand (dealt before committed walls, or removed)")
        return out
    if sealed.reveal is None:
        out.pending = True
        return out
    if commitment_of(sealed.reveal) != sealed.commitment:
        out.problems.append("the reveal does not hash to the commitment (walls, dice seed or nonce changed)")
        return out
    try:
        walls = parse_preimage(sealed.reveal)
    except SealError as exc:
        out.problems.append(f"the reveal is not in the canonical encoding: {exc}")
        return out
    if walls.set_id != sealed.set_id:
        out.problems.append(f"the reveal seals set {walls.set_id}, the hand was dealt from set {sealed.set_id}")
    if sealed.record is None:
        out.problems.append("the hand's record is missing")
        return out
    try:
        record = HandRecord.from_json(sealed.record)
        rules = rules_of(record.rules)
    except (BadRecord, ValueError, OSError) as exc:
        out.problems.append(f"the hand's record cannot be read: {exc}")
        return out
    if record.dealer != sealed.dealer:
        out.problems.append(f"the record's dealer is side {record.dealer}, the deal's side {sealed.dealer}")
    if sealed.dice_by == "electronic":
        expected = dice_faces(walls.seed, rules.throws)
        if sealed.dice != expected:
            out.problems.append(f"electronic dice {_faces(sealed.dice)}: the revealed seed gives {_faces(expected)}")
    elif sealed.dice_by != "physical":
        out.problems.append(f"dice thrown by {sealed.dice_by!r}: physical or electronic")
    try:
        wall = Wall.from_sides([list(side) for side in walls.sides])
        dealt = deal(wall, rules.deal_rules, sealed.dice, sealed.dealer)
    except ValueError as exc:
        out.problems.append(f"the revealed walls cannot be dealt with dice {_faces(sealed.dice)}: {exc}")
        return out
    for side, tiles in sorted(record.dealt.items()):
        mine = "".join("?" if k is None else code(k) for k in dealt.hand_tiles(wall, side))
        if mine != tiles:
            out.problems.append(f"side {side} was dealt {tiles}; the revealed walls deal {mine}")
    if any(a.verb is Verb.DEAL for a in record.actions):
        _replay(record.actions, wall, dealt, sealed.dealer, out)
    return out


def _faces(dice: tuple[int, ...]) -> str:
    return "+".join(map(str, dice)) or "none"


class _Replay:
    """The record's tile-taking actions, one by one, against the places the walls give."""

    def __init__(self, actions: list[Action], wall: Wall, dealt: Deal, out: Check) -> None:
        self.actions, self.wall, self.dealt, self.out = actions, wall, dealt, out
        self.i = 0

    def next(self) -> Action | None:
        action = self.actions[self.i] if self.i < len(self.actions) else None
        self.i += 1
        return action

    def face(self, position: Position) -> int | None:
        return self.wall[position]

    def expect(self, verb: Verb, side: int, tile: int | None, where: str) -> bool:
        action = self.next()
        got = action.text() if action is not None else "the record's end"
        if action is None or action.verb is not verb or action.side != side or action.tile != tile:
            want = f"{side} {verb.value} {'?' if tile is None else code(tile)}"
            self.out.problems.append(f"action {self.i}: the walls give '{want}' ({where}), the record has {got!r}")
            return False
        self.out.draws += 1
        return True

    def from_tail(self, side: int, kong: bool) -> bool:
        """A replacement chain: flowers shown and replaced until a tile is drawn; False when it went wrong or the
        wall ran out (then the record must say so)."""
        while True:
            position = self.dealt.replacement(kong=kong)
            kong = False
            if position is None:
                action = self.next()
                if action is None or action.verb is not Verb.WALL_END:
                    self.out.problems.append(f"action {self.i}: the tail ran out, the record goes on")
                return False
            kind = self.face(position)
            if kind is not None and is_flower(kind):
                if not self.expect(Verb.FLOWER, side, kind, f"replacement from {position}"):
                    return False
                continue
            return self.expect(Verb.DRAW, side, kind, f"replacement from {position}")


def _replay(actions: list[Action], wall: Wall, dealt: Deal, dealer: int, out: Check) -> None:
    r = _Replay(actions, wall, dealt, out)
    for side in sorted(dealt.hands):
        action = r.next()
        kinds = dealt.hand_tiles(wall, side)
        want = tuple(sorted(k for k in kinds if k is None or not is_flower(k)))
        if action is None or action.verb is not Verb.DEAL or action.side != side or action.hand != want:
            out.problems.append(f"action {r.i}: side {side}'s starting hand is not what the walls deal")
            return
    for offset in range(4):                          # 补花: dealer first, then counter-clockwise
        side = (dealer + offset) % 4
        for kind in dealt.hand_tiles(wall, side):
            if kind is not None and is_flower(kind):
                if not r.expect(Verb.FLOWER, side, kind, "a flower dealt") or not r.from_tail(side, kong=False):
                    return
    after: Verb | None = None                        # FLOWER or a kong: the next tile comes from the tail
    while (action := r.next()) is not None:
        if action.verb in (Verb.DRAW, Verb.FLOWER):
            r.i -= 1
            if after is not None:
                ok = r.from_tail(action.side, kong=after in KONG_VERBS)
            else:
                position = dealt.draw()
                if position is None:
                    out.problems.append(f"action {r.i + 1}: a draw after the live wall ran out")
                    return
                kind = r.face(position)
                ok = r.expect(action.verb if kind is not None and is_flower(kind) else Verb.DRAW, action.side, kind,
                              f"live draw from {position}")
                if ok and action.verb is Verb.FLOWER:
                    ok = r.from_tail(action.side, kong=False)
            if not ok:
                return
            after = None
        elif action.verb in KONG_VERBS:
            after = action.verb
        elif action.verb is Verb.WALL_END:
            left = dealt.remaining()
            if after is None and left:
                out.problems.append(f"action {r.i}: the record ends the wall with {left} tiles still to draw")
            return
        else:
            after = None
