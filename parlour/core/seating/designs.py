"""Exact seatings where mathematics gives one: affine spaces over GF(4) and the 8-4-10 golfers."""

from __future__ import annotations

import itertools
import random
from typing import Sequence

from parlour.core.seating.model import TABLE_SIZE

_GF4_LOG = {1: 0, 2: 1, 3: 2}
_GF4_EXP = (1, 2, 3)


def _gf4_mul(a: int, b: int) -> int:
    """Multiplication in GF(4) = {0, 1, w, w + 1} coded 0, 1, 2, 3 (addition is XOR)."""
    if a == 0 or b == 0:
        return 0
    return _GF4_EXP[(_GF4_LOG[a] + _GF4_LOG[b]) % 3]


def affine_classes(m: int) -> list[list[list[int]]]:
    """The parallel classes of lines of AG(m, 4): points 0 .. 4**m - 1, each class a partition into lines of 4.

    A point is a vector over GF(4) (its base-4 digits); a direction is a non-zero vector whose first non-zero
    coordinate is 1, (4**m - 1) / 3 of them; the lines of a direction are the sets {p + t d : t in GF(4)}.  Two
    points lie on exactly one common line, so no pair meets twice over all the classes.
    """
    size = 4**m

    def digits(x: int) -> list[int]:
        return [(x >> (2 * i)) & 3 for i in range(m)]

    def number(v: Sequence[int]) -> int:
        return sum(c << (2 * i) for i, c in enumerate(v))

    classes = []
    for d in range(1, size):
        dv = digits(d)
        if next(c for c in dv if c) != 1:
            continue
        seen: set[int] = set()
        lines = []
        for p in range(size):
            if p in seen:
                continue
            pv = digits(p)
            line = [number([pc ^ _gf4_mul(t, dc) for pc, dc in zip(pv, dv)]) for t in range(4)]
            seen.update(line)
            lines.append(sorted(line))
        classes.append(lines)
    return classes


# The 10 rounds of the 8-4-10 Social Golfer instance: 32 players (0-9, a-v in base 32), 8 tables of 4 a round,
# no pair twice.  Published by Wolfram MathWorld's "Social Golfer Problem" demonstration (as collected in the
# literature notes of github.com/fpvandoorn/Dagstuhl-tables; CSPLib problem 010 links Harvey's tables and another),
# its letters A-P, a-p recoded 0-f, g-v.  _check_design verifies it on import.
_GOLF_8_4_10 = (
    "0123 4567 89ab cdef ghij klmn opqr stuv",
    "048s 1im7 35av jlqf gkoc h26n pbdu 9rte",
    "0lru 1nqs 36od g5be h7ac 2k9f i4pv jm8t",
    "0iob 1jpa h39q 5muf l6ev g28r 4nct k7sd",
    "0mad 14rf 378u jnoe hkbv 2lps i59c g6qt",
    "0n9v 15ot i3se hl8d k6ar 2jcu 4mqb g7pf",
    "0jk5 169u g34l inrd oasf 27bt hmpe 8qcv",
    "0htf g1dv 3mrc ikqu l7o9 24ae 5n8p j6bs",
    "06pc 1k8e 3nbf gm9s ilat 25qd h4ou j7rv",
    "07qe 1lbc 3kpt h5rs i68f 2mov j49d gnau",
)


def _check_design(points: int, classes: list[list[list[int]]]) -> None:
    """Every class a partition of the points into tables of 4 and no pair in two tables; else ValueError."""
    met: set[tuple[int, int]] = set()
    for lines in classes:
        if sorted(p for line in lines for p in line) != list(range(points)):
            raise ValueError("a class of the design is not a partition of its points")
        for line in lines:
            if len(line) != TABLE_SIZE:
                raise ValueError("a table of the design does not seat 4")
            for pair in itertools.combinations(sorted(line), 2):
                if pair in met:
                    raise ValueError(f"the design meets pair {pair} twice")
                met.add(pair)


def _complete_matching(points: int, classes: list[list[list[int]]]) -> list[list[list[int]]]:
    """Add one class when the pairs never met are a perfect matching: its tables are two such pairs each."""
    met = {frozenset(pair) for lines in classes for line in lines for pair in itertools.combinations(line, 2)}
    unmet = [
        (a, b) for a, b in itertools.combinations(range(points), 2) if frozenset((a, b)) not in met
    ]
    if len(unmet) * 2 != points or len({p for pair in unmet for p in pair}) != points or points % 4:
        return classes
    extra = [list(unmet[i]) + list(unmet[i + 1]) for i in range(0, len(unmet), 2)]
    return classes + [extra]


def _golf_8_4_10() -> list[list[list[int]]]:
    return [[[int(c, 32) for c in table] for table in row.split()] for row in _GOLF_8_4_10]


def design_for(n: int) -> tuple[str, list[list[list[int]]]] | None:
    """The exact construction for ``n`` players, if there is one: its name and its classes (rounds)."""
    if n == 32:
        classes = _golf_8_4_10()
        _check_design(32, classes)
        return "resolvable design (8-4-10)", _complete_matching(32, classes)
    for m, name in ((1, "one table"), (2, "affine plane AG(2,4)"), (3, "affine space AG(3,4)"),
                    (4, "affine space AG(4,4)")):
        if n == 4**m:
            return name, affine_classes(m)
    return None


_check_design(32, _golf_8_4_10())


def team_aligned(classes: list[list[list[int]]], team_of: list[int], future: int,
                  rng: random.Random) -> list[list[list[int]]] | None:
    """The design with each team packed onto the lines of its last class, that class played last.

    Team-mates on one line of a class never meet in the other classes, so rounds before that class are clash-free.
    """
    if future < 1:
        return None
    lines = classes[-1]
    teams: dict[int, list[int]] = {}
    for p, t in enumerate(team_of):
        if t >= 0:
            teams.setdefault(t, []).append(p)
    if not teams:
        return None
    room = [TABLE_SIZE] * len(lines)
    slots: list[list[int]] = [[] for _ in lines]
    for members in sorted(teams.values(), key=len, reverse=True):
        line = next((i for i, r in enumerate(room) if r >= len(members)), None)
        if line is None:
            return None
        room[line] -= len(members)
        slots[line].extend(members)
    loose = [p for p, t in enumerate(team_of) if t < 0]
    rng.shuffle(loose)
    for i, r in enumerate(room):
        slots[i].extend(loose[:r])
        loose = loose[r:]
    mapping = [0] * len(team_of)
    for line, members in zip(lines, slots):
        for point, p in zip(line, members):
            mapping[point] = p
    order = classes[:-1] + classes[-1:]
    return [[[mapping[p] for p in line] for line in order[r % len(order)]] for r in range(future)]
