"""A biased shuffle, injected into the table model: a clumping magnet ring, and dice that favour a seat.

Two ways a table stops being fair, both built into the mechanics the
simulator models (never into the controller):

* **Clumping** (``clump=P``): a worn magnet ring lifts tiles in clumps, so
  the tile a head receives next is, with extra probability ``P``, one of
  the same suit as the tile it received last (:class:`ClumpRing`, used by
  :class:`sim.models.turntable.TurntableModel` when it picks the tile it
  lifts).  Neighbouring tiles in a wall then share their suit more often
  than a fair shuffle gives.
* **A favoured seat** (``favour=SIDE:PAIRS``): rigged dice, as sold with
  cheating tables - the dome lands on the faces the rig chooses.  Knowing
  the walls it stacked and the dealer the lamps show, the rig picks, from
  every break the dice can give, the one that deals the favoured seat the
  most pairs, just often enough that the seat is dealt ``PAIRS`` more pairs
  a hand on average than with fair dice (:class:`FavourRig`; the realised
  extra pairs are kept in :attr:`FavourRig.gain`).  Other hands the dice
  are fair.

:func:`synthetic_wall` lays a wall with the same ring (uniform, or
clumping) without the rest of the table, for the benchmark's thousands of
runs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from firmware.fairness.patterns import HAND_TILES, pairs, suit_class
from firmware.tiles.dealing import DealRules, deal
from firmware.tiles.wall import Position, Wall

if TYPE_CHECKING:
    from sim.world import TableWorld

SIDES = 4


@dataclass(frozen=True)
class ShuffleBias:
    """What is injected: a favoured side (0..3 = E S W N) and its extra pairs, and a clumping probability."""

    favour_side: int | None = None
    favour_pairs: float = 0.0
    clump_p: float = 0.0

    def to_dict(self) -> dict:
        return {"favour": None if self.favour_side is None else f"{'ESWN'[self.favour_side]}:{self.favour_pairs:g}",
                "clump": self.clump_p}


class ClumpRing:
    """The worn ring's choice of the next tile for a head."""

    def __init__(self, p: float, rng: random.Random) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"clump probability must be 0..1, got {p}")
        self.p = p
        self.rng = rng

    def pick(self, kinds: Sequence[int], last_kind: int | None) -> int:
        """The index in ``kinds`` (the tiles on the disk) of the tile lifted next."""
        if last_kind is not None and self.rng.random() < self.p:
            suit = suit_class(last_kind)
            same = [i for i, k in enumerate(kinds) if suit_class(k) == suit]
            if same:
                return same[self.rng.randrange(len(same))]
        return self.rng.randrange(len(kinds))


def synthetic_wall(kinds: Sequence[int], rng: random.Random, ring: ClumpRing | None = None) -> Wall:
    """A wall laid as the table lays it (see :func:`synthetic_sides`)."""
    sides = synthetic_sides(kinds, rng, ring)
    return Wall.from_sides([[tuple(seq[i:i + 2]) for i in range(0, len(seq), 2)] for seq in sides])


def synthetic_sides(kinds: Sequence[int], rng: random.Random, ring: ClumpRing | None = None) -> list[list[int]]:
    """Each side's tiles in stacking order: the ring drops a tile at a random head with room, each head stacks what it
    receives in order (bottom, top, next stack); ``ring`` None is a fair shuffle."""
    pool = list(kinds)
    per_side = len(pool) // SIDES
    sides: list[list[int]] = [[] for _ in range(SIDES)]
    while pool:
        open_sides = [s for s in range(SIDES) if len(sides[s]) < per_side] or list(range(SIDES))
        side = open_sides[rng.randrange(len(open_sides))]
        last = sides[side][-1] if sides[side] else None
        i = ring.pick(pool, last) if ring is not None else rng.randrange(len(pool))
        pool[i], pool[-1] = pool[-1], pool[i]
        sides[side].append(pool.pop())
    return sides


def _representative(total: int) -> tuple[int, int]:
    high = min(6, total - 1)
    return (high, total - high)


class FavourRig:
    """Rigged dice for ``side``: ``pairs`` extra pairs a hand on average, when the walls allow it."""

    def __init__(self, side: int, pairs_per_hand: float, rules: DealRules) -> None:
        if not 0 <= side < SIDES:
            raise ValueError(f"favoured side must be 0..3, got {side}")
        self.side = side
        self.target = pairs_per_hand
        self.rules = rules
        self.hands = 0
        self.gain = 0.0             # extra pairs dealt to the side so far, against the fair dice's deal
        self._positions: dict[tuple, list[Position]] = {}     # (dealer, faces, wall shape): at most 4 x 121

    def _pairs(self, wall: Wall, faces: tuple[int, ...], dealer: int) -> int | None:
        key = (dealer, faces, wall.stacks_per_side, len(wall))
        positions = self._positions.get(key)
        if positions is None:
            positions = self._positions[key] = deal(wall, self.rules, faces, dealer).hands[self.side][:HAND_TILES]
        hand = [wall[p] for p in positions]
        if len(hand) < HAND_TILES or any(k is None for k in hand):
            return None
        return pairs(hand)      # type: ignore[arg-type]

    def candidates(self) -> list[tuple[int, ...]]:
        """One set of faces for every break the dice can give."""
        if self.rules.throws == 1:
            return [(a, b) for a in range(1, 7) for b in range(a, 7)]
        return [_representative(t1) + _representative(t2) for t1 in range(2, 13) for t2 in range(2, 13)]

    def choose(self, wall: Wall, dealer: int, fair: tuple[int, ...]) -> tuple[int, ...]:
        """The faces the dome shows: ``fair`` (what it would have shown), or the rig's pick."""
        fair_pairs = self._pairs(wall, fair, dealer)
        if fair_pairs is None or self.target <= 0:
            return fair
        self.hands += 1
        if self.gain >= self.target * self.hands:
            return fair
        best, best_pairs = fair, fair_pairs
        for faces in self.candidates():
            n = self._pairs(wall, faces, dealer)
            if n is not None and n > best_pairs:
                best, best_pairs = faces, n
        self.gain += best_pairs - fair_pairs
        return best


def dealer_from_lamps(lamps: dict[str, bool], fallback: int) -> int:
    """The dealer the lamps show: the first of the lit run (a streak lights the next ones); else ``fallback``."""
    lit = {s for s in range(SIDES) if lamps.get(f"led_dealer{s}")}
    firsts = [s for s in sorted(lit) if (s - 1) % SIDES not in lit]
    return firsts[0] if len(firsts) == 1 else fallback


class FavourDice:
    """The dome of a rigged table: at the first spin of a roll the rig plans every throw's faces from the walls on
    the table top and the dealer the lamps show; each spin then lands on the planned faces."""

    def __init__(self, rig: FavourRig, world: "TableWorld", rng: random.Random) -> None:
        self.rig = rig
        self.world = world
        self.rng = rng
        self._planned: list[int] = []
        self._walls: object = None
        self._dealer = 0

    def faces(self, fair: tuple[int, int]) -> tuple[int, int]:
        if not self._planned or self._walls is not self.world.walls:
            self._walls = self.world.walls
            self._planned = list(self._plan(fair))
        out, self._planned = self._planned[:2], self._planned[2:]
        return (out[0], out[1])

    def _plan(self, fair: tuple[int, int]) -> tuple[int, ...]:
        faces = fair + tuple(self.rng.randint(1, 6) for _ in range(2 * (self.rig.rules.throws - 1)))
        sides = [[tuple(t.kind for t in stack) for stack in side] for side in self.world.walls]
        if not all(sides) or len({len(s) for s in sides}) != 1:
            return faces                        # no walls up (or a side short): nothing to rig
        self._dealer = dealer_from_lamps(self.world.lamps, self._dealer)
        return self.rig.choose(Wall.from_sides(sides), self._dealer, faces)


def inject_bias(world: "TableWorld", bias: ShuffleBias | None, rules: DealRules, seed: int) -> None:
    """Fit ``world``'s ring and dice with ``bias`` (None or no bias: they stay fair, and draw nothing more)."""
    if bias is None:
        return
    if bias.clump_p > 0:
        ring = ClumpRing(bias.clump_p, random.Random(f"mjtable-sim-clump:{seed}"))

        def pick(head, hopper) -> int:
            last = head.track[-1] if head.track else (head.groove[-1][-1] if head.groove else None)
            return ring.pick([t.kind for t in hopper], last.kind if last is not None else None)

        world.turntable.ring_pick = pick
    if bias.favour_side is not None and bias.favour_pairs > 0:
        world.dice.rig = FavourDice(FavourRig(bias.favour_side, bias.favour_pairs, rules), world,
                                    random.Random(f"mjtable-sim-favour:{seed}"))


def parse_shuffle_bias(specs: Sequence[str]) -> ShuffleBias | None:
    """``favour=SEAT:PAIRS`` (SEAT one of E S W N, PAIRS > 0) and ``clump=P`` (0 < P <= 1), each at most once;
    ValueError says what is wrong with a spec."""
    if not specs:
        return None
    side, pairs_per_hand, clump = None, 0.0, 0.0
    seen: set[str] = set()
    for spec in specs:
        key, eq, value = spec.partition("=")
        if not eq or key not in ("favour", "clump"):
            raise ValueError(f"--shuffle-bias {spec!r}: favour=SEAT:PAIRS (e.g. favour=E:1) "
                             "or clump=P (e.g. clump=0.1)")
        if key in seen:
            raise ValueError(f"--shuffle-bias {key}= given twice")
        seen.add(key)
        if key == "favour":
            seat, colon, amount = value.partition(":")
            if seat not in ("E", "S", "W", "N") or not colon:
                raise ValueError(f"--shuffle-bias {spec!r}: the seat is one of E S W N, then :PAIRS (favour=E:1)")
            side, pairs_per_hand = "ESWN".index(seat), _number(spec, amount)
            if not 0 < pairs_per_hand <= 3:
                raise ValueError(f"--shuffle-bias {spec!r}: PAIRS must be above 0 and at most 3")
        else:
            clump = _number(spec, value)
            if not 0 < clump <= 1:
                raise ValueError(f"--shuffle-bias {spec!r}: P must be above 0 and at most 1")
    return ShuffleBias(side, pairs_per_hand, clump)


def _number(spec: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"--shuffle-bias {spec!r}: {text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"--shuffle-bias {spec!r}: {text!r} is not a number")
    return value
