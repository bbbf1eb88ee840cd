"""The MCR scorer's fast paths against the slow ways they replace, on random patterns and generated wins.

The table of complete suit patterns against the search it replaces; the
regular hand's unique-wait shortcut against the general wait check; the
group entries (looked up by their tiles) against the suit tables (more
seeds of generated wins against PyMahjongGB are in ``test_mcr_oracle.py``).
"""

import random

from bench.mcr_hands import generated_wins
from firmware.hands import suit_tables as st
from firmware.rules.mcr import groups, scorer
from firmware.rules.mcr.scorer import hand_key


def _searched_status(pattern: tuple[int, ...]) -> int:
    """A suit pattern's status by the search (no table)."""
    total = sum(pattern)
    if total == 0:
        return 1
    if total % 3 == 1:
        return 0
    return (1 if total % 3 == 0 else 2) if st._complete(list(pattern), total % 3 == 2) else 0


def _random_patterns(rng: random.Random, n: int) -> list[tuple[int, ...]]:
    out = []
    while len(out) < n:
        pattern = tuple(rng.choice((0, 0, 0, 1, 1, 2, 3, 4, 5)) for _ in range(9))
        if sum(pattern) <= 15:
            out.append(pattern)
    return out


def test_the_table_of_complete_patterns_agrees_with_the_search():
    rng = random.Random(31)
    for pattern in _random_patterns(rng, 20000):
        assert st.status(pattern, True) == _searched_status(pattern), pattern
        if sum(pattern) <= 13:
            for fifth in (False, True):
                limit = 5 if fifth else 4
                grown = [(r, _searched_status(pattern[:r] + (pattern[r] + 1,) + pattern[r + 1:]))
                         for r in range(9) if pattern[r] < limit]
                expected = (tuple(r for r, s in grown if s == 1), tuple(r for r, s in grown if s == 2))
                assert st.completers.__wrapped__(pattern, True, fifth) == expected, (pattern, fifth)


def test_group_entries_agree_with_the_suit_tables():
    rng = random.Random(32)
    for pattern in _random_patterns(rng, 3000):
        if sum(pattern) > 14 or max(pattern) > 4 or not sum(pattern):
            continue
        group = rng.randrange(3)
        tiles = bytes(k for r, n in enumerate(pattern) for k in [group * 9 + r] * n)
        info, readings = groups.group_entry(tiles)[:2]
        assert info & 3 == _searched_status(pattern)
        assert len(readings) == len(st.splits(pattern, True))


def test_the_unique_wait_shortcut_agrees_with_the_general_check():
    checked = 0
    for w in generated_wins(random.Random(33), 4000):
        hand, melds, tile, *_ = hand_key(w)
        tiles = bytes(sorted(hand + bytes((tile,))))
        cut = [0] + [sum(1 for k in tiles if k < edge) for edge in (9, 18, 27)] + [len(tiles)]
        entries = tuple(groups.group_entry(tiles[cut[g]:cut[g + 1]]) if cut[g + 1] > cut[g] else groups.EMPTY[g]
                        for g in range(4))
        infos = tuple(e[0] for e in entries)
        if (infos[0] & 3) * (infos[1] & 3) * (infos[2] & 3) * (infos[3] & 3) != 2:
            continue
        fast = scorer._unique_wait_regular(tiles, tile, tiles.count(tile), len(melds), infos, entries)
        assert fast == scorer._unique_wait_known(tiles, tile, len(melds), infos), w
        checked += 1
    assert checked > 2500
