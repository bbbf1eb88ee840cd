"""``mjtable sim --state FILE`` killed with SIGKILL at any instant resumes with the same command.

The simulated tiles are kept in the table database, written in each
transaction the controller commits (:mod:`sim.world_state`), so a kill
anywhere leaves tiles and knowledge of the same instant.  Each campaign runs
the real command, kills it at random virtual instants (the child tells the
parent on a pipe when its clock passes the instant: nothing sleeps), runs
the same command again, and after the last kill runs it from the installed
``mjtable`` to its end.  Every run not killed completes; no committed result
is lost or changed; every hand is in the database once; chips add up.
"""

from __future__ import annotations

import pytest

from tests.support.power_cut_campaign import run_cli_campaign


@pytest.mark.parametrize("seed, rules", [(3, "mcr"), (8, "jinzhou")])
def test_the_simulator_killed_anywhere_resumes_with_the_same_command(tmp_path, seed, rules):
    result = run_cli_campaign(tmp_path, seed, rules, kills=3)
    assert result.cuts == 3, "the kills did not land"
    assert not result.problems, result.problems


@pytest.mark.slow
@pytest.mark.parametrize("seed, rules", [(11, "mcr"), (12, "competition"), (13, "liaoning"), (14, "jinzhou"),
                                         (15, "mcr"), (16, "sichuan")])
def test_sixty_kills_of_the_simulator_lose_nothing(tmp_path, seed, rules):
    result = run_cli_campaign(tmp_path, seed, rules, kills=12)
    assert result.cuts == 12
    assert not result.problems, result.problems


def test_the_kill_campaign_finds_a_world_that_is_not_kept(tmp_path, monkeypatch):
    """The killed runs keep no simulated tiles (as when they were written only on a clean close): the resume is
    refused."""
    monkeypatch.setenv("MJTABLE_TEST_NO_WORLD_ROWS", "1")
    result = run_cli_campaign(tmp_path, 3, "mcr", kills=2)
    assert result.problems
