"""Strict table-model configuration: every shipped file loads, every bad one is named."""

import tomllib
from pathlib import Path

import pytest

from firmware.cli.config_cmd import folder_files
from firmware.cli.main import main
from firmware.config import default_table_path, load_table_config, parse_table_config
from firmware.faults import ConfigError


def _data():
    with default_table_path().open("rb") as fh:
        return tomllib.load(fh)


def _error(data) -> str:
    with pytest.raises(ConfigError) as info:
        parse_table_config(data, Path("t.toml"))
    return str(info.value)


@pytest.mark.parametrize("path", [p for p in folder_files() if p.parent.name == "tables"], ids=lambda p: p.name)
def test_every_shipped_table_model_loads(path):
    cfg = load_table_config(path)
    assert cfg.stacks_per_side * 2 >= cfg.tiles_per_side


def test_config_check_command_checks_every_shipped_file(capsys):
    assert main(["config", "check"]) == 0
    out = capsys.readouterr().out
    assert out.count(": ok") == len(folder_files()) >= 5


def test_config_check_command_fails_on_a_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(default_table_path().read_text().replace("travel_s = 1.5", "travel_s = -1"))
    assert main(["config", "check", str(bad)]) == 1
    assert "table [center_lift] key 'travel_s'" in capsys.readouterr().err


def test_unknown_key_is_named():
    data = _data()
    data["stacker"]["cam_turn"] = 1.4
    assert _error(data) == "t.toml: table [stacker] key 'cam_turn': unknown key"


def test_wrong_type_is_named():
    data = _data()
    data["wall_lift"]["cam_turn_s"] = "3"
    msg = _error(data)
    assert "table [wall_lift] key 'cam_turn_s'" in msg and "'3'" in msg


def test_missing_key_is_named():
    data = _data()
    del data["center_lift"]["travel_s"]
    assert "table [center_lift] key 'travel_s': missing key" in _error(data)


def test_out_of_range_is_named():
    data = _data()
    data["table"]["tile_set"] = 150
    assert "table [table] key 'tile_set'" in _error(data)
    data = _data()
    data["center_lift"]["max_run_s"] = 1.0
    assert "table [center_lift] key 'max_run_s': must be greater than travel_s (1.5)" in _error(data)


def test_bad_pin_and_reused_pin_are_named():
    data = _data()
    data["stacker"]["home_pins"][3] = "GPIO77"
    assert "key 'home_pins[3]': not a pin spec" in _error(data)
    data = _data()
    data["dice"]["motor_pin"] = "GPIO22"
    assert "table [dice] key 'motor_pin': pin GPIO22 is already used by center_lift.up_motor_pin" in _error(data)


def test_pin_bank_must_be_declared():
    data = _data()
    data["dice"]["motor_pin"] = "exp9:GPIO1"
    assert "pin bank 'exp9' is not declared" in _error(data)


def test_bad_toml_names_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[table\n")
    with pytest.raises(ConfigError, match="broken.toml: not valid TOML"):
        load_table_config(path)


def test_two_banks_on_one_gpiochip_are_refused():
    data = _data()
    data["backend"]["banks"]["exp1"] = 0                   # the Pi header's own chip, already bank 'main'
    assert "table [backend] key 'banks.exp1': gpiochip 0 is already bank 'main'" in _error(data)


@pytest.mark.parametrize("key, pin, bus", [("up_motor_pin", "GPIO2", "I2C"), ("down_motor_pin", "GPIO3", "I2C"),
                                           ("up_sensor_pin", "!GPIO14", "UART"), ("down_sensor_pin", "GPIO15", "UART")])
def test_the_i2c_and_uart_lines_are_not_io(key, pin, bus):
    data = _data()
    data["center_lift"][key] = pin
    message = _error(data)
    assert f"t.toml: table [center_lift] key '{key}': pin {pin} is already used by" in message and bus in message


def test_a_table_without_expanders_may_free_the_i2c_lines():
    data = _data()
    data["backend"]["i2c_pins"] = []
    data["center_lift"]["up_motor_pin"] = "GPIO2"
    data["dice"]["motor_pin"] = "GPIO3"
    parse_table_config(data, Path("t.toml"))


# -- rule sets (config/rules/*.toml) ------------------------------------------------------------------------
def _rules_data(name: str) -> dict:
    from firmware.config_paths import rules_file

    return tomllib.loads(rules_file(name, None).read_text(encoding="utf-8"))


def _rules_error(data: dict) -> str:
    from firmware.rules.config import parse_ruleset_config

    with pytest.raises(ConfigError) as info:
        parse_ruleset_config(data, Path("r.toml"))
    return str(info.value)


@pytest.mark.parametrize("key", ["flower", "single_wait", "flower_replacement_win", "kong_replacement_win",
                                 "last_claim", "last_draw", "concealed"])
def test_every_competition_extra_is_required(key):
    data = _rules_data("competition")
    del data["competition"]["extras"][key]
    assert _rules_error(data) == f"r.toml: table [competition] key 'extras.{key}': missing key"


@pytest.mark.parametrize("key", ["discard_multiplier", "self_drawn_multiplier", "robbed_kong_multiplier",
                                 "liable_multiplier", "double_factor"])
def test_competition_multipliers_are_at_least_one(key):
    data = _rules_data("competition")
    data["competition"]["settlement"][key] = 0
    message = _rules_error(data)
    assert message.startswith(f"r.toml: table [competition] key 'settlement.{key}': ") and "(got 0)" in message


@pytest.mark.parametrize("name, key", [("liaoning", "base"), ("jinzhou", "base"),
                                       ("jinzhou", "red_dragon_kong_factor")])
def test_the_doubling_base_and_factor_are_at_least_one(name, key):
    data = _rules_data(name)
    data["doubling"][key] = 0
    message = _rules_error(data)
    assert message.startswith(f"r.toml: table [doubling] key '{key}': ") and "(got 0)" in message
