"""The controller on the simulated table: the double-set cycle, panel keys, faults, restarts."""

import random

import pytest

from firmware.controller.states import SetLocation, TableState
from firmware.faults import FaultCode
from firmware.tiles.dealing import deal
from firmware.tiles.tile import code
from firmware.tiles.wall import Wall
from sim.faults import parse_fault
from sim.scenario import run_scenario, scenario_files
from sim.table_run import SimRun

S = TableState


def _states(run):
    return [e.data["state"] for e in run.events if e.topic == "controller.state"]


def _physical_wall(world):
    return Wall.from_sides([[tuple(t.kind for t in stack) for stack in side] for side in world.walls])


def test_sixteen_hands_on_two_sets_and_nobody_waits():
    run = SimRun(hands=16)
    deals_checked = []

    def check_deal(event):
        # The published starting hands are what the physical walls hold at the break.
        if event.topic != "deal":
            return
        d = deal(_physical_wall(run.world), run.rules.deal_rules, event.data["dice"], event.data["dealer"])
        physical = {side: [code(k) for k in d.hand_tiles(_physical_wall(run.world), side)] for side in d.hands}
        assert physical == event.data["hands"]
        deals_checked.append(event.data["hand"])

    run.bus.subscribe("deal", check_deal)
    assert run.run(timeout_s=3600)
    hands = run.store.hands()
    assert [h["hand"] for h in hands] == list(range(1, 17))
    assert [h["dealer"] for h in hands] == [i % 4 for i in range(16)]
    assert deals_checked == list(range(1, 17))
    assert run.controller.book.players_waited_s == 0.0
    assert run.faults() == []
    assert {h["set_id"] for h in hands} == {"A", "B"}
    run.close()


def test_one_set_only_the_players_wait_each_hand():
    run = SimRun(hands=3, sets=("A",))
    assert run.run(timeout_s=3600)
    assert run.controller.book.players_waited_s > 20.0          # a stacking cycle per hand
    assert [h["set_id"] for h in run.store.hands()] == ["A", "A", "A"]
    run.close()


def test_first_power_on_with_no_set_waits_for_tiles():
    run = SimRun(hands=1, sets=())
    run.run_until(lambda: run.loop.now() > 120, 200)
    assert run.state in (S.IDLE, S.OPEN, S.CENTER_UP, S.CENTER_DOWN, S.STACKING)
    assert run.store.hands() == []
    run.close()


def test_both_lift_keys_while_stacking_pause_to_add_tiles():
    run = SimRun(hands=1, sets=("A",))
    run.run_until(lambda: run.state is S.STACKING and run.controller.stacker.cycle is not None
                  and sum(h.counted for h in run.table.heads) > 20, 200)
    run.players.hands_wanted = 0                 # nobody else touches the table
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(True)
    run.loop.run_for(0.2)
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(False)
    run.run_until(lambda: run.state is S.PAUSED and run.world.center_is_up(), 10)
    assert not run.world.turntable.turning
    counted = sum(h.counted for h in run.table.heads)
    run.loop.run_for(10)
    assert sum(h.counted for h in run.table.heads) == counted
    run.world.press("key_lift1")
    run.run_until(lambda: run.state is S.READY, 120)
    assert run.controller.book.where("A") is SetLocation.STACKED
    run.close()


def test_only_the_dealers_dice_key_throws():
    run = SimRun(hands=2)
    run.run_until(lambda: run.state is S.DICE, 300)
    run.players._gen += 1                        # hold the players' own reaction back
    dealer = run.controller.book.dealer
    other = (dealer + 1) % 4
    run.world.press(f"key_dice{other}")
    run.loop.run_for(5)
    assert run.state is S.DICE
    run.world.press(f"key_dice{dealer}")
    run.run_until(lambda: run.state is S.IN_PLAY, 30)
    run.close()


def test_both_lift_keys_at_power_on_enter_service_mode():
    run = SimRun(hands=1)
    run.power_cut(2.0)
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(True)
    run.loop.run_for(3.0)
    assert run.state is S.SERVICE
    run.close()


def test_a_latched_fault_stops_every_motor_and_waits_for_the_technician():
    run = SimRun(hands=3, faults=[parse_fault("jam:lift1@hand2")], auto_ack_s=None)
    run.run_until(lambda: run.state is S.LATCHED, 3000)
    assert [f.code for f in run.faults()] == [FaultCode.E22]
    assert not any(run.world.motors_running().values())
    run.loop.run_for(600)
    assert run.state is S.LATCHED                # nobody acknowledged
    run.world.repair()
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(True)
    run.loop.run_for(0.3)
    for key in ("key_lift0", "key_lift1"):
        run.world.keys[key].set(False)
    run.run_until(lambda: run.state is not S.LATCHED, 5)
    faults = run.store.faults()
    assert faults[0]["code"] == "E22" and faults[0]["acknowledged_at_s"] is not None
    run.close()


def test_reset_key_stops_everything_at_once():
    run = SimRun(hands=1)
    run.run_until(lambda: run.state is S.STACKING and any(run.world.motors_running().values()), 200)
    run.world.press("key_reset")
    run.run_until(lambda: run.state is S.HOLD, 2)
    assert not any(run.world.motors_running().values())
    assert FaultCode.E02 in [f.code for f in run.faults()]
    run.close()


def test_learned_nominal_times_survive_a_restart():
    run = SimRun(hands=2)
    run.run_until(lambda: len(run.store.hands()) >= 1, 600)
    learned = {m.name: m.nominal.value_s for m in run.table.mechanisms()}
    run.power_cut(1.0)
    run.loop.run_for(1.5)
    restored = {m.name: m.nominal.value_s for m in run.table.mechanisms()}
    assert restored == learned and any(v != 0 for v in restored.values())
    run.close()


def test_a_tile_count_change_applies_from_the_next_cycle():
    run = SimRun(hands=3)
    run.run_until(lambda: run.controller.stacker.cycle is not None and run.state is S.STACKING, 600)
    run.controller.stacker.set_tile_count(136)
    assert run.controller.stacker.tile_set.size == 144                      # the cycle under way keeps its count
    assert run.controller.stacker.cycle.target_tiles == 36
    run.run_until(lambda: run.controller.stacker.cycle is None, 120)
    run.run_until(lambda: run.controller.stacker.cycle is not None, 600)  # the next cycle
    assert run.controller.stacker.tile_set.size == 136 and run.controller.stacker.cycle.target_tiles == 34
    run.close()


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.stem)
def test_scenarios(path):
    result = run_scenario(path)
    assert result.ok, result.problems


def test_power_cuts_at_many_instants_never_lose_a_set_or_a_hand():
    """Two hundred power cuts at random instants of simulated games: after every restart the
    bookkeeping matches where the tiles physically are, and the games complete with every hand once."""
    rng = random.Random(20261130)
    cuts = 0
    for game in range(10):
        run = SimRun(hands=4, seed=game + 1)
        # 20 instants at least 6 s apart (longer than a power-off), anywhere in the game
        instants = sorted(slot + rng.uniform(0.0, 1.0) for slot in rng.sample(range(1, 330, 6), 20))
        for at_s in instants:
            run.loop.call_at(at_s, run.power_cut, rng.choice([0.5, 2.0, 5.0]))
        assert run.run(timeout_s=6000), f"game {game} did not finish"
        run.run_until(lambda r=run: r.controller is not None, 10)
        cuts += sum(1 for e in run.events if e.topic == "power.cut")
        hands = [h["hand"] for h in run.store.hands()]
        assert hands == sorted(set(hands)) and hands[-1] >= 4
        book = run.controller.book
        where = {s: book.where(s) for s in ("A", "B")}
        on_table = {t.set_id for side in run.world.walls for stack in side for t in stack}
        in_grooves = {t.set_id for head in run.world.heads for stack in head.groove for t in stack}
        assert {s for s, w in where.items() if w is SetLocation.TABLE} == on_table
        assert {s for s, w in where.items() if w is SetLocation.STACKED} <= in_grooves | on_table
        run.close()
    assert cuts == 200


def test_the_state_diagram_document_is_up_to_date():
    from firmware.controller.diagram import DOC, document

    assert DOC.read_text(encoding="utf-8") == document(), "run 'make diagrams'"


def test_sim_command_runs_a_game_and_reports(tmp_path, capsys):
    import json

    from firmware.cli.main import main

    report = tmp_path / "r.json"
    state = tmp_path / "table.db"
    assert main(["sim", "--hands", "3", "--seed", "2", "--report", str(report), "--state", str(state)]) == 0
    data = json.loads(report.read_text())
    assert data["hands_played"] == 3 and data["final_state"] == "in_play"
    assert data["cycle"]["wait_for_ready_s"] == {"mean": 0.0, "max": 0.0} and data["rfid"]["sets_rejected"] == 0
    assert "hands: 3 of 3 played" in capsys.readouterr().out
    assert main(["sim", "--hands", "1", "--inject", "jam:lift1@hand1", "--quiet"]) == 0    # acknowledged and on


CYCLE_STATES = ["homing", "idle", "center_up", "open", "center_down", "stacking", "ready", "raising", "dice",
                "in_play"]


@pytest.mark.parametrize("state", CYCLE_STATES)
def test_a_power_cut_in_each_state_recovers(state):
    run = SimRun(hands=3, seed=3, cut_in_states={state})
    assert run.run(timeout_s=3000)
    assert run.cut_states == [state]
    assert [h["hand"] for h in run.store.hands()] == [1, 2, 3]
    on_table = {t.set_id for side in run.world.walls for stack in side for t in stack}
    assert {s for s in ("A", "B") if run.controller.book.where(s) is SetLocation.TABLE} == on_table
    run.close()


def test_a_power_cycle_does_not_acknowledge_a_latched_fault():
    run = SimRun(hands=3, faults=[parse_fault("jam:lift1@hand2")], auto_ack_s=None)
    run.run_until(lambda: run.state is S.LATCHED, 3000)
    run.power_cut(2.0)
    run.loop.run_for(5.0)
    assert run.state is S.LATCHED and not any(run.world.motors_running().values())
    run.close()


def test_the_deal_rotates_by_the_rule_set():
    run = SimRun(hands=3, rules="liaoning")
    assert run.run(timeout_s=3000)
    # placeholder hands have no winner: a drawn hand, and in 辽宁 the dealer keeps the seat (长毛)
    assert [h["dealer"] for h in run.store.hands()] == [0, 0, 0]
    assert run.controller.book.long_hair == 2
    run.close()


def test_no_event_subscriber_fails_through_a_fault_and_its_acknowledge(caplog):
    run = SimRun(hands=2, faults=[parse_fault("jam:stacker2@stacking1")], play=True)
    assert run.run(timeout_s=3000)
    assert any(e.topic == "controller.acknowledged" for e in run.events)
    assert not [r for r in caplog.records if "subscriber failed" in r.getMessage()]
    run.close()


@pytest.mark.parametrize("seed, rules, specs", [
    (45, "competition", ["antenna:3@stacking2", "unknown-tile"]),      # a set's tile hides in the other's walls
    (61, "competition", ["stuck-off:tile_in1@stacking2", "rfid-noise=0.02"]),   # tiles past a dead optic
    (72, "mcr", ["stuck-off:tile_in2@stacking3"]),
    (245, "competition", ["unknown-tile", "rfid-noise=0.02"]),   # a set no tag named: "?" until restacked
    (734, "liaoning", ["foreign-tile", "stuck-off:tile_in0@stacking3"]),   # E62 again and again: a technician
])
def test_fault_combinations_found_by_random_runs_complete(seed, rules, specs):
    """Random fault combinations once left the table holding or latched for good; each now completes."""
    run = SimRun(rules=rules, seed=seed, faults=[parse_fault(s) for s in specs], hands=4, play=True)
    assert run.run(timeout_s=4 * 900 + 600)
    assert run.session.scoreboard.conserved() and len(run.session.scoreboard.hands()) == 4
    run.close()


def test_e62_names_the_tile_to_look_for():
    """The tags read so far say which face the set lacks: the players are told what to find."""
    run = SimRun(hands=1, faults=[parse_fault("missing-tile=7s")], play=True)
    run.run_until(lambda: any(e.topic == "tiles.missing" for e in run.events), 600)
    said = next(e for e in run.events if e.topic == "tiles.missing")
    assert said.data == {"faces": ["7s"], "unread": 0}
    from firmware.diagnostics.commands import DiagCommands
    answers = []
    DiagCommands(run.session).handle({"cmd": "state"}, answers.append)
    assert answers[0]["fault"] == "E62" and answers[0]["look_for"] == ["7s"]
    run.close()


def test_a_dead_tile_counter_is_named():
    """Side 0's counter optic dies: its track fills with tiles it never counted.  When the table is stopped
    and goes on, the tiles found waiting there (the head's antenna lists them) point the technician at that
    side's counter, and they are counted."""
    run = SimRun(rules="liaoning", seed=739, faults=[parse_fault(s) for s in
                                                    ("foreign-tile", "stuck-off:tile_in0@stacking3")], hands=2,
                 play=True)
    run.run_until(lambda: any(e.topic in ("tiles.uncounted", "tiles.short_again") for e in run.events), 2000)
    said = next(e for e in run.events if e.topic in ("tiles.uncounted", "tiles.short_again"))
    assert said.data.get("side", said.data.get("sides", [None])[0]) == 0
    assert "side 0" in run.controller.policy.check_hint and "tile counter" in run.controller.policy.check_hint
    run.close()
