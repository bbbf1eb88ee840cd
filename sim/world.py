"""The simulated table: every mechanism model, wired to pins from the table config.

The world owns the mechanics (centre lift, turntable and ring, four heads,
four wall lifts, dice), the panel inputs a bench tester presses, the lamps
it watches, and where every physical tile is: on the disk, in a head's
track, in a groove under the table, or in the walls on the table top (a
hand laid on a seat pad is of those: the pad's antenna reads it there).
All randomness comes from one ``random.Random(seed)``.
"""

from __future__ import annotations

import logging
import itertools
import random
from functools import partial
from typing import Callable

from firmware.config import SIDES, TableConfig
from firmware.loop import Loop
from firmware.tiles.sets import tile_set
from firmware.tiles.tile import code
from sim.models.cam import CamModel
from sim.models.center_lift import CenterLiftModel
from sim.models.dice import DiceModel
from sim.models.head import HeadModel
from sim.models.io import SimIO
from sim.models.turntable import TurntableModel
from firmware.reader.registry import TileRegistry, load_table_registry
from sim.reader_board import ReaderBoard
from sim.reader_line import ReaderLine
from sim.storage import SimStorage
from sim.tileset import SimTile, generated_registry, physical_registry, physical_set, shuffled

log = logging.getLogger(__name__)


_NAMES = itertools.count(1)


class TableWorld:
    """A four-sided table model on the loop's virtual time."""

    def __init__(self, cfg: TableConfig, loop: Loop, seed: int = 1, registry: TileRegistry | None = None) -> None:
        self.cfg = cfg
        self.loop = loop
        self.seed = seed
        self.rng = random.Random(seed)
        self.io = SimIO(loop, list(cfg.backend.banks))
        # in this order: the order the parts' sensors and outputs are registered with ``io`` (a seed's run repeats)
        self._build_center_lift()
        self._build_heads()
        self._build_wall_lifts()
        self._build_turntable()
        self._build_dice()
        self._build_panel()
        self._build_tiles(registry)
        self._build_reader()
        self.storage = SimStorage()             # the controller's SD card (a fault can make it fail)
        self._event_hooks: dict[tuple[str, int], list[Callable[[], None]]] = {}
        self.event_counts: dict[str, int] = {}
        self.wear: list = []                    # parts wearing towards a jam (sim.wear)

    # -- building the table (``__init__``, in order) -------------------------
    def _build_center_lift(self) -> None:
        io, c = self.io, self.cfg.center_lift
        self.center = CenterLiftModel(self.loop, c.travel_s, io.sensor("center_up", c.up_sensor_pin),
                                      io.sensor("center_down", c.down_sensor_pin))
        io.watch("center_lift.up_motor", c.up_motor_pin, self.center.set_up_relay)
        io.watch("center_lift.down_motor", c.down_motor_pin, self.center.set_down_relay)

    def _build_heads(self) -> None:
        """The four stacker heads: each a cam, a gate, and the optics of its feed track."""
        io, st = self.io, self.cfg.stacker
        self.heads = [
            HeadModel(self.loop, s, st.cam_turn_s, st.home_window, st.feed_capacity,
                      io.sensor(f"stacker_home{s}", st.home_pins[s]),
                      io.sensor(f"tile_in{s}", st.tile_in_pins[s]),
                      io.sensor(f"feed_full{s}", st.feed_full_pins[s]))
            for s in range(SIDES)
        ]
        for s, head in enumerate(self.heads):
            io.watch(f"stacker{s}", st.motor_pins[s], head.cam.set_motor)
            io.watch(f"gate{s}", st.gate_pins[s], head.set_gate)

    def _build_wall_lifts(self) -> None:
        """The four wall lifts, and the walls they raise onto the table top."""
        io, wl = self.io, self.cfg.wall_lift
        self.walls: list[list[tuple[SimTile, ...]]] = [[] for _ in range(SIDES)]  # raised, on the table
        self.lifts = [
            CamModel(self.loop, f"lift{s}", wl.cam_turn_s, wl.home_window,
                     io.sensor(f"lift_home{s}", wl.home_pins[s]), partial(self._raise_side, s))
            for s in range(SIDES)
        ]
        for s, lift in enumerate(self.lifts):
            io.watch(f"wall_lift{s}", wl.motor_pins[s], lift.set_motor)

    def _build_turntable(self) -> None:
        """The disk and the ring, feeding the heads (built before it)."""
        io, t = self.io, self.cfg.turntable
        self.turntable = TurntableModel(self.loop, self.rng, t.revolution_s, t.tile_rate_per_s,
                                        io.sensor("disk_index", t.index_pin), self.heads)
        io.watch("disk", t.disk_pin, self.turntable.set_disk)
        io.watch("ring", t.ring_pin, self.turntable.set_ring)

    def _build_dice(self) -> None:
        io, d = self.io, self.cfg.dice
        self.dice = DiceModel(self.loop, self.rng, io.sensor("dice_sensor", d.sensor_pin) if d.sensor_pin else None)
        io.watch("dice", d.motor_pin, self.dice.set_motor)

    def _build_panel(self) -> None:
        """The keys, the lid switch and the supply's signal a tester works; the lamps and buzzer they watch."""
        io, p = self.io, self.cfg.panel
        self.keys = {f"key_lift{i}": io.sensor(f"key_lift{i}", spec) for i, spec in enumerate(p.key_lift_pins)}
        self.keys.update({f"key_dice{i}": io.sensor(f"key_dice{i}", spec) for i, spec in enumerate(p.key_dice_pins)})
        self.keys["key_reset"] = io.sensor("key_reset", p.key_reset_pin)
        self.lid = io.sensor("lid", p.lid_pin) if p.lid_pin else None
        self.supply_ok = io.sensor("supply_ok", p.supply_ok_pin)
        self.supply_ok.set(True)
        self.lamps: dict[str, bool] = {}
        self.beeps = 0
        for i, spec in enumerate(p.led_dealer_pins):
            io.watch(f"led_dealer{i}", spec, partial(self._lamp, f"led_dealer{i}"))
        io.watch("led_status", p.led_status_pin, partial(self._lamp, "led_status"))
        io.watch("led_ready", p.led_ready_pin, partial(self._lamp, "led_ready"))
        io.watch("buzzer", p.buzzer_pin, self._buzzer)

    def _build_tiles(self, registry: TileRegistry | None) -> None:
        """The tile sets (enrolled or not) and the places a tile can be off the disk."""
        cfg = self.cfg
        self.tile_set = tile_set(cfg.table.tile_set)
        set_ids = ("A", "B")[: 2 if cfg.table.double_set else 1]
        if registry is None:
            registry = load_table_registry(cfg) if cfg.reader.registry else generated_registry(set_ids)
        self.registry = registry            # what the controller knows: the enrolled sets
        # every tile there is, as the people know them by their backs and faces: a set not enrolled has tiles
        # too (made from the seed), which the controller only counts
        self.physical = physical_registry(registry, set_ids, self.tile_set, self.seed)
        self.sets: dict[str, list[SimTile]] = {
            set_id: physical_set(self.physical, self.tile_set, set_id) for set_id in set_ids
        }
        self.pads: list[list[SimTile]] = [[] for _ in range(SIDES)]   # tiles laid on each seat's pad
        self.removed_tiles: list[SimTile] = []                         # taken out by a missing-tile fault
        self.found: list[SimTile] = []          # stray tiles the players picked up, kept to return to their set
        self.set_aside: list[SimTile] = []      # tiles of no registered set, out of the game
        self.tiles_going_in: list[Callable[[list[SimTile]], None]] = []   # tile faults armed for the next tiles in

    def _build_reader(self) -> None:
        """The reader board under the table and its cable to the controller (rfidsim://NAME)."""
        self.name = f"table{next(_NAMES)}"
        self.reader_line = ReaderLine(self.loop, random.Random(self.seed + 7), self.name, self.cfg.reader.baud)
        self.reader = ReaderBoard(self.loop, self.reader_line, field=self._antenna_field)
        for head in self.heads:
            head.on_tile.append(lambda side, tile: self.reader.tile_passed(side, tile.uid))

    # -- tiles -------------------------------------------------------------
    def load_set(self, set_id: str) -> None:
        """Put a whole set on the disk, shuffled (as if pushed through the drop hole)."""
        self.turntable.load(shuffled(self._going_in(list(self.sets[set_id])), self.rng))

    def _going_in(self, tiles: list[SimTile]) -> list[SimTile]:
        """Tiles people put in through the centre (a set poured, the table top pushed in): a tile fault injected
        with ``@WHEN`` since the last time is applied to them now (:mod:`sim.faults`)."""
        hooks, self.tiles_going_in = self.tiles_going_in, []
        for hook in hooks:
            hook(tiles)
        return tiles

    def center_is_up(self) -> bool:
        return self.center.position >= 1.0

    def push_table_into_center(self) -> int:
        """Players push every tile on the table top into the open centre; returns how many.  A hand laid on a
        seat pad goes in with them (its tiles are tiles of the table top: see :meth:`lay_hand_on_pad`)."""
        tiles = [t for side in self.walls for stack in side for t in stack]
        self.walls = [[] for _ in range(len(self.walls))]
        self.clear_pads()
        if tiles:
            tiles = self._going_in(tiles)
        self.turntable.load(shuffled(tiles, self.rng))
        return len(tiles)

    def set_of(self, tiles: list[SimTile]) -> str | None:
        """The set most of ``tiles`` belong to (None for no tile of a set)."""
        counts: dict[str, int] = {}
        for tile in tiles:
            entry = self.physical.lookup(tile.uid)
            if entry is not None:
                counts[entry.set_id] = counts.get(entry.set_id, 0) + 1
        return max(counts, key=counts.__getitem__) if counts else None

    def wall_tiles(self) -> list[SimTile]:
        return [t for side in self.walls for stack in side for t in stack]

    def take_out_of_walls(self, set_id: str) -> list[SimTile]:
        """The players take out of the raised walls every tile that is not of ``set_id`` (the ones the
        controller named: unknown, foreign or extra tiles); the stacks close up."""
        strays = []
        for side in range(len(self.walls)):
            kept_stacks = []
            for stack in self.walls[side]:
                kept = []
                for tile in stack:
                    entry = self.physical.lookup(tile.uid)
                    (kept if entry is not None and entry.set_id == set_id else strays).append(tile)
                if kept:
                    kept_stacks.append(tuple(kept))
            self.walls[side] = kept_stacks
        return strays

    def pick_up_from_disk(self) -> list[SimTile]:
        """The players take what lies on the open disk out by hand."""
        tiles = list(self.turntable.hopper)
        self.turntable.hopper.clear()
        return tiles

    def pour(self, set_id: str) -> None:
        """A whole set poured in through the open centre (first load)."""
        self.turntable.load(shuffled(self._going_in(list(self.sets[set_id])), self.rng))

    def repair(self) -> None:
        """A technician clears every mechanical fault: jams freed, stalls cleared, sensors unstuck, antennas
        and the reader's cable fixed."""
        for cam in [*(h.cam for h in self.heads), *self.lifts]:
            cam.axis.jam(False)
        self.center.axis.jam(False)
        self.turntable.stalled = False
        self.turntable._update()
        for sensor in self.io.sensors.values():
            if sensor.stuck is not None:
                sensor.stick(None)
        self.dice.jammed = False
        for antenna in sorted(self.reader.faulty):
            self.reader.set_antenna_fault(antenna, False)     # (the antenna's cable reseated or replaced)
        self.reader_line.noise_p = self.reader_line.drop_p = 0.0     # (the reader's cable reseated)
        self.storage.repair()
        for head in self.heads:
            head.gate_stuck_open = False
            # tiles that passed a dead counter optic are not in the controller's count: back onto the disk
            self.turntable.hopper.extend(head.clear_uncounted())

    def tiles_on_table(self) -> int:
        return sum(len(stack) for side in self.walls for stack in side)

    def _antenna_field(self, antenna: int) -> list[bytes]:
        """UIDs in an antenna's field now: a head's feed track, or a seat pad."""
        if antenna < SIDES:
            return [t.uid for t in self.heads[antenna].track]
        return [t.uid for t in self.pads[antenna - SIDES]]

    def lay_on_pad(self, side: int, tiles: list[SimTile]) -> None:
        """A player lays tiles on the seat pad of ``side`` (each is read once as it arrives; an inventory of
        the pad's antenna lists them until they are taken away)."""
        for tile in tiles:
            self.pads[side].append(tile)
            self.reader.tile_passed(SIDES + side, tile.uid)

    def lay_hand_on_pad(self, side: int, kinds: list[int]) -> list[SimTile]:
        """The player of ``side`` lays a hand (these faces) on the seat pad: tiles of those faces from the table
        top, none that lies on a pad already.  (In the simulator the walls stand for every tile on the table
        top: a tile drawn stays in its wall, so a hand's tiles are found there; pushing the table into the
        centre takes them off the pad with the walls.)  ValueError, nothing laid, if the table lacks one."""
        on_pads = {id(t) for pad in self.pads for t in pad}
        free: dict[int, list[SimTile]] = {}
        for tile in self.wall_tiles():
            if id(tile) not in on_pads:
                free.setdefault(tile.kind, []).append(tile)
        tiles = []
        for kind in kinds:
            if not free.get(kind):
                raise ValueError(f"the pad of side {side}: no tile {code(kind)} left on the table top")
            tiles.append(free[kind].pop())
        self.lay_on_pad(side, tiles)
        return tiles

    def clear_pads(self) -> list[SimTile]:
        """Take every tile off the seat pads (the table top is cleared); returns them."""
        taken = [t for pad in self.pads for t in pad]
        self.pads = [[] for _ in range(SIDES)]
        return taken

    def feed_over_antenna(self, antenna: int, tiles: list[SimTile], interval_s: float = 0.4) -> None:
        """A technician passes ``tiles`` one by one over ``antenna`` (enrollment on the bench)."""
        for i, tile in enumerate(tiles):
            self.loop.call_later((i + 1) * interval_s, self.reader.tile_passed, antenna, tile.uid)

    def grooves(self) -> list[list[tuple[SimTile, ...]]]:
        return [head.groove for head in self.heads]

    def _raise_side(self, side: int) -> None:
        """A lift turn pushes the groove's stacks up; with an empty groove the wall on top stays."""
        risen = self.heads[side].take_groove()
        if risen:
            self.walls[side] = self.walls[side] + risen     # (tiles still on top would end up mixed in)

    # -- panel ---------------------------------------------------------------
    def press(self, key: str, hold_s: float = 0.2) -> None:
        """Press a panel key now and release it after ``hold_s``."""
        sensor = self.keys[key]
        sensor.set(True)
        self.loop.call_later(hold_s, sensor.set, False)

    def _lamp(self, name: str, on: bool) -> None:
        self.lamps[name] = on

    def _buzzer(self, on: bool) -> None:
        self.lamps["buzzer"] = on
        if on:
            self.beeps += 1

    # -- fault triggers ----------------------------------------------------
    def on_event(self, name: str, number: int, hook: Callable[[], None]) -> None:
        """Run ``hook`` when the ``number``-th ``name`` event begins (e.g. stacking 2)."""
        self._event_hooks.setdefault((name, number), []).append(hook)

    def event(self, name: str) -> int:
        """Announce the start of an event (``stacking``, ``hand``); returns its number."""
        n = self.event_counts.get(name, 0) + 1
        self.event_counts[name] = n
        for hook in self._event_hooks.pop((name, n), []):
            hook()
        return n

    # -- observation -------------------------------------------------------
    MOTORS = frozenset(["center_lift.up_motor", "center_lift.down_motor", "disk", "ring", "dice",
                        *(f"stacker{s}" for s in range(SIDES)), *(f"wall_lift{s}" for s in range(SIDES))])

    def motors_running(self) -> dict[str, bool]:
        return {n: self.io.output_levels.get(n, False) for n in sorted(self.MOTORS)}

    def motors_on(self) -> set[str]:
        """The motors driven now (kept as the outputs change: cheap to ask on every change)."""
        return self.io.outputs_on & self.MOTORS
