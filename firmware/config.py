"""Table-model configuration: strict TOML schema, loading and validation.

A table model names every pin, nominal time, limit and safe value of the
table.  Files are read once at start; unknown keys, wrong types, missing keys
and out-of-range values are errors whose message names the file, the table
(TOML section) and the key, so a technician can fix them without the source.
"""

from __future__ import annotations

import enum
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, PrivateAttr, ValidationError, model_validator

from firmware.config_files import (PATTERN_HINTS, Section, Text, _KeyError, key_error, read_toml, text_of,
                                   validation_error, whole_number_of)
from firmware.config_paths import shipped_dir
from firmware.i18n import N_
from firmware.ports.broker import ID_PATTERN, parse_broker_url

BANK_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
PIN_RE = re.compile(r"^!?(?:(?P<bank>[a-z][a-z0-9_]*):)?GPIO(?P<line>[0-9]|[1-2][0-9]|3[0-1])$")
TILE_SETS = (144, 136, 112, 108)
SIDES = 4
HEADER = "main"                     # the Pi header's bank (a pin spec without a bank)
BUS_LINES = {"i2c_pins": ("SDA", "SCL"), "uart_pins": ("TXD", "RXD")}
PATTERN_HINTS["^[A-Z]$"] = N_("a tile set's letter: one capital letter (A, B)")
PATTERN_HINTS[BANK_PATTERN] = N_("a bank name, as a pin spec names it (bank:GPIOn): lower-case letters, digits and "
                                 "'_', starting with a letter")

Pin = Annotated[str, Field(pattern=PIN_RE.pattern, description="[!][bank:]GPIOn; ! = active low")]
PATTERN_HINTS[PIN_RE.pattern] = N_("not a pin spec: expected [!][bank:]GPIOn with n in 0..31")
PositiveS = Annotated[float, Field(gt=0, le=3600)]
FourPins = Annotated[list[Pin], Field(min_length=SIDES, max_length=SIDES)]


def _above(section: BaseModel, key: str, other: str) -> None:
    if getattr(section, key) <= getattr(section, other):
        raise _KeyError(key, f"must be greater than {other} ({getattr(section, other)})")


class TableSection(Section):
    name: text_of(64)
    tile_set: whole_number_of(*TILE_SETS)
    double_set: bool = True


class BackendSection(Section):
    """Which gpiozero pin factory drives each pin bank (real tables only), and the header lines that
    are buses, not I/O: the I2C bus to the I/O expanders and the tile reader's UART.  A pin spec on one
    of those lines, or two banks on one gpiochip, is refused."""

    pin_factory: Literal["lgpio", "rpigpio", "mock"] = "lgpio"
    banks: dict[Annotated[str, Field(pattern=BANK_PATTERN)], Annotated[int, Field(ge=0, le=15)]] = \
        Field(default_factory=lambda: {"main": 0})
    i2c_pins: list[Pin] = Field(default_factory=lambda: ["GPIO2", "GPIO3"])     # SDA, SCL; [] frees them
    uart_pins: list[Pin] = Field(default_factory=lambda: ["GPIO14", "GPIO15"])  # TXD, RXD; [] frees them

    @model_validator(mode="after")
    def _buses(self) -> "BackendSection":
        for key, names in BUS_LINES.items():
            pins = getattr(self, key)
            if len(pins) not in (0, len(names)):
                raise _KeyError(key, f"names {len(pins)} pin(s): a bus has two lines ({', '.join(names)}), or none "
                                     f"([] frees them for I/O)")
        return self


class CenterLiftSection(Section):
    up_motor_pin: Pin
    down_motor_pin: Pin
    up_sensor_pin: Pin
    down_sensor_pin: Pin
    travel_s: PositiveS
    max_run_s: PositiveS

    @model_validator(mode="after")
    def _limits(self) -> "CenterLiftSection":
        _above(self, "max_run_s", "travel_s")
        return self


class TurntableSection(Section):
    disk_pin: Pin
    ring_pin: Pin
    index_pin: Pin
    revolution_s: Annotated[float, Field(gt=0.1, le=30)]
    tile_rate_per_s: Annotated[float, Field(gt=0.1, le=50)]
    max_run_s: PositiveS


class StackerSection(Section):
    motor_pins: FourPins
    home_pins: FourPins
    tile_in_pins: FourPins
    feed_full_pins: FourPins
    gate_pins: FourPins
    cam_turn_s: PositiveS
    max_run_s: PositiveS
    home_window: Annotated[float, Field(gt=0, lt=0.5)] = 0.1
    feed_capacity: Annotated[int, Field(ge=2, le=12)] = 4
    steer_tiles: bool = True        # gates open only for the sides that need tiles for their next stack

    @model_validator(mode="after")
    def _limits(self) -> "StackerSection":
        _above(self, "max_run_s", "cam_turn_s")
        return self


class WallLiftSection(Section):
    motor_pins: FourPins
    home_pins: FourPins
    cam_turn_s: PositiveS
    max_run_s: PositiveS
    home_window: Annotated[float, Field(gt=0, lt=0.5)] = 0.1

    @model_validator(mode="after")
    def _limits(self) -> "WallLiftSection":
        _above(self, "max_run_s", "cam_turn_s")
        return self


class DiceSection(Section):
    motor_pin: Pin
    sensor_pin: Pin | None = None
    spin_min_s: PositiveS
    spin_max_s: PositiveS
    electronic: bool = False

    @model_validator(mode="after")
    def _limits(self) -> "DiceSection":
        if self.spin_max_s < self.spin_min_s:
            raise _KeyError("spin_max_s", f"must be at least spin_min_s ({self.spin_min_s})")
        return self


class PanelSection(Section):
    key_lift_pins: Annotated[list[Pin], Field(min_length=2, max_length=2)]
    key_dice_pins: FourPins
    key_reset_pin: Pin
    lid_pin: Pin | None = None
    supply_ok_pin: Pin
    led_dealer_pins: FourPins
    led_status_pin: Pin
    led_ready_pin: Pin
    buzzer_pin: Pin
    debounce_s: Annotated[float, Field(ge=0, le=0.5)] = 0.03
    key_stuck_s: Annotated[float, Field(ge=2, le=600)] = 20.0     # a key down longer is stuck (E05)


class LimitsSection(Section):
    """Supervision of the stacking cycle (hardware.md: warn 2T, fault 3T)."""

    warn_factor: Annotated[float, Field(ge=1.1, le=10)] = 2.0
    fault_factor: Annotated[float, Field(ge=1.2, le=20)] = 3.0
    cycle_limit_s: Annotated[float, Field(gt=5, le=600)] = 80.0
    starve_side_s: Annotated[float, Field(gt=0.5, le=120)] = 10.0
    tiles_out_s: Annotated[float, Field(gt=0.5, le=120)] = 6.0
    feed_full_stuck_s: Annotated[float, Field(gt=0.5, le=120)] = 8.0
    feed_full_grace_s: Annotated[float, Field(ge=0, le=10)] = 0.7
    stall_revolutions: Annotated[float, Field(ge=1.5, le=20)] = 3.0

    @model_validator(mode="after")
    def _limits(self) -> "LimitsSection":
        _above(self, "fault_factor", "warn_factor")
        return self


class WallSection(Section):
    """How a head fills its groove: which end gets the first stack, which tile lies on top.

    ``first_stack`` is seen by the side's owner: ``right`` means the first
    stack ends at the owner's right-hand end of the wall.
    """

    first_stack: Literal["right", "left"] = "right"
    first_tile: Literal["bottom", "top"] = "bottom"


class WallCheck(str, enum.Enum):
    """How strictly a stacked set's walls are verified before they rise."""

    COMPETITION = "competition"     # a set defect (E82) latches: the referee or a technician clears it
    CASUAL = "casual"               # a set defect (E82) is the players' to fix: the tiles named are taken out


class ReaderSection(Section):
    """The tile reader board: its port, the protocol's timing, the tile registry and verification.

    ``registry`` maps a set letter to its enrollment file (CSV), relative to
    the table file's folder; ``verification`` is ``competition`` (a set defect
    latches E82) or ``casual`` (the players take the tiles named out).  Either
    way a wall with a defect or a tile not read is never dealt.
    """

    url: Text
    baud: whole_number_of(57600, 115200, 230400) = 115200
    command_timeout_s: Annotated[float, Field(gt=0, le=5)] = 0.1
    retries: Annotated[int, Field(ge=0, le=10)] = 3
    heartbeat_timeout_s: Annotated[float, Field(gt=0.5, le=60)] = 3.0
    poll_s: Annotated[float, Field(gt=0, le=0.1)] = 0.005
    reconnect_max_s: Annotated[float, Field(gt=0, le=120)] = 8.0
    match_tolerance_s: Annotated[float, Field(gt=0, le=0.1)] = 0.01
    registry: dict[Annotated[str, Field(pattern="^[A-Z]$")], Text] = Field(default_factory=dict)
    verification: Annotated[WallCheck, Field(strict=False)] = WallCheck.CASUAL

    @property
    def rejects_any_defect(self) -> bool:
        """Competition verification: a set defect latches (E82); a counted-only wall with unread positions is
        rejected too."""
        return self.verification == WallCheck.COMPETITION

    def registry_files(self, base: Path) -> dict[str, Path]:
        """Registry files by set letter, relative paths taken from ``base`` (the table file's folder)."""
        return {set_id: (base / path) for set_id, path in self.registry.items()}


FleetId = Annotated[str, Field(pattern=ID_PATTERN)]
PATTERN_HINTS[ID_PATTERN] = N_("1 to 64 letters, digits, '_' or '-', starting with a letter or digit "
                                "(no '/', '+', '#' or '.')")


class FleetSection(Section):
    """Telemetry to the parlour's MQTT broker (``docs/fleet.md``); without this section a table sends none.

    ``broker_url`` is ``mqtt://HOST:PORT`` or ``mqtts://HOST:PORT``; with TLS
    the parlour's CA and this table's certificate and key are required (the
    certificate's CN is ``table_id``).  ``command_key_file`` holds the keys
    the table trusts for commands (none: it takes no commands).  Paths are
    relative to the table file's folder."""

    broker_url: Text
    site: FleetId
    table_id: FleetId
    ca_file: Text | None = None
    cert_file: Text | None = None
    key_file: Text | None = None
    command_key_file: Text | None = None
    state_min_interval_s: Annotated[float, Field(ge=0.1, le=60)] = 1.0
    counters_period_s: Annotated[float, Field(ge=5, le=3600)] = 60.0
    keepalive_s: Annotated[int, Field(ge=5, le=600)] = 30
    first_connect_spread_s: Annotated[float, Field(ge=0, le=600)] = 10.0
    backoff_max_s: Annotated[float, Field(ge=1, le=3600)] = 60.0

    @model_validator(mode="after")
    def _broker(self) -> "FleetSection":
        try:
            tls = parse_broker_url(self.broker_url).tls
        except ValueError as exc:
            raise _KeyError("broker_url", str(exc)) from None
        for key in ("ca_file", "cert_file", "key_file"):
            if tls and getattr(self, key) is None:
                raise _KeyError(key, "required with mqtts:// (the parlour's CA, this table's certificate and key; "
                                     "mjtable fleet certs makes them)")
            if not tls and getattr(self, key) is not None:
                raise _KeyError(key, "needs an mqtts:// broker_url (mqtt:// is plain, without TLS)")
        return self

    def files(self, base: Path) -> dict[str, Path | None]:
        """The section's files by key, relative paths taken from ``base`` (the table file's folder)."""
        return {key: (base / value if value is not None else None)
                for key in ("ca_file", "cert_file", "key_file", "command_key_file")
                for value in (getattr(self, key),)}


class TableConfig(Section):
    """A whole table model, as loaded from one TOML file."""

    table: TableSection
    backend: BackendSection = Field(default_factory=BackendSection)
    center_lift: CenterLiftSection
    turntable: TurntableSection
    stacker: StackerSection
    wall_lift: WallLiftSection
    dice: DiceSection
    panel: PanelSection
    limits: LimitsSection = Field(default_factory=LimitsSection)
    wall: WallSection = Field(default_factory=WallSection)
    reader: ReaderSection
    fleet: FleetSection | None = None
    _source: Path | None = PrivateAttr(default=None)     # the file this was loaded from

    @property
    def source(self) -> Path | None:
        return self._source

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in this config start from."""
        return self._source.parent if self._source else shipped_dir() / "tables"

    def registry_files(self) -> dict[str, Path]:
        return self.reader.registry_files(self.base_dir)

    @property
    def tiles_per_side(self) -> int:
        return self.table.tile_set // SIDES

    @property
    def stacks_per_side(self) -> int:
        """Stacks in a full wall (the 108 set's last stack holds one tile)."""
        return (self.tiles_per_side + 1) // 2

    def all_pins(self) -> dict[str, str]:
        """Every pin spec by its ``section.key[index]`` name."""
        pins: dict[str, str] = {}
        for section_name in ("center_lift", "turntable", "stacker", "wall_lift", "dice", "panel"):
            section = getattr(self, section_name)
            for key, value in section:
                if not key.endswith(("_pin", "_pins")) or value is None:
                    continue
                if isinstance(value, list):
                    for i, spec in enumerate(value):
                        pins[f"{section_name}.{key}[{i}]"] = spec
                else:
                    pins[f"{section_name}.{key}"] = value
        return pins


def pin_line(spec: str) -> tuple[str, int, bool]:
    """Split a pin spec into (bank, line, active_low)."""
    m = PIN_RE.match(spec)
    if m is None:
        raise ValueError(f"bad pin spec {spec!r}")
    return m.group("bank") or "main", int(m.group("line")), spec.startswith("!")


def _check_pins(path: Path, cfg: TableConfig) -> None:
    chips: dict[int, str] = {}
    for bank, chip in cfg.backend.banks.items():
        if chip in chips:
            raise key_error(path, "backend", f"banks.{bank}", f"gpiochip {chip} is already bank '{chips[chip]}' "
                                                                 f"(two banks on one chip would drive the same lines)")
        chips[chip] = bank
    buses = {"i2c_pins": "the I2C bus to the I/O expanders", "uart_pins": "the tile reader's UART"}
    seen: dict[tuple[str, int], str] = {}
    for key, what in buses.items():
        for i, spec in enumerate(getattr(cfg.backend, key)):
            bank, line, active_low = pin_line(spec)
            where = f"{key}[{i}]"
            if bank != HEADER:
                raise key_error(path, "backend", where, f"{spec} is on bank '{bank}': {what} runs on lines of the "
                                                        f"Pi header (GPIOn, bank '{HEADER}')")
            if bank not in cfg.backend.banks:
                raise key_error(path, "backend", where, f"pin bank '{bank}' is not declared in [backend.banks]")
            if active_low:
                raise key_error(path, "backend", where, f"{spec}: a bus line is not an input or output; '!' "
                                                        f"(active low) means nothing there")
            if (bank, line) in seen:
                raise key_error(path, "backend", where, f"pin {spec} is already used by {seen[(bank, line)]}")
            seen[(bank, line)] = f"{what} (backend.{key})"
    expanders = sorted({pin_line(spec)[0] for spec in cfg.all_pins().values()} - {HEADER})
    if expanders and not cfg.backend.i2c_pins:
        raise key_error(path, "backend", "i2c_pins", f"empty, but pins are on the expander bank(s) "
                                                     f"{', '.join(expanders)}, which are reached through the I2C bus: "
                                                     f"name its two lines (SDA, SCL)")
    for name, spec in cfg.all_pins().items():
        bank, line, _ = pin_line(spec)
        section, key = name.split(".", 1)
        if bank not in cfg.backend.banks:
            raise key_error(path, section, key, f"pin bank '{bank}' is not declared in [backend.banks]")
        if (bank, line) in seen:
            raise key_error(path, section, key, f"pin {spec} is already used by {seen[(bank, line)]}")
        seen[(bank, line)] = name


def _check_registry(path: Path, cfg: TableConfig) -> None:
    """Each tile set its own enrolment file: two sets naming one file would take each other's tags."""
    named: dict[Path, str] = {}
    for set_id, rel in cfg.reader.registry.items():
        target = (path.parent / rel).resolve()
        if target in named:
            raise key_error(path, "reader", f"registry.{set_id}", f"{rel} is the file of set {named[target]} too "
                                                                  f"({target}); each set is enrolled into a file of "
                                                                  f"its own")
        named[target] = set_id


def parse_table_config(data: dict, path: Path) -> TableConfig:
    try:
        cfg = TableConfig.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc.errors()) from None
    _check_pins(path, cfg)
    _check_registry(path, cfg)
    cfg._source = path
    return cfg


def load_table_config(path: str | Path) -> TableConfig:
    """Load and validate a table model; raises :class:`ConfigError`."""
    path = Path(path)
    return parse_table_config(read_toml(path), path)


def default_table_path() -> Path:
    """The four-port double-set model shipped with the package (``config/tables`` of the checkout)."""
    return shipped_dir() / "tables" / "four_port_double.toml"
