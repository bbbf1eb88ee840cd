"""Fault injection into the simulated table: ``KIND[:TARGET][@WHEN][=VALUE]``.

Faults act on the models, never on the controller: a jammed cam stops
turning, a stuck sensor reads one level, a missing tile is taken out of the
set, a worn mechanism (``wear:lift1=2.5``) moves that many times slower.
``WHEN`` is a simulated time (``@95s``) or an event (``@stacking2`` = when
the 2nd stacking cycle starts, ``@hand3``); without it the fault is there
from the start.  A tile fault with ``@WHEN`` (the sets are out of their
boxes by then) is applied to the next tiles put in through the centre, and
``foreign-tile`` then adds a spare copy of another set's tile.  Reader faults act on the simulated reader board and
its cable (noise, dropped frames, an unplugged port, a dead antenna);
``disk-fail`` makes the controller's SD card refuse writes; ``power-cut``
(which needs ``@WHEN``) is applied by the run harness.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from firmware.tiles.tile import TileError, parse_one

if TYPE_CHECKING:
    from sim.world import TableWorld

KINDS = ("jam", "wear", "stall", "stuck-on", "stuck-off", "missing-tile", "extra-tile", "foreign-tile",
         "unknown-tile", "rfid-noise", "rfid-drop", "rfid-disconnect", "antenna", "power-cut",
         "brownout", "lid-open", "disk-fail")
WORLD = ("jam", "wear", "stall", "stuck-on", "stuck-off", "missing-tile", "extra-tile", "foreign-tile",
         "unknown-tile", "brownout", "lid-open", "rfid-noise", "rfid-drop", "rfid-disconnect", "antenna", "disk-fail")
_SPEC = re.compile(r"^(?P<kind>[a-z-]+)(?::(?P<target>[a-z_]*\d?))?(?:@(?P<when>[a-z0-9.]+))?"
                   r"(?:=(?P<value>[^=]+))?$")
_WHEN_TIME = re.compile(r"^(\d+(?:\.\d+)?)s$")
_WHEN_EVENT = re.compile(r"^(stacking|hand)(\d+)$")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)s$")


class FaultSpecError(ValueError):
    """A fault spec that cannot be understood; the message says which part."""


@dataclass(frozen=True)
class FaultSpec:
    kind: str
    target: str | None
    at_s: float | None
    event: tuple[str, int] | None
    value: str | None
    text: str

    @property
    def duration_s(self) -> float | None:
        if self.value is None:
            return None
        m = _DURATION.match(self.value)
        return float(m.group(1)) if m else None


# What each kind takes: the targets it accepts (a pattern; None: no target) and what its =VALUE is.
_SIDE = r"[0-3]"
TARGETS: dict[str, str | None] = {
    "jam": rf"stacker{_SIDE}|lift{_SIDE}|center|dice", "wear": rf"stacker{_SIDE}|lift{_SIDE}|center",
    "stall": r"disk|ring", "stuck-on": r"[a-z_]+\d?", "stuck-off": r"[a-z_]+\d?", "antenna": r"[0-7]",
    "missing-tile": None, "extra-tile": None, "foreign-tile": None, "unknown-tile": None, "rfid-noise": None,
    "rfid-drop": None, "rfid-disconnect": None, "power-cut": None, "brownout": None, "lid-open": None,
    "disk-fail": None,
}
TARGET_WORDS = {"jam": "stacker0..3, lift0..3, center or dice", "wear": "stacker0..3, lift0..3 or center",
                "stall": "disk or ring", "antenna": "0..3 (heads) or 4..7 (seat pads)",
                "stuck-on": "a sensor name, e.g. lid", "stuck-off": "a sensor name, e.g. lid"}
VALUES = {"wear": "factor", "rfid-noise": "probability", "rfid-drop": "probability", "missing-tile": "tile",
          "extra-tile": "tile", "stuck-on": "duration", "stuck-off": "duration", "antenna": "duration",
          "rfid-disconnect": "duration", "power-cut": "duration", "brownout": "duration", "lid-open": "duration"}
VALUE_WORDS = {"factor": "a slow-down factor of at least 1, e.g. =2.5", "probability": "a probability 0..1, e.g. =0.01",
               "tile": "a tile, e.g. =5m", "duration": "a duration in seconds, e.g. =3s"}


def parse_fault(text: str) -> FaultSpec:
    """Read and check a spec; FaultSpecError naming the part that is wrong (before any simulated second)."""
    m = _SPEC.match(text.strip())
    if not m:
        raise FaultSpecError(f"bad fault spec {text!r}: expected KIND[:TARGET][@WHEN][=VALUE]")
    kind, target, when, value = m.group("kind", "target", "when", "value")
    if kind not in KINDS:
        raise FaultSpecError(f"unknown fault kind {kind!r} in {text!r}; kinds: {', '.join(KINDS)}")
    at_s = event = None
    if when:
        if (tm := _WHEN_TIME.match(when)):
            at_s = float(tm.group(1))
        elif (em := _WHEN_EVENT.match(when)):
            event = (em.group(1), int(em.group(2)))
            if event[1] < 1:
                raise FaultSpecError(f"{text!r}: events count from 1 (@{event[0]}1)")
        else:
            raise FaultSpecError(f"bad time {when!r} in {text!r}: use @95s, @stacking2 or @hand3")
    targets = TARGETS[kind]
    if targets is None and target:
        raise FaultSpecError(f"{text!r}: {kind} takes no target")
    if targets is not None and not target:
        raise FaultSpecError(f"{kind} needs a target ({TARGET_WORDS[kind]}), e.g. {kind}:{_example(kind)}")
    if targets is not None and not re.fullmatch(targets, target):
        raise FaultSpecError(f"{text!r}: no {target!r} to {kind}; use {TARGET_WORDS[kind]}")
    if kind == "power-cut" and not when:
        raise FaultSpecError(f"{text!r}: a power cut needs a time or an event, e.g. power-cut@95s or power-cut@hand2")
    if kind in ("missing-tile", "extra-tile") and not value:
        raise FaultSpecError(f"{kind} needs a tile, e.g. {kind}=5m")
    if value is not None:
        _check_value(text, kind, value)
    return FaultSpec(kind, target, at_s, event, value, text)


def _example(kind: str) -> str:
    return {"jam": "stacker2", "wear": "lift1", "stall": "disk", "antenna": "2"}.get(kind, "lid")


def _check_value(text: str, kind: str, value: str) -> None:
    what = VALUES.get(kind)
    if what is None:
        raise FaultSpecError(f"{text!r}: {kind} takes no =VALUE")
    ok = True
    if what == "duration":
        m = _DURATION.match(value)
        ok = bool(m) and 0 < float(m.group(1)) <= 86_400
    elif what in ("factor", "probability"):
        try:
            number = float(value)
        except ValueError:
            ok = False
        else:
            ok = 1 <= number <= 100 if what == "factor" else 0 <= number <= 1
    elif what == "tile":
        try:
            parse_one(value)
        except TileError as exc:
            raise FaultSpecError(f"{text!r}: {exc}") from None
    if not ok:
        raise FaultSpecError(f"{text!r}: {value!r} is not {VALUE_WORDS[what]}")


def check_fits_run(specs: list[FaultSpec], hands: int) -> None:
    """An inject whose event cannot happen in a run of ``hands`` hands is an error, not a silent no-op.

    A run of N hands deals N hands and stacks at most N + 1 sets (the set for the next hand goes down
    while the last is played)."""
    for spec in specs:
        if spec.event is None:
            continue
        name, n = spec.event
        last = hands if name == "hand" else hands + 1
        if n > last:
            raise FaultSpecError(f"{spec.text!r}: a run of {hands} hands has no {name} {n} "
                                 f"(the last is {name}{last}); add --hands or inject earlier")


_TARGET = re.compile(r"^([a-z_]+?)(\d)?$")


def _apply_now(world: "TableWorld", spec: FaultSpec) -> None:
    kind, target = spec.kind, spec.target or ""
    tm = _TARGET.match(target)
    name, side = (tm.group(1), int(tm.group(2))) if tm and tm.group(2) else (target, None)
    if kind == "jam":
        if name == "stacker" and side is not None:
            world.heads[side].cam.jam()
        elif name == "lift" and side is not None:
            world.lifts[side].jam()
        elif name == "center":
            world.center.jam()
        elif name == "dice":
            world.dice.jammed = True
        else:
            raise FaultSpecError(f"cannot jam {target!r}: use stacker0..3, lift0..3, center or dice")
    elif kind == "wear":
        _wear(world, name, side, target, spec)
    elif kind == "stall":
        if name not in ("disk", "ring"):
            raise FaultSpecError(f"cannot stall {target!r}: use disk or ring")
        world.turntable.stall()
    elif kind == "stuck-on" and name == "gate" and side is not None:
        world.heads[side].gate_stuck_open = True       # the entry flap stays open: too many tiles (E63)
    elif kind in ("stuck-on", "stuck-off"):
        sensor = world.io.sensors.get(target)
        if sensor is None:
            raise FaultSpecError(f"no sensor {target!r}; sensors: {', '.join(sorted(world.io.sensors))}")
        sensor.stick(kind == "stuck-on")
        if spec.duration_s:
            world.loop.call_later(spec.duration_s, sensor.stick, None)
    elif kind in ("rfid-noise", "rfid-drop"):
        setattr(world.reader_line, "noise_p" if kind == "rfid-noise" else "drop_p", _probability(spec))
    elif kind == "rfid-disconnect":
        world.reader_line.unplug(spec.duration_s or 5.0)
    elif kind == "antenna":
        if not target.isdigit() or not 0 <= int(target) < 8:
            raise FaultSpecError(f"antenna:{target}: antennas are 0..3 (heads) and 4..7 (seat pads)")
        world.reader.set_antenna_fault(int(target), True)
        if spec.duration_s:
            world.loop.call_later(spec.duration_s, world.reader.set_antenna_fault, int(target), False)
    elif kind == "brownout":
        world.supply_ok.stick(False)
        world.loop.call_later(spec.duration_s or 0.5, world.supply_ok.stick, None)
    elif kind == "disk-fail":
        world.storage.failing = True       # the SD card refuses writes from now on (a technician replaces it)
    elif kind == "lid-open":
        if world.lid is None:
            raise FaultSpecError("this table model has no lid sensor")
        world.lid.set(True)
        world.loop.call_later(spec.duration_s or 3.0, world.lid.set, False)


def _wear(world: "TableWorld", name: str, side: int | None, target: str, spec: FaultSpec) -> None:
    """A worn belt or a dry bearing: the mechanism still works, ``VALUE`` times slower (default 2.5)."""
    try:
        factor = float(spec.value or "2.5")
    except ValueError:
        raise FaultSpecError(f"{spec.text!r}: {spec.value!r} is not a slow-down factor") from None
    if factor < 1:
        raise FaultSpecError(f"{spec.text!r}: a worn mechanism is slower, the factor is at least 1")
    if name == "stacker" and side is not None:
        world.heads[side].cam.turn_s *= factor
    elif name == "lift" and side is not None:
        world.lifts[side].turn_s *= factor
    elif name == "center":
        world.center.travel_s *= factor
    else:
        raise FaultSpecError(f"cannot wear {target!r}: use stacker0..3, lift0..3 or center")


def _probability(spec: FaultSpec) -> float:
    try:
        p = float(spec.value or "0.01")
    except ValueError:
        raise FaultSpecError(f"{spec.text!r}: {spec.value!r} is not a probability") from None
    if not 0 <= p <= 1:
        raise FaultSpecError(f"{spec.text!r}: a probability is between 0 and 1")
    return p


def _change_set(world: "TableWorld", spec: FaultSpec) -> None:
    from sim.tileset import SimTile, make_uid

    for set_id, tiles in world.sets.items():
        if spec.kind == "missing-tile":
            kind = parse_one(spec.value or "")
            for i, tile in enumerate(tiles):
                if tile.kind == kind:
                    world.removed_tiles.append(tiles.pop(i))     # under a chair: the players can find it
                    break
        elif spec.kind == "extra-tile":
            tiles.append(SimTile(make_uid(set_id, 0x7F00 + len(tiles)), set_id, parse_one(spec.value or "")))
        elif spec.kind == "foreign-tile":
            _mix_in_foreign(world, set_id, tiles)
        elif spec.kind == "unknown-tile":
            tiles.append(SimTile(bytes([0xE0, 0x16, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01]), "X", tiles[1].kind))


def _mix_in_foreign(world: "TableWorld", set_id: str, tiles: list) -> None:
    """A tile of another registered set ends up in this one (it leaves its own set)."""
    from sim.tileset import SimTile

    others = [s for s in world.physical.sets if s != set_id]
    if not others:
        raise FaultSpecError("foreign-tile needs a second registered set")
    other = world.sets.get(others[0])
    if other is not None:
        if set_id != "A":
            return
        tiles.append(other.pop(0))
    else:
        entry = world.physical.sets[others[0]][0]
        tiles.append(SimTile(entry.uid, entry.set_id, entry.kind))


def _arm_tile_fault(world: "TableWorld", spec: FaultSpec) -> None:
    """``@WHEN`` has come for a tile fault: the sets are out of their boxes by now, so it is applied to the next
    tiles people put in through the centre (the table top pushed in after a hand, or a set poured)."""
    world.tiles_going_in.append(lambda tiles: _change_tiles(world, spec, tiles))


def _change_tiles(world: "TableWorld", spec: FaultSpec, tiles: list) -> None:
    """A tile fault on the tiles going in now: a tile of that face falls under a chair (``missing-tile``), an
    extra tile or one of no registry goes in with them, or a spare copy of a tile of another set (the parlour's
    spare box: the other set keeps its own, and the players put the copy aside when it is found)."""
    from sim.tileset import SPARE, SimTile, make_uid

    set_id = world.set_of(tiles) or "A"
    if spec.kind == "missing-tile":
        kind = parse_one(spec.value or "")
        for i, tile in enumerate(tiles):
            if tile.kind == kind:
                world.removed_tiles.append(tiles.pop(i))
                break
    elif spec.kind == "extra-tile":
        tiles.append(SimTile(make_uid(set_id, 0x7F00 + len(tiles)), set_id, parse_one(spec.value or "")))
    elif spec.kind == "unknown-tile":
        tiles.append(SimTile(bytes([0xE0, 0x16, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01]), "X", tiles[1].kind))
    elif spec.kind == "foreign-tile":
        others = [s for s in world.physical.sets if s != set_id]
        if not others:
            raise FaultSpecError("foreign-tile needs a second registered set")
        entry = world.physical.sets[others[0]][0]
        tiles.append(SimTile(entry.uid, SPARE, entry.kind))


def apply_faults(world: "TableWorld", specs: list[FaultSpec]) -> None:
    """Arm every mechanical fault of ``specs`` on the world (others are ignored here)."""
    for spec in specs:
        if spec.kind not in WORLD:
            continue
        if spec.kind in ("stuck-on", "stuck-off") and spec.target not in world.io.sensors:
            if not (spec.kind == "stuck-on" and re.fullmatch(r"gate[0-3]", spec.target)):
                raise FaultSpecError(f"{spec.text!r}: no sensor {spec.target!r} (a gate sticks open: "
                                     f"stuck-on:gate0..3); sensors: {', '.join(sorted(world.io.sensors))}")
        if spec.kind == "lid-open" and world.lid is None:
            raise FaultSpecError("this table model has no lid sensor")
        if spec.kind in ("missing-tile", "extra-tile", "foreign-tile", "unknown-tile"):
            if spec.at_s is not None:
                world.loop.call_at(spec.at_s, _arm_tile_fault, world, spec)
            elif spec.event is not None:
                world.on_event(spec.event[0], spec.event[1], lambda s=spec: _arm_tile_fault(world, s))
            else:
                _change_set(world, spec)            # from the start: in the sets' boxes
            continue
        if spec.at_s is not None:
            world.loop.call_at(spec.at_s, _apply_now, world, spec)
        elif spec.event is not None:
            world.on_event(spec.event[0], spec.event[1], lambda s=spec: _apply_now(world, s))
        else:
            _apply_now(world, spec)
