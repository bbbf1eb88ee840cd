"""A wearing part: a cam (stacking head or wall lift) that turns slower every cycle, then jams.

``--wear head2:0.5``: each turn of side 2's stacking head takes 0.5% longer
than the one before (a belt stretching, a bearing running dry), until a
turn would take ``JAM_FACTOR`` times its healthy time: then the cam jams
(:meth:`sim.models.cam.CamModel.jam`), which the firmware meets as the jam
it is (the movement times out: the head's or lift's fault).  A technician's
repair frees the jam with a new part: it turns at its healthy time from
then on (:attr:`PartWear.jammed_at_cycle` says when the old one jammed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sim.models.cam import CamModel

JAM_FACTOR = 1.5        # a turn this much slower than healthy jams the cam
PART_RE = re.compile(r"^(head|lift)([0-3])$")


def parse_part(name: str) -> tuple[str, int]:
    """``head0``..``head3``, ``lift0``..``lift3`` -> (kind, side); ValueError names the choices."""
    m = PART_RE.match(name)
    if not m:
        raise ValueError(f"no part {name!r}: head0..head3 (stacking heads) or lift0..lift3 (wall lifts)")
    return m.group(1), int(m.group(2))


def worn_turn_s(healthy_s: float, percent_per_cycle: float, cycles: int) -> float:
    """A worn part's turn time after ``cycles`` turns of wear."""
    return healthy_s * (1.0 + percent_per_cycle / 100.0) ** cycles


def jams(healthy_s: float, turn_s: float) -> bool:
    return turn_s >= JAM_FACTOR * healthy_s


@dataclass
class PartWear:
    part: str
    percent_per_cycle: float
    cam: CamModel
    healthy_s: float
    cycles: int = 0             # turns started since the wear began
    jammed_at_cycle: int | None = None

    def to_dict(self) -> dict:
        return {"part": self.part, "percent_per_cycle": self.percent_per_cycle, "cycles": self.cycles,
                "jammed_at_cycle": self.jammed_at_cycle}

    def attach(self) -> None:
        self.cam.before_turn = self._turn

    def _turn(self) -> None:
        """A turn starts: it takes a little longer than the last; past the jam threshold the cam jams."""
        if self.jammed_at_cycle is not None or self.cam.axis.jammed:
            return
        self.cycles += 1
        self.cam.turn_s = worn_turn_s(self.healthy_s, self.percent_per_cycle, self.cycles)
        if jams(self.healthy_s, self.cam.turn_s):
            self.jammed_at_cycle = self.cycles
            self.cam.turn_s = self.healthy_s       # (the part replaced at the repair is healthy)
            self.cam.jam()


def apply_wear(world, wear: list[tuple[str, float]]) -> list[PartWear]:
    """Make each named part of ``world`` wear by its per cent a cycle; the parts, for the report."""
    parts = []
    for name, percent in wear:
        kind, side = parse_part(name)
        cam = world.heads[side].cam if kind == "head" else world.lifts[side]
        part = PartWear(name, percent, cam, cam.turn_s)
        part.attach()
        parts.append(part)
    return parts


def parse_wear(specs: list[str]) -> list[tuple[str, float]]:
    """``PART:PERCENT`` each (head0..3, lift0..3; 0 < PERCENT <= 10), a part at most once; ValueError says what is
    wrong."""
    out: list[tuple[str, float]] = []
    for spec in specs:
        part, colon, text = spec.partition(":")
        if not colon:
            raise ValueError(f"--wear {spec!r}: PART:PERCENT, e.g. head2:0.5")
        try:
            parse_part(part)
        except ValueError as e:
            raise ValueError(f"--wear {spec!r}: {e}") from None
        try:
            percent = float(text)
        except ValueError:
            raise ValueError(f"--wear {spec!r}: {text!r} is not a number") from None
        if not 0 < percent <= 10:
            raise ValueError(f"--wear {spec!r}: PERCENT (slowing per cycle) must be above 0 and at most 10")
        if any(p == part for p, _ in out):
            raise ValueError(f"--wear {part} given twice")
        out.append((part, percent))
    return out
