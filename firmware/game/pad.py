"""Checking a win from a seat's reader pad: what a real table's referee sees.

A player who declares a win lays the hand on the pad in front of their
seat (reader antennas 4..7 = sides 0..3); the panel says how the tile came
(self-drawn, or whose discard) and which tile it was.  The pad's inventory
gives the tags, the registry the faces; the referee then judges the hand
like any other.  A tag in no registry, or a tile of the wrong set, makes the
read unusable (the table asks for the tiles again) rather than guessed; so
does a set that is not enrolled (its tags name no tile: the hand cannot be
verified, only judged by the people at the table).
Sets the player had exposed are read with the rest; the referee names them
(``parse_melds``, which also says who fed each), since the pad cannot tell
exposed tiles from concealed ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

from firmware.i18n import worded, worded_text
from firmware.reader.driver import ReaderDriver, Reply
from firmware.reader.messages import InventoryPart
from firmware.reader.registry import TileRegistry
from firmware.rules.hand_record import Action, Verb
from firmware.tiles.tile import TileError, code, is_flower, parse

PAD_ANTENNA_BASE = 4
SIDES = 4


@dataclass(frozen=True)
class PadRead:
    kinds: tuple[int, ...] = ()
    flowers: int = 0
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def read_pad(reader: ReaderDriver, side: int, registry: TileRegistry, set_id: str | None,
             done: Callable[[PadRead], None]) -> None:
    """Inventory the pad of ``side`` and name its tiles (``done`` gets the result)."""
    if set_id is not None and registry.counted_only(set_id):
        done(PadRead(problem=worded_text("set %(set)s is not enrolled: the pad cannot name its tiles (%(hint)s)",
                                          set=set_id, hint=registry.enrol_hint())))
        return

    def got(reply: Reply) -> None:
        if not reply.ok:
            done(PadRead(problem=worded_text("pad of side %(side)s not read: %(problem)s", side=side,
                                              problem=format(reply.error or reply.status))))
            return
        uids = [uid for frame in reply.frames for uid in InventoryPart.unpack(frame.payload).uids]
        kinds, flowers = [], 0
        for uid in uids:
            entry = registry.lookup(uid)
            if entry is None:
                done(PadRead(problem=worded_text("unregistered tag %(uid)s on the pad of side %(side)s", uid=uid.hex(),
                                                  side=side)))
                return
            if set_id is not None and entry.set_id != set_id:
                done(PadRead(problem=worded_text("%(tile)s of set %(set)s on the pad of side %(side)s",
                                                  tile=code(entry.kind), set=entry.set_id, side=side)))
                return
            if is_flower(entry.kind):
                flowers += 1
            else:
                kinds.append(entry.kind)
        done(PadRead(tuple(sorted(kinds)), flowers))

    reader.inventory(PAD_ANTENNA_BASE + side, got)


def parse_melds(text: str, side: int) -> list[Action]:
    """Sets a referee names, as actions of the hand's record by ``side``: ``c123p`` a chow, ``p5m`` a pung,
    ``k7s`` a kong on a discard, ``a7s`` a pung made a kong with a drawn tile (加杠), ``K9s`` a concealed kong;
    ``@S`` after a set names the side S that fed it (default: the side to the left, 上家); separated by spaces
    or commas.  ValueError names the bad set."""
    actions: list[Action] = []
    left = (side - 1) % SIDES
    for token in text.replace(",", " ").split():
        body, _, fed = token.partition("@")
        kind, tiles = body[:1], body[1:]
        if fed and (fed not in ("0", "1", "2", "3") or int(fed) == side or kind == "K"):
            raise worded(ValueError, "meld %(meld)r: @SIDE is another side 0..3 (a concealed kong has none)",
                         meld=token)
        feeder = int(fed) if fed else left
        try:
            kinds = parse(tiles)
        except TileError as exc:
            raise worded(ValueError, "meld %(meld)r: %(problem)s", meld=token, problem=exc) from None
        if kind == "c" and len(kinds) == 3 and sorted(kinds) == [min(kinds), min(kinds) + 1, min(kinds) + 2] \
                and min(kinds) < 27 and min(kinds) % 9 <= 6:
            actions.append(Action(Verb.CHOW, side, min(kinds), feeder))
        elif kind in "pkaK" and len(kinds) == 1 and kinds[0] < 34:
            k = kinds[0]
            if kind == "p":
                actions.append(Action(Verb.PUNG, side, k, feeder))
            elif kind == "k":
                actions.append(Action(Verb.KONG, side, k, feeder))
            elif kind == "a":
                actions += [Action(Verb.PUNG, side, k, feeder), Action(Verb.ADDED_KONG, side, k)]
            else:
                actions.append(Action(Verb.CONCEALED_KONG, side, k))
        else:
            raise worded(ValueError, "meld %(meld)r: use c123p (a chow), p5m (a pung), k7s (a kong on a discard), "
                         "a7s (a pung made a kong with a drawn tile), K9s (a concealed kong); @SIDE names the side "
                         "that fed it (default: the one to the left)", meld=token)
    return actions


def meld_tiles(actions: list[Action]) -> list[int]:
    """Every tile of the sets these actions expose (a kong's four)."""
    out: list[int] = []
    for a in actions:
        assert a.tile is not None
        if a.verb is Verb.CHOW:
            out += list(a.chow_tiles)
        elif a.verb is Verb.PUNG:
            out += [a.tile] * 3
        else:
            out += [a.tile] * (1 if a.verb is Verb.ADDED_KONG else 4)
    return out


def standing_from_pad(read: PadRead, win_tile: int, meld_actions: list[Action]) -> tuple[int, ...]:
    """The standing tiles of a declared win as the pad shows them: every tile on the pad but the sets the
    player had exposed (the pad reads them too) and the winning tile.  ValueError when they are not there."""
    if not read.kinds:
        raise ValueError("the pad reads no tiles: the player lays the whole hand (its exposed sets too) on "
                         "their seat pad, then judge again")
    counts = Counter(read.kinds)
    for k in meld_tiles(meld_actions):
        if counts[k] == 0:
            raise ValueError(f"the exposed set with {code(k)} is not on the pad")
        counts[k] -= 1
    if counts[win_tile] == 0:
        raise ValueError(f"the winning tile {code(win_tile)} is not on the pad")
    hand = [k for k in sorted(counts) for _ in range(counts[k])]
    hand.remove(win_tile)
    return tuple(hand)
