"""Power cuts that cut: SIGKILL at random instants, then the table restarts from its database and plays on."""

import pytest

from tests.support.power_cut_campaign import run_campaign


@pytest.mark.parametrize("seed, rules", [(11, "mcr"), (12, "competition")])
def test_sigkill_at_random_instants_loses_nothing(tmp_path, seed, rules):
    """A fast subset: a few cuts of one game each (the slow campaign below makes 200)."""
    result = run_campaign(tmp_path, seed, rules, cuts=6)
    assert result.cuts >= 5
    assert not result.problems, result.problems


@pytest.mark.slow
def test_two_hundred_sigkills_lose_nothing(tmp_path):
    rules = ["mcr", "competition", "liaoning", "jinzhou"]
    cuts = 0
    for game in range(20):
        folder = tmp_path / f"game{game}"
        folder.mkdir()
        result = run_campaign(folder, 100 + game, rules[game % 4], cuts=11)
        assert not result.problems, (game, result.problems)
        cuts += result.cuts
    assert cuts >= 200


def test_the_campaign_checks_can_fail(tmp_path):
    """Each final check finds what it looks for in a database where it was planted."""
    from firmware.store.table_store import TableStore
    from firmware.game.scoreboard import Scoreboard, ScoredHand
    from firmware.rules.money import WIN, Payment
    from firmware.rules.registry import load_ruleset
    from tests.support.power_cut_campaign import OK, Campaign, final_checks

    state = tmp_path / "table.db"
    store = TableStore(state)
    board = Scoreboard(store, load_ruleset("mcr"))
    store.start_hand(1, "A", 0, [1, 2], 10.0)
    paid = [Payment(s, 1, 8, WIN, 9) for s in (0, 2, 3)]
    board.record(ScoredHand(1, 2, [1], False, paid))                             # dealer 2, dealt by 0
    board.record(ScoredHand(2, 0, [1], False, paid))                             # never dealt
    store._db.execute("INSERT INTO payments (game, hand, event, seq, payer, payee, amount, reason, held) "
                      "VALUES (1, 1, 0, 0, 0, 0, 5, 'x', 0)")                       # from side 0 to itself
    store._db.execute("UPDATE chips SET chips = chips + 1 WHERE side = 3")         # a chip from nowhere
    store.close()
    problems = " | ".join(final_checks(state, Campaign(final_exit=OK, lost_or_changed=["hand 3: ..."])))
    for words in ("results whose dealer", "never dealt", "not summing to zero", "chips", "lost or changed"):
        assert words in problems, words
