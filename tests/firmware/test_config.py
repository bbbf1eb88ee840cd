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


def test_a_config_error_carries_its_problems_in_parts(tmp_path):
    """What the message says in English, the error carries in parts (file, table, key, what, detail, the value):
    the command line words them in its language (firmware/cli/error_words.py)."""
    data = _data()
    data["stacker"]["cam_turn"] = 1.4
    data["table"]["name"] = 3
    data["dice"]["motor_pin"] = "GPIO22"
    with pytest.raises(ConfigError) as info:
        parse_table_config(data, Path("t.toml"))
    problems = {(p.table, p.key): p for p in info.value.problems}
    assert (problems["stacker", "cam_turn"].what, problems["stacker", "cam_turn"].file) == ("unknown_key", "t.toml")
    name = problems["table", "name"]
    assert (name.what, name.kind, name.got) == ("invalid", "string_type", "3") and "string" in name.detail
    assert str(info.value) == "\n".join(str(p) for p in info.value.problems)
    del data["stacker"]["cam_turn"], data["table"]["name"]
    data["table"]["name"] = "t"
    with pytest.raises(ConfigError) as info:                     # (a check across keys, after validation)
        parse_table_config(data, Path("t.toml"))
    (pin,) = info.value.problems
    assert (pin.table, pin.key, pin.what, pin.kind) == ("dice", "motor_pin", "invalid", "")
    assert pin.detail == "pin GPIO22 is already used by center_lift.up_motor_pin"
    path = tmp_path / "broken.toml"
    path.write_text("[table\n")
    with pytest.raises(ConfigError) as info:
        load_table_config(path)
    (broken,) = info.value.problems
    assert (broken.file, broken.what, broken.table) == (str(path), "not_toml", None) and broken.detail


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


def test_a_bus_nothing_needs_may_free_its_lines_but_the_expanders_need_the_i2c_bus():
    """``[]`` frees a bus's lines for I/O: the UART's when the reader is on USB; not the I2C bus while pins are on the
    expanders it reaches (this test's first version freed it under the shipped model's expanders: a table that
    cannot run)."""
    data = _data()
    data["backend"]["uart_pins"] = []
    data["reader"]["url"] = "/dev/ttyUSB0"
    data["center_lift"]["up_sensor_pin"] = "!GPIO14"
    data["dice"]["motor_pin"] = "GPIO15"
    parse_table_config(data, Path("t.toml"))
    data = _data()
    data["backend"]["i2c_pins"] = []
    data["center_lift"]["up_motor_pin"] = "GPIO2"
    assert _error(data) == ("t.toml: table [backend] key 'i2c_pins': empty, but pins are on the expander bank(s) "
                            "exp0, exp1, which are reached through the I2C bus: name its two lines (SDA, SCL)")


def _set(section: str, key: str, value):
    def change(data: dict) -> None:
        data[section][key] = value
    return change


def _in_list(section: str, key: str, index: int, value):
    def change(data: dict) -> None:
        data[section][key][index] = value
    return change


# what a table cannot run, each refused naming the file, the table and the key
CANNOT_RUN = [
    ("i2c-one-pin", _set("backend", "i2c_pins", ["GPIO2"]), "[backend] key 'i2c_pins': names 1 pin(s): a bus has "
                                                            "two lines (SDA, SCL)"),
    ("i2c-three-pins", _set("backend", "i2c_pins", ["GPIO2", "GPIO3", "GPIO28"]), "[backend] key 'i2c_pins': names 3"),
    ("uart-one-pin", _set("backend", "uart_pins", ["GPIO14"]), "[backend] key 'uart_pins': names 1 pin(s): a bus has "
                                                               "two lines (TXD, RXD)"),
    ("i2c-on-the-uart", _set("backend", "i2c_pins", ["GPIO14", "GPIO15"]),
     "[backend] key 'uart_pins[0]': pin GPIO14 is already used by the I2C bus to the I/O expanders"),
    ("uart-shares-i2c", _set("backend", "uart_pins", ["GPIO3", "GPIO15"]),
     "[backend] key 'uart_pins[0]': pin GPIO3 is already used by the I2C bus"),
    ("i2c-one-line-twice", _set("backend", "i2c_pins", ["GPIO2", "GPIO2"]),
     "[backend] key 'i2c_pins[1]': pin GPIO2 is already used by the I2C bus"),
    ("i2c-on-an-expander", _set("backend", "i2c_pins", ["exp0:GPIO20", "exp0:GPIO21"]),
     "[backend] key 'i2c_pins[0]': exp0:GPIO20 is on bank 'exp0': the I2C bus to the I/O expanders runs on lines of "
     "the Pi header"),
    ("uart-active-low", _set("backend", "uart_pins", ["!GPIO14", "GPIO15"]),
     "[backend] key 'uart_pins[0]': !GPIO14: a bus line is not an input or output"),
    ("i2c-freed-with-expanders", _set("backend", "i2c_pins", []), "[backend] key 'i2c_pins': empty, but pins are on "
                                                                  "the expander bank(s) exp0, exp1"),
    ("both-sets-one-csv", lambda d: d["reader"]["registry"].update(B="../tiles/sim-A.csv"),
     "[reader] key 'registry.B': ../tiles/sim-A.csv is the file of set A too"),
    ("both-sets-one-csv-spelt-apart", lambda d: d["reader"]["registry"].update(B="../tables/../tiles/./sim-A.csv"),
     "[reader] key 'registry.B': ../tables/../tiles/./sim-A.csv is the file of set A too"),
    ("baud-float", _set("reader", "baud", 115200.0), "[reader] key 'baud': must be 57600, 115200 or 230400, written "
                                                     "as a whole number (no decimal point) (got 115200.0)"),
    ("tile-set-float", _set("table", "tile_set", 144.0), "[table] key 'tile_set': must be 144, 136, 112 or 108, "
                                                         "written as a whole number (no decimal point) (got 144.0)"),
    ("retries-float", _set("reader", "retries", 3.0), "[reader] key 'retries': Input should be a valid integer"),
    ("feed-capacity-float", _set("stacker", "feed_capacity", 4.0), "[stacker] key 'feed_capacity': Input should be "
                                                                   "a valid integer"),
    ("bank-chip-float", lambda d: d["backend"]["banks"].update(exp0=2.0), "[backend] key 'banks.exp0': Input should "
                                                                          "be a valid integer"),
    ("fleet-keepalive-float", lambda d: d.update(fleet={"broker_url": "mqtt://h:1883", "site": "s", "table_id": "t1",
                                                        "keepalive_s": 30.0}),
     "[fleet] key 'keepalive_s': Input should be a valid integer"),
    ("empty-name", _set("table", "name", ""), "[table] key 'name': must not be empty (nor only spaces) (got '')"),
    ("blank-name", _set("table", "name", "   "), "[table] key 'name': must not be empty"),
    ("name-on-two-lines", _set("table", "name", "t7\nt8"), "[table] key 'name': must not hold control characters"),
    ("name-too-long", _set("table", "name", "x" * 65), "[table] key 'name': String should have at most 64"),
    ("blank-reader-url", _set("reader", "url", " "), "[reader] key 'url': must not be empty"),
    ("blank-registry-file", lambda d: d["reader"]["registry"].update(B=""), "[reader] key 'registry.B': must not be "
                                                                            "empty"),
    ("empty-bank-name", lambda d: d["backend"]["banks"].update({"": 4}), "[backend] key 'banks': the name '': a bank "
                                                                         "name, as a pin spec names it"),
    ("bank-name-no-pin-can-name", lambda d: d["backend"]["banks"].update({"Exp 2": 4}),
     "[backend] key 'banks': the name 'Exp 2': a bank name"),
    ("registry-lower-case-set", lambda d: d["reader"]["registry"].update(a="x.csv"),
     "[reader] key 'registry': the name 'a': a tile set's letter: one capital letter (A, B)"),
    ("blank-fleet-file", lambda d: d.update(fleet={"broker_url": "mqtts://h:8883", "site": "s", "table_id": "t1",
                                                   "ca_file": " ", "cert_file": "c.crt", "key_file": "c.key"}),
     "[fleet] key 'ca_file': must not be empty"),
    ("dice-sensor-on-its-motor", _set("dice", "sensor_pin", "!exp0:GPIO12"),
     "[dice] key 'sensor_pin': pin !exp0:GPIO12 is already used by dice.motor_pin"),
    ("one-home-switch-twice", _in_list("wall_lift", "home_pins", 2, "GPIO17"),
     "[wall_lift] key 'home_pins[2]': pin GPIO17 is already used by wall_lift.home_pins[0]"),
]


@pytest.mark.parametrize("change, words", [c[1:] for c in CANNOT_RUN], ids=[c[0] for c in CANNOT_RUN])
def test_what_a_table_cannot_run_is_refused_naming_the_file_table_and_key(change, words):
    """Each of these was accepted (found only when the table ran, or never): now one line naming the file, the table
    and the key."""
    data = _data()
    change(data)
    message = _error(data)
    assert message.startswith("t.toml: table [") and len(message.splitlines()) == 1, message
    assert words in message, message


@pytest.mark.parametrize("old, new, words", [
    ("baud = 115200", "baud = 115200.0", "table [reader] key 'baud': must be 57600, 115200 or 230400"),
    ("tile_set = 144 ", "tile_set = 144.0 ", "table [table] key 'tile_set': must be 144, 136, 112 or 108"),
    ('name = "four-port double-set"', 'name = ""', "table [table] key 'name': must not be empty"),
    ('i2c_pins = ["GPIO2", "GPIO3"]', 'i2c_pins = ["GPIO14", "GPIO15"]', "table [backend] key 'uart_pins[0]'"),
    ('B = "../tiles/sim-B.csv"', 'B = "../tiles/sim-A.csv"', "table [reader] key 'registry.B'"),
], ids=["baud", "tile-set", "name", "i2c-on-uart", "one-csv"])
def test_config_check_names_the_file_for_what_a_table_cannot_run(tmp_path, capsys, old, new, words):
    text = default_table_path().read_text()
    assert old in text
    bad = tmp_path / "tables" / "bad.toml"
    bad.parent.mkdir()
    bad.write_text(text.replace(old, new))
    (tmp_path / "tiles").mkdir()
    assert main(["config", "check", str(bad)]) == 1
    assert f"{bad}: {words}" in capsys.readouterr().err


@pytest.mark.parametrize("key, value, words", [
    (("deal", "throws"), 2.0, "table [deal] key 'throws': must be 1 or 2, written as a whole number"),
    (("rules", "tile_set"), 144.0, "table [rules] key 'tile_set': must be 144, 136, 112 or 108, written as a whole"),
    (("rules", "title"), " ", "table [rules] key 'title': must not be empty"),
], ids=["throws", "tile-set", "title"])
def test_a_rule_set_refuses_the_same_class(key, value, words):
    data = _rules_data("mcr")
    data[key[0]][key[1]] = value
    assert words in _rules_error(data)


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
