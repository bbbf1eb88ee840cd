"""The break, the deal, the draw order and where a hand ends, from the dice.

Dice totals count seats counter-clockwise from the dealer (dealer = 1):
5/9 dealer, 2/6/10 下家, 3/7/11 对家, 4/8/12 上家.  With **one throw**
(竞技麻将, 辽宁, 锦州) the total picks the wall and the stack (四川: the total
picks the wall, the smaller die the stack); with **two
throws** (MCR / 国粹) the first total picks the second thrower, whose wall is
broken at the stack given by the sum of both throws.  Stacks count from the
right end of the chosen wall as its owner sees it; a count past the wall's
end runs on into the next wall clockwise.

From the break the live wall runs clockwise, top tile before bottom: three
rounds of two stacks for each seat in turn (dealer first), then 跳牌 (the
dealer takes the tops of the 1st and 3rd next stacks, the others one tile
each).  Replacement draws (flowers, kongs) come from the tail, the far end
of the same sequence.  The hand is drawn out when the live draws reach the
kept tail (none for MCR and 竞技麻将, 16 tiles plus 2 per kong for the
northeastern rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from firmware.tiles.wall import SIDES, Position, Wall, position_at


@dataclass(frozen=True)
class DealRules:
    """The dealing parameters of a rule set (``config/rules/*.toml`` [deal])."""

    throws: int = 2                 # 1 or 2
    kept_tail: int = 0              # tiles never drawn (northeastern rules: 16)
    kept_per_kong: int = 0          # more kept per kong declared (northeastern: 2)
    stack_by: str = "total"         # one throw: the stack counted by the dice's ``total`` or the ``smaller_die``


@dataclass(frozen=True)
class Break:
    dice: tuple[int, ...]
    dealer_side: int
    thrower_side: int               # who threw the deciding dice (dealer for one throw)
    wall_side: int                  # the wall that is broken
    stack: int                      # the first stack taken, counted from that wall's right end

    def describe(self) -> str:
        seat = ("dealer", "下家", "对家", "上家")[(self.wall_side - self.dealer_side) % SIDES]
        return (f"dice {'+'.join(map(str, self.dice))} -> wall of side {self.wall_side} ({seat}), "
                f"stack {self.stack} from its right end")


def seat_offset(total: int) -> int:
    """Seats counter-clockwise from the thrower picked by a dice total (0 = the thrower)."""
    return (total - 1) % SIDES


def find_break(rules: DealRules, dice: tuple[int, ...], dealer_side: int) -> Break:
    if any(not 1 <= d <= 6 for d in dice):
        raise ValueError(f"dice must show 1..6, got {dice}")
    if rules.throws == 1:
        if len(dice) != 2:
            raise ValueError("one throw of two dice: give two faces, e.g. 3,4")
        total = sum(dice)
        side = (dealer_side + seat_offset(total)) % SIDES
        return Break(dice, dealer_side, dealer_side, side, min(dice) if rules.stack_by == "smaller_die" else total)
    if len(dice) != 4:
        raise ValueError("two throws of two dice: give four faces, e.g. 3,4,2,5")
    first = dice[0] + dice[1]
    thrower = (dealer_side + seat_offset(first)) % SIDES
    return Break(dice, dealer_side, thrower, thrower, first + dice[2] + dice[3])


def live_sequence(wall: Wall, brk: Break) -> list[Position]:
    """Every position in drawing order from the break (top before bottom), round the table."""
    order: list[Position] = []
    if wall.stacks_per_side < 1:
        raise ValueError("a wall with no stacks cannot be dealt")     # (counting round it would never end)
    side, stack = brk.wall_side, brk.stack
    while stack > wall.stacks_per_side:          # a long count runs on into the next wall clockwise
        stack -= wall.stacks_per_side
        side = (side - 1) % SIDES
    for _ in range(SIDES * wall.stacks_per_side):
        for level in wall.stack_levels(side, stack):
            order.append(position_at(side, stack, level))
        stack += 1
        if stack > wall.stacks_per_side:
            stack = 1
            side = (side - 1) % SIDES
    return order


@dataclass
class Deal:
    """Who holds what at the start, and the order of everything that follows."""

    brk: Break
    hands: dict[int, list[Position]]            # side -> positions taken, in taking order
    live: list[Position]                        # the rest of the live wall, in drawing order
    tail: list[Position]                        # replacement draws, first first
    rules: DealRules
    kongs: int = 0
    taken: set[Position] = field(default_factory=set)
    # where the first position not taken may be, in ``live`` and in ``tail`` (a position once taken stays taken,
    # so the first one not taken only moves on: a draw looks from here, not from the start)
    _live_from: int = field(default=0, repr=False, compare=False)
    _tail_from: int = field(default=0, repr=False, compare=False)

    def hand_tiles(self, wall: Wall, side: int) -> list[int | None]:
        return [wall[p] for p in self.hands[side]]

    def remaining(self) -> int:
        """Tiles still drawable before the hand is drawn out."""
        kept = self.rules.kept_tail + self.rules.kept_per_kong * self.kongs
        return max(0, len(self.live) - len(self.taken) - kept)

    def draw(self) -> Position | None:
        """The next live draw, or None when the hand is drawn out (荒牌 / 黄庄)."""
        if self.remaining() == 0:
            return None
        self._live_from = _first_not_taken(self.live, self.taken, self._live_from)
        position = self.live[self._live_from]
        self.taken.add(position)
        return position

    def replacement(self, kong: bool = False) -> Position | None:
        """A replacement draw from the tail (after a flower; ``kong`` after a kong).

        The tail is taken stack by stack from the far end, top tile first.
        """
        if kong:
            self.kongs += 1
        if len(self.taken) >= len(self.live):
            return None
        self._tail_from = _first_not_taken(self.tail, self.taken, self._tail_from)
        position = self.tail[self._tail_from]
        self.taken.add(position)
        return position


def _first_not_taken(positions: list[Position], taken: set[Position], start: int) -> int:
    """The index of the first of ``positions`` from ``start`` on that is not ``taken`` (every one before ``start``
    is); StopIteration when all are, as ``next`` over them would raise."""
    for i in range(start, len(positions)):
        if positions[i] not in taken:
            return i
    raise StopIteration


def deal(wall: Wall, rules: DealRules, dice: tuple[int, ...], dealer_side: int) -> Deal:
    """Break the wall and give every seat its starting tiles (dealer 14, others 13)."""
    brk = find_break(rules, dice, dealer_side)
    order = live_sequence(wall, brk)
    seats = [(dealer_side + i) % SIDES for i in range(SIDES)]  # dealer, 下家, 对家, 上家
    hands: dict[int, list[Position]] = {s: [] for s in seats}
    i = 0
    for _round in range(3):
        for seat in seats:
            hands[seat].extend(order[i:i + 4])
            i += 4
    # 跳牌: dealer takes the tops of the 1st and 3rd next stacks; the others one tile each.
    nxt = order[i:i + 5]
    hands[seats[0]].extend([nxt[0], nxt[4]])
    hands[seats[1]].append(nxt[1])
    hands[seats[2]].append(nxt[2])
    hands[seats[3]].append(nxt[3])
    taken = set(p for ps in hands.values() for p in ps)
    live = [p for p in order if p not in taken]
    tail: list[Position] = []
    for p in reversed(live):  # group by stack from the far end; top before bottom in each stack
        if tail and (tail[-1].side, tail[-1].stack) == (p.side, p.stack):
            tail.insert(len(tail) - 1, p) if p.level == "top" else tail.append(p)
        else:
            tail.append(p)
    return Deal(brk, hands, live, tail, rules)
