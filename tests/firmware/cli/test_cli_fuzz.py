"""The command line under careless input: every subcommand and option with generated bad values, through the
real entry point.  Never a traceback; a message on one line that names the argument (or the value); exit 2
(``config check`` and ``selftest``, whose job is to report bad files, exit 1 or 2).  Each bad value is one the
command must refuse before any work, so no example runs a game."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware.cli.main import main
from firmware.rules.names import RULE_NAMES

NOT_INT = st.one_of(st.sampled_from(["abc", "1.5", "", " ", "0x10", "1e3", "--"]),
                    st.text(alphabet=string.ascii_letters + "!@#., ", min_size=1, max_size=12))
NOT_POSITIVE_INT = st.one_of(NOT_INT, st.sampled_from(["0", "-1", "-999999999999"]))
NOT_FLOAT = st.one_of(st.sampled_from(["abc", "", "1,5", "ten", "--"]),
                      st.text(alphabet=string.ascii_letters + "!@#", min_size=1, max_size=10))
BAD_SECONDS = st.one_of(NOT_FLOAT, st.sampled_from(["0", "-1", "-0.5", "nan", "inf", "-inf", "1e999"]))
BAD_NAME = st.one_of(st.sampled_from(["", "MCR", "mcr ", "sichuan-3p", "麻将", "../mcr", "\x00"]),
                     st.text(min_size=1, max_size=12).filter(lambda t: t not in RULE_NAMES))
BAD_SPEC = st.one_of(
    st.sampled_from(["", "jam", "jam:", "jam:stacker9", "jam:lift4", "wear:stacker5", "wear:lift9", "jam:center2",
                     "jam:stacker1@", "jam:stacker1@hand0", "jam:stacker1@hand99", "lid-open@20s=abc",
                     "rfid-disconnect@40s=abc", "rfid-noise=2", "wear:lift1=0.5", "missing-tile=9z",
                     "power-cut", "stall:belt", "antenna:8", "disk-fail=3", "foreign-tile:stacker1",
                     "stuck-on:nosuch", "stuck-on:gate7", "jam:stacker1@95", "✓", "jam:stacker1@hand1=x"]),
    st.text(min_size=1, max_size=20).filter(lambda t: not t.startswith("-") and not _a_good_spec(t)))


def _a_good_spec(text: str) -> bool:
    """(generated text that happens to be a valid spec, e.g. 'disk-fail', is not a bad value)"""
    from sim.faults import FaultSpecError, check_fits_run, parse_fault

    try:
        check_fits_run([parse_fault(text)], 0)
    except FaultSpecError:
        return False
    return True


def _bad_paths(tmp: Path) -> st.SearchStrategy[str]:
    """Files that cannot be read as the argument wants: missing, a folder, empty, binary, a bad name."""
    folder = tmp / "a-folder"
    folder.mkdir(exist_ok=True)
    binary = tmp / "binary.toml"
    binary.write_bytes(bytes(range(256)) * 4)
    empty = tmp / "empty.toml"
    empty.write_text("")
    return st.sampled_from([str(tmp / "missing.toml"), str(folder), str(binary), str(empty), "",
                            str(tmp / "nö such" / "x.toml"), "/dev/null/x"])


def _bad_outputs(tmp: Path) -> st.SearchStrategy[str]:
    folder = tmp / "out-folder"
    folder.mkdir(exist_ok=True)
    return st.sampled_from([str(folder), str(tmp / "no-such-folder" / "x.json"), "/proc/version", "/dev/null/x"])


def _run(argv: list[str], capsys, codes=(2,)) -> str:
    """The entry point as a user runs it: an exit status, a message; any other exception fails the test."""
    try:
        code = main(argv)
    except SystemExit as exc:              # argparse's errors and --help
        code = exc.code
    out = capsys.readouterr()
    err = out.err.strip() or (out.out.strip() if code == 1 else "")     # (1: a refusal or a report, on stdout)
    assert code in codes, f"{argv}: exit {code}\nstdout: {out.out[-500:]}\nstderr: {err[-500:]}"
    assert err, f"{argv}: exit {code} with nothing said"
    assert "Traceback" not in err + out.out
    lines = err.splitlines()
    assert len(lines) <= 2 or all(not line.startswith(" ") for line in lines), f"{argv}: {err}"
    return err


FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(option=st.sampled_from(["--hands", "--seed"]), value=NOT_INT)
def test_sim_integer_options(option, value, capsys):
    err = _run(["sim", option, value], capsys)
    assert option in err


@FAST
@given(value=NOT_POSITIVE_INT)
def test_sim_hands_must_be_a_positive_number(value, capsys):
    err = _run(["sim", "--hands", value], capsys)
    assert "--hands" in err


@FAST
@given(option=st.sampled_from(["--rules", "--tiles", "--speed", "--auto-ack-s"]), value=BAD_NAME)
def test_sim_choices(option, value, capsys):
    if option == "--auto-ack-s" and _a_duration(value) or option == "--speed" and _a_speed(value):
        return                              # (a valid value: the run would start)
    err = _run(["sim", option, value], capsys)
    assert option in err


def _a_duration(text: str) -> bool:
    from firmware.cli.arg_types import MAX_SECONDS
    if text.strip().lower() == "none":
        return True
    try:
        return 0 <= float(text) <= MAX_SECONDS          # (a NaN is not)
    except ValueError:
        return False


def _a_speed(text: str) -> bool:
    if text.strip().lower() == "max":
        return True
    try:
        return 0 < float(text) < float("inf")
    except ValueError:
        return False


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e9", "-0.5", ""])
def test_sim_auto_ack_takes_a_duration_only(value, capsys):
    assert "--auto-ack-s" in _run(["sim", "--auto-ack-s", value], capsys)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-2"])
def test_sim_speed_takes_a_positive_factor_only(value, capsys):
    assert "--speed" in _run(["sim", "--speed", value], capsys)


@FAST
@given(spec=BAD_SPEC)
def test_sim_inject_specs_are_refused_before_the_run(spec, capsys):
    err = _run(["sim", "--hands", "2", "--inject", spec], capsys)
    assert spec[:10] in err or "--inject" in err or "fault" in err


@FAST
@given(spec=BAD_SPEC)
def test_diag_sim_inject_specs(spec, capsys):
    _run(["diag", "--sim", "--inject", spec, "state"], capsys)


def test_sim_paths(tmp_path, capsys):
    @FAST
    @given(option=st.sampled_from(["--table", "--state"]), path=_bad_paths(tmp_path))
    def inputs(option, path):
        if option == "--state" and path in ("",):
            return
        if option == "--state" and path.endswith("missing.toml"):
            return                         # (a new database: that one is fine)
        _run(["sim", "--hands", "1", option, path], capsys)

    @FAST
    @given(path=_bad_outputs(tmp_path))
    def outputs(path):
        err = _run(["sim", "--hands", "1", "--report", path], capsys)
        assert "--report" in err or path in err

    inputs()
    outputs()


def test_config_check_and_score_files(tmp_path, capsys):
    @FAST
    @given(path=_bad_paths(tmp_path))
    def check(path):
        _run(["config", "check", path], capsys, codes=(1, 2))

    @FAST
    @given(path=_bad_paths(tmp_path).filter(lambda p: not p.endswith("empty.toml")))
    def score(path):
        _run(["score", path], capsys, codes=(1, 2))

    check()
    score()


@FAST
@given(tool=st.sampled_from([["deal", "--seed"], ["deal", "--dealer"], ["deal", "--dice"], ["deal", "--rules"],
                             ["reader-sim", "--antenna"], ["reader-sim", "--pad-tiles"], ["diag", "--sim", "--seed"]]),
       value=NOT_INT)
def test_other_numbers_and_names(tool, value, capsys):
    argv = [*tool, value] + (["state"] if tool[0] == "diag" else [])
    _run(argv, capsys)


@FAST
@given(tool=st.sampled_from([["reader-sim", "--noise"], ["reader-sim", "--drop"], ["reader-sim", "--interval-s"],
                             ["diag", "--sim", "--link-timeout-s"]]),
       value=st.one_of(NOT_FLOAT, st.sampled_from(["-1", "nan", "inf", "2.5e9"])))
def test_other_real_numbers(tool, value, capsys):
    argv = [*tool, value] + (["state"] if tool[0] == "diag" else [])
    _run(argv, capsys)


@FAST
@given(argv=st.sampled_from([
    ["diag", "--sim", "burn-in", "--cycles"], ["diag", "--sim", "learn", "--runs"],
    ["diag", "--sim", "reader", "inventory", "--antenna"], ["diag", "--sim", "enroll", "--set", "A", "--antenna"],
    ["diag", "--sim", "judge", "--side"]]),
    value=st.one_of(NOT_INT, st.sampled_from(["-1", "99999", "1e999"])))
def test_service_tool_counts(argv, value, capsys):
    _run([*argv, value], capsys)


@FAST
@given(argv=st.sampled_from([
    ["diag", "--sim", "--service", "jog", "stacker0", "--seconds"], ["diag", "--sim", "sensors", "--watch"],
    ["diag", "--sim", "state", "--timeout-s"], ["run", "--sim", "--seconds"], ["selftest", "--sim-seconds"],
    ["diag", "--sim", "reader", "counters", "--seconds"], ["diag", "--sim", "enroll", "--set", "A", "--antenna",
                                                          "0", "--tile-timeout-s"],
    ["install", "--selftest-seconds"], ["sim", "--service", "--until-s"]]),
    value=BAD_SECONDS)
def test_times(argv, value, capsys):
    if argv[-1] == "--sim-seconds" and value == "0":
        return                               # (0: no run --sim; the self-test still runs)
    _run([*argv, value], capsys)


@FAST
@given(value=st.one_of(BAD_NAME, st.sampled_from(["stacker9", "wall_lift4", "lift", "center", "disk"])))
def test_diag_jog_mechanism(value, capsys):
    _run(["diag", "--sim", "--service", "jog", value], capsys, codes=(1, 2))


def test_release_commands_on_careless_input(tmp_path, capsys):
    file = tmp_path / "a-file"
    file.write_text("x")
    _run(["install", "--bundle", str(tmp_path / "missing.tar"), "--root", str(tmp_path / "r")], capsys)
    _run(["install", "--bundle", str(file), "--root", str(tmp_path / "r2")], capsys)
    _run(["install", "--root", str(file)], capsys)
    _run(["release", "--root", str(tmp_path), "activate", "9.9.9"], capsys)
    _run(["release", "--root", str(tmp_path), "rollback"], capsys)
    _run(["release", "--root", str(tmp_path), "list"], capsys, codes=(1,))
    _run(["run", "--config-dir", str(tmp_path), "--seconds", "1"], capsys)
    _run(["selftest", "--config-dir", str(tmp_path), "--sim-seconds", "0"], capsys, codes=(1,))
    _run(["bundle", "--project", str(tmp_path), "--out", str(tmp_path / "d")], capsys)


@pytest.mark.parametrize("argv", [["sim", "--hands", "1", "--table", "config"], ["config", "check", "config"]])
def test_a_folder_where_a_file_is_expected(argv, capsys):
    err = _run(argv, capsys, codes=(1, 2))
    assert "is a folder" in err


def test_a_long_simulated_burn_in_runs_to_its_end(capsys):
    """700 cycles (1,000 are allowed) take longer than the old fixed two simulated hours."""
    assert main(["diag", "--sim", "--service", "burn-in", "--cycles", "700"]) == 0
    assert "cycles_done: 700" in capsys.readouterr().out


@pytest.mark.parametrize("spec, words", [
    ("jam:stacker9", "no 'stacker9' to jam"), ("jam:lift4", "no 'lift4' to jam"), ("wear:lift9", "no 'lift9'"),
    ("wear:stacker9", "no 'stacker9'"), ("jam:center2", "no 'center2'"), ("lid-open@20s=abc", "not a duration"),
    ("rfid-disconnect@40s=abc", "not a duration"), ("jam:stacker1@hand99", "has no hand 99"),
])
def test_the_reported_inject_specs(spec, words, capsys):
    for argv in (["sim", "--hands", "16", "--inject", spec], ["diag", "--sim", "--inject", spec, "state"]):
        err = _run(argv, capsys)
        assert words in err or (argv[0] == "diag" and "has no hand" in err), err


def test_tiles_that_do_not_suit_the_rules(capsys):
    err = _run(["sim", "--rules", "liaoning", "--tiles", "144"], capsys)
    assert "does not suit --rules liaoning" in err
