"""mjtable sim with a biased shuffle and a wearing part: the report's fairness and maintenance warnings."""

import json

import pytest

from firmware.cli.main import main


def _report(tmp_path, *argv):
    path = tmp_path / "r.json"
    assert main(["sim", *argv, "--quiet", "--report", str(path)]) == 0
    return json.loads(path.read_text())


def test_favoured_seat_and_wearing_head_are_warned(tmp_path):
    data = _report(tmp_path, "--hands", "30", "--shuffle-bias", "favour=E:1", "--wear", "head2:0.5")
    [fair] = data["fairness"]["warnings"]
    assert fair["seat"] == "E" and fair["hand"] <= 30 and fair["statistic"] > fair["threshold"]
    assert fair["cycle"] >= fair["hand"]          # (the stacking cycle it was raised in: one a hand and more)
    assert data["fairness"]["injected"]["favour_extra_pairs"] == pytest.approx(1.0, abs=0.2)
    [worn] = data["maintenance"]["warnings"]
    [part] = data["maintenance"]["injected"]
    assert worn["part"] == "head2" and worn["trend_pct_per_cycle"] > 0
    assert part["jammed_at_cycle"] - worn["cycle"] >= 20          # named well before the jam
    assert any(f["code"] == "E33" for f in data["faults"])        # and then it jammed (the head's fault)


def test_clumping_ring_is_warned_and_a_fair_table_is_not(tmp_path):
    data = _report(tmp_path, "--hands", "12", "--shuffle-bias", "clump=0.1")
    assert [w["pattern"] for w in data["fairness"]["warnings"]] == ["same_suit"]
    fair = _report(tmp_path, "--hands", "12")
    assert fair["fairness"] == {"warnings": []} and fair["maintenance"] == {"warnings": []}


@pytest.mark.parametrize("argv, words", [(["--shuffle-bias", "favour=Q:1"], "E S W N"),
                                         (["--wear", "head9:1"], "head0..head3")])
def test_bad_bias_or_wear_exit_2_with_one_line(argv, words, capsys):
    try:
        code = main(["sim", *argv])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
