"""The command line as a whole: every subcommand listed with examples, bad input is a clear error, never a traceback."""

import argparse

import pytest

from firmware.cli.main import build_parser, main

SUBCOMMANDS = ("sim", "config", "deal", "diag", "reader-sim", "score", "run", "install", "verify")


def test_help_lists_every_subcommand_with_examples(capsys):
    help_text = build_parser().format_help()
    for name in SUBCOMMANDS:
        assert name in help_text
    for example in ("mjtable score ", "mjtable deal ", "mjtable config check", "mjtable sim", "mjtable diag",
                    "mjtable verify "):
        assert example in help_text


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_every_subcommand_has_help(name, capsys):
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0 and "usage: mjtable" in capsys.readouterr().out


@pytest.mark.parametrize("argv, code, words", [
    (["config", "check", "/nonexistent/table.toml"], 1, "no such file"),
    (["deal", "--dice", "9,9"], 2, "dice must be 2 or 4 faces"),
    (["deal", "--rules", "riichi"], 2, "unknown rule set"),
    (["score", "/nonexistent/hands.jsonl"], 2, "cannot read"),
    (["run", "--table", "/nonexistent/table.toml"], 2, "no such file"),
    (["sim", "--inject", "jam"], 2, "jam needs a target"),
    (["diag", "--sim", "reader", "inventory", "--antenna", "9"], 2, "invalid choice: 9"),
    (["diag", "state", "--socket", "/nonexistent/diag.sock"], 2, "is the service running"),
    (["reader-sim", "--feed-set", "Z"], 2, "invalid choice"),
])
def test_bad_input_is_one_clear_error(argv, code, words, capsys):
    try:
        got = main(argv)
    except SystemExit as exc:          # argparse's refusals
        got = exc.code
    assert got == code
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_a_bad_table_file_names_file_table_and_key(tmp_path, capsys):
    bad = tmp_path / "table.toml"
    bad.write_text('[table]\nname = 3\n')
    assert main(["sim", "--table", str(bad), "--hands", "1"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: table [table] key 'name'" in err and "Traceback" not in err


def test_config_check_against_a_rule_set(capsys):
    from firmware.config import default_table_path

    table = str(default_table_path())
    assert main(["config", "check", table, "--rules", "mcr"]) == 0
    assert main(["config", "check", table, "--rules", "liaoning"]) == 1
    assert "key 'tile_set' is 144 but rule set liaoning plays 136 tiles" in capsys.readouterr().err


def test_the_fault_card_is_up_to_date():
    from firmware.controller.diagram import FAULT_DOC, fault_card

    assert FAULT_DOC.read_text(encoding="utf-8") == fault_card(), "run 'make diagrams'"
    assert "| E82 | recoverable |" in fault_card() and "| 3 then 1 |" in fault_card()


def _imported(argv: list[str], stdin: str = "") -> set[str]:
    """Every module a fresh ``mjtable ARGS`` imports (``python -X importtime``)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "firmware.cli.main", *argv], input=stdin,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


HEAVY = ("pydantic", "sqlite3", "gpiozero", "serial", "transitions", "tomllib", "hal", "sim",
         "firmware.config", "firmware.controller", "firmware.mechanisms", "firmware.game", "firmware.web",
         "starlette", "uvicorn", "jinja2", "argon2")


def _heavy(modules: set[str], extra: tuple[str, ...] = ()) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY + extra))


def test_help_imports_only_the_command_line():
    """``mjtable --help`` builds no configuration models and loads no scorer, table or simulator."""
    modules = _imported(["--help"])
    assert "firmware.cli.sim_cmd" in modules             # (counted for real)
    assert _heavy(modules, ("firmware.hands", "firmware.rules.mcr")) == []


def test_score_imports_the_scorer_and_nothing_of_the_table():
    """The rule set comes from its TOML (strictly validated), but nothing of the table is loaded."""
    line = '{"id": 1, "hand": "123m456p789s123sE", "win_tile": "E", "self_drawn": true, "seat_wind": "E", ' \
           '"round_wind": "E"}\n'
    modules = _imported(["score"], line)
    assert "firmware.rules.mcr.scorer" in modules and "firmware.rules.config" in modules
    assert "firmware.rules.competition.family" not in modules          # (only the family asked for)
    assert "firmware.cli.sim_cmd" not in modules                      # (its parser alone)
    assert _heavy(modules, ()) == [m for m in _heavy(modules) if m.startswith(("pydantic", "tomllib"))]


def test_a_command_plugin_that_cannot_be_imported_leaves_the_tables_commands_working(monkeypatch, capsys, caplog):
    """An ``mjtable.commands`` entry point whose package is gone (a half-installed hall package) is skipped."""
    from importlib.metadata import EntryPoint

    from firmware.cli import main as cli_main

    broken = EntryPoint(name="broken", value="no_such_package_mjtable.cli:register", group=cli_main.COMMANDS_GROUP)
    monkeypatch.setattr(cli_main, "entry_points", lambda group: [broken])
    parser = cli_main.build_parser()
    assert "sim" in parser.format_help() and "broken" not in parser.format_help()
    assert "mjtable broken is not available" in caplog.text


def test_sim_alone_has_the_whole_command_lines_sim():
    """``mjtable sim`` builds its parser alone (its start-up counts): the same arguments and help as in the whole."""
    from firmware.cli import main as cli_main

    def sim_help(parser) -> str:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return sub.choices["sim"].format_help()

    assert sim_help(cli_main.build_parser("sim")) == sim_help(cli_main.build_parser(plugins=False))
