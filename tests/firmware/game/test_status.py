"""The controller's status per component: what diagnostics, the web page and telemetry read.

Every component has the same keys whatever the table does (a subscriber is
sent only changed fields), is plain JSON, and follows the table: a hand
dealt moves the book and the deal, stacking shows its progress, a jam is
an active fault with its code, tier, hint and lamp pattern.  The live line
of ``mjtable sim --speed`` is made from it.  The hold-to-run disk jog of the
web page's buttons is here too: stopped, its end timer is taken back.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from firmware.controller.lamps import lamp_pattern
from firmware.game.status import LIVE_COMPONENTS, StatusSource, get_status, live_line
from firmware.diagnostics.commands import DiagCommands
from firmware.faults import FaultCode
from sim.faults import parse_fault
from sim.table_run import SimRun


def _keys(status: dict) -> dict[str, set[str]]:
    return {name: set(component) for name, component in status.items()}


def test_every_component_keeps_its_keys_and_is_json_through_a_game():
    run = SimRun(hands=2, play=True)
    try:
        first = get_status(run.session)
        assert set(first) == {"table", "book", "stacking", "reader", "faults", "chips", "sensors", "deal", "round",
                              "session", "warnings"}
        seen_stacking = seen_deal = False
        for _ in range(3000):
            run.loop.run_for(1.0)
            status = get_status(run.session)
            assert _keys(status) == _keys(first)
            json.dumps(status)
            seen_stacking |= status["stacking"]["active"] and sum(status["stacking"]["counted"]) > 0
            if status["deal"]["hand"] == 1 and status["book"]["hand_open"]:
                seen_deal = True
                assert status["deal"]["dealer"] == status["book"]["dealer"] == 0
                assert status["book"]["dice"] == status["deal"]["dice"]
                assert len(status["deal"]["dice"]) == 4         # MCR throws twice
                assert {len(tiles) for tiles in status["deal"]["hands"].values()} == {13, 14}
            if run.players.finished:
                break
        assert seen_stacking and seen_deal
        assert status["book"]["hand"] == 2 and status["chips"]["rules"] == "mcr"
        assert sum(status["chips"]["chips"]) == 4 * status["chips"]["start"]
    finally:
        run.close()


def test_a_jam_is_an_active_fault_with_its_hint_and_lamps():
    run = SimRun(hands=1, faults=[parse_fault("jam:stacker2@stacking1")], auto_ack_s=None)
    try:
        run.run_until(lambda: run.controller.state == "latched", 600.0)
        status = get_status(run.session, ["table", "faults"])
        assert status["table"]["state"] == "latched" and status["table"]["fault"] == "E33"
        (active,) = status["faults"]["active"]
        assert active["code"] == "E33" and active["tier"] == "latched"
        assert active["hint"] == FaultCode.E33.hint and active["lamps"] == "0+1 then 0+1"
        assert status["table"]["motors_safe"] and status["table"]["moving"] == []
    finally:
        run.close()


def test_lamp_pattern_matches_the_fault_card():
    assert lamp_pattern(FaultCode.E82) == "3 then 1"
    assert lamp_pattern(FaultCode.E03) == "none then 0+1"


def test_the_live_line_is_made_from_the_status():
    run = SimRun(hands=1)
    try:
        run.loop.run_for(5.0)
        line = live_line(get_status(run.session, LIVE_COMPONENTS), 5.0)
        c = run.controller
        assert line.startswith("t=    5.0s ") and f"hand {c.book.hand} dealer side {c.book.dealer}" in line
        assert line.endswith("chips 500 500 500 500")
    finally:
        run.close()


def test_the_live_line_in_the_command_lines_language():
    """With the command line's words the line is its language's, the state in words; without, the code's English
    with the state's identifier (the page's data)."""
    from firmware.cli import words

    status = {"table": {"state": "in_play"}, "book": {"hand": 3, "dealer": 1}, "stacking": {"counted": [36, 0]},
              "chips": {"chips": [500, 480, 520, 500]},
              "round": {"state": "playing", "assignment": {"event": "cup", "round": 2}, "players": {"E": "ana"},
                        "hands": 8, "hands_played": 3, "seconds_left": 600.0, "warning": False, "pending": None,
                        "refused": None},
              "session": {"state": "closed", "players": None}}
    try:
        words.use("zh_CN")
        line = live_line(status, 5.0, words)
        assert line == ("t=    5.0s 打牌中    第 3 手 庄家 1 号边 码牌 36 张 筹码 500 480 520 500"
                        " | cup 第 2 轮 第 3/8 手：E ana S ? W ? N ?，还剩 10 分钟 | 开台结束：牌桌已关闭"), line
        words.use("en")
        assert live_line(status, 5.0, words).startswith("t=    5.0s Playing   hand 3 dealer side 1 stacking 36 tiles")
    finally:
        words.use("en")
    assert live_line(status) == ("in_play   hand 3 dealer side 1 stacking 36 tiles chips 500 480 520 500"
                                 " | cup round 2 hand 3/8: E ana S ? W ? N ?, 10 min left | session over: table closed")


def test_one_source_per_controller_and_unknown_components_refused():
    run = SimRun(hands=0)
    try:
        c = run.session
        assert StatusSource.of(c) is StatusSource.of(c)
        with pytest.raises(ValueError, match="no status component 'nope'"):
            get_status(c, ["nope"])
        answers: list[dict[str, Any]] = []
        DiagCommands(c).handle({"cmd": "status", "components": ["book"]}, answers.append)
        DiagCommands(c).handle({"cmd": "status", "components": "book"}, answers.append)
        DiagCommands(c).handle({"cmd": "status", "components": ["nope"]}, answers.append)
        assert answers[0]["ok"] and set(answers[0]["status"]) == {"book"}
        assert not answers[1]["ok"] and "components: a list" in answers[1]["error"]
        assert not answers[2]["ok"] and "no status component" in answers[2]["error"]
    finally:
        run.close()


def test_a_held_disk_jog_stopped_frees_the_disk_at_once():
    """Unlike a timed jog (whose end stays due on the loop), a hold-to-run jog's end timer is taken back."""
    run = SimRun(hands=0, service=True)
    try:
        run.loop.run_for(3.0)
        c = run.session
        jog: list[dict[str, Any]] = []
        DiagCommands(c).handle({"cmd": "jog", "mechanism": "turntable", "hold": True}, jog.append)
        run.loop.run_for(2.0)
        assert c.table.turntable.running and not jog
        stopped: list[dict[str, Any]] = []
        DiagCommands(c).handle({"cmd": "stop"}, stopped.append)
        assert stopped[0]["stopped"] == "jog turntable" and not c.table.turntable.running
        assert jog[0]["stopped_by"] == "technician"
        again: list[dict[str, Any]] = []
        DiagCommands(c).handle({"cmd": "jog", "mechanism": "turntable", "hold": True}, again.append)
        run.loop.run_for(29.0)
        assert c.table.turntable.running and not again        # the old run's 30 s end did not stop it
        run.loop.run_for(2.0)
        assert again and again[0]["ok"] and again[0]["ran_s"] == 30.0
        bad: list[dict[str, Any]] = []
        DiagCommands(c).handle({"cmd": "jog", "mechanism": "turntable", "hold": "yes"}, bad.append)
        assert not bad[0]["ok"] and "hold: true or false" in bad[0]["error"]
    finally:
        run.close()
