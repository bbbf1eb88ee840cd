"""mjtable diag warnings: the evidence of both monitors, the status component, and a reset after a repair."""

from firmware.diagnostics.commands import DiagCommands
from firmware.game.status import get_status
from sim.shuffle_bias import ShuffleBias
from sim.table_run import SimRun


def _ask(commands, request):
    answers = []
    commands.handle(request, answers.append)
    return answers[0]


def test_warnings_evidence_status_and_reset():
    run = SimRun(hands=60, play=True, shuffle_bias=ShuffleBias(0, 1.0, 0.0), wear=[("lift1", 1.0)])
    try:
        run.loop.run_until(lambda: run.players.finished, 60 * 900.0)
        commands = DiagCommands(run.session)
        answer = _ask(commands, {"cmd": "warnings"})
        assert answer["ok"] and answer["fairness"]["charts"]["pairs:E"]["hands"] == 60
        assert [w["seat"] for w in answer["fairness"]["warnings"]] == ["E"]
        assert [w["part"] for w in answer["maintenance"]["warnings"]] == ["lift1"]
        assert answer["maintenance"]["parts"]["head0"]["cycles"] > 100
        status = get_status(run.session, ["warnings"])["warnings"]
        assert [w["chart"] for w in status["fairness"]] == ["pairs:E"]
        assert [w["part"] for w in status["maintenance"]] == ["lift1"]

        assert _ask(commands, {"cmd": "warnings", "reset": "lift1"})["maintenance"]["warnings"] == []
        assert _ask(commands, {"cmd": "warnings", "reset": "fairness"})["fairness"]["warnings"] == []
        refused = _ask(commands, {"cmd": "warnings", "reset": "head7"})
        assert not refused["ok"] and "head0..head3" in refused["error"]
        assert not _ask(commands, {"cmd": "warnings", "reset": 3})["ok"]
    finally:
        run.close()
