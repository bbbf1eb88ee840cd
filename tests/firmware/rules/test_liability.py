"""竞技麻将 包付 from three consecutive claims: the tie between a claimant and its feeder, both ways."""

from firmware.rules.competition.liability import liable_for, tied_pairs
from firmware.rules.win import Meld, MeldKind
from tests.support.record_builder import settle

CHOW, PUNG, KONG = MeldKind.CHOW, MeldKind.PUNG, MeldKind.KONG


def test_three_claims_from_one_feeder_tie_the_two_seats():
    melds = [[], [Meld(CHOW, 0, "left"), Meld(PUNG, 27, "left"), Meld(CHOW, 10, "left")], [], []]
    assert tied_pairs(melds) == [(1, 0)]                   # seat 1 fed three times by seat 0 (its 上家)
    assert liable_for(1, melds) == 0                       # the claimant wins: the feeder pays
    assert liable_for(0, melds) == 1                       # the feeder wins: the claimant pays (互相包牌)
    assert liable_for(2, melds) is None


def test_mixed_feeders_or_fewer_claims_tie_nobody():
    assert tied_pairs([[Meld(PUNG, 5, "opposite"), Meld(PUNG, 6, "right"), Meld(CHOW, 1, "left")], [], [], []]) == []
    assert tied_pairs([[Meld(PUNG, 5, "right"), Meld(PUNG, 6, "right")], [], [], []]) == []
    # a concealed kong is no claim; the three pungs by seat 3 from its 下家 (seat 0) still count
    melds = [[], [], [], [Meld(KONG, 30, None), Meld(PUNG, 1, "right"), Meld(KONG, 2, "right"),
                         Meld(PUNG, 3, "right")]]
    assert tied_pairs(melds) == [(3, 0)]


def test_the_liable_seat_alone_pays_three_times_s():
    # side 0 claims three times from side 3 (its left): a self-drawn win of S is paid 3·S by side 3 alone
    claims = ("0 chow 123m from 3", "0 pung E from 3", "0 chow 456p from 3")
    s = settle("competition", *claims, "0 win N hand 789sN", chips=(100, 100, 100, 100))
    total = s.verdicts[0].score.total
    assert s.deltas() == [3 * total, 0, 0, -3 * total] and s.verdicts[0].liable == 3
    # on side 2's discard: still side 3 alone
    s = settle("competition", *claims, "0 win N from 2 hand 789sN", chips=(100, 100, 100, 100))
    assert s.deltas() == [3 * total, 0, 0, -3 * total]
    # 倍打 doubles it, the chips floor caps it
    assert settle("competition", *claims, "0 win N hand 789sN", chips=(500, 500, 500, 500),
                  streak=1).deltas()[3] == -6 * total
    assert settle("competition", *claims, "0 win N hand 789sN", chips=(100, 100, 100, 20)).deltas() == [20, 0, 0, -20]
    # a referee who names the liable seat at the table
    named = settle("competition", "0 pung E from 1", "2 liable", "0 win N hand 123345678mN", chips=(100,) * 4)
    assert named.verdicts[0].liable == 2 and named.deltas()[1] == 0 and named.deltas()[3] == 0


def test_a_full_flush_on_show_makes_the_feeder_or_the_discarder_liable():
    three = [Meld(CHOW, 0, "left"), Meld(PUNG, 4, "opposite"), Meld(CHOW, 5, "right")]     # 123m 555m 678m
    melds = [three, [], [], []]
    assert liable_for(0, melds, discarder=2, full_flush=True) == 2        # discarded into the 清一色
    assert liable_for(0, melds, discarder=2, full_flush=False) is None    # no 清一色 in the end: no 包付
    assert liable_for(0, melds, discarder=None, full_flush=True) is None  # self-drawn after three
    fourth = [*three, Meld(PUNG, 8, "left")]                               # seat 3 fed the fourth claim
    assert liable_for(0, [fourth, [], [], []], discarder=None, full_flush=True) == 3
    mixed = [Meld(CHOW, 0, "left"), Meld(PUNG, 27, "opposite"), Meld(CHOW, 5, "right")]    # an honour pung
    assert liable_for(0, [mixed, [], [], []], discarder=2, full_flush=True) is None
