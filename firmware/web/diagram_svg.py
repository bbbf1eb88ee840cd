"""The controller's state diagram as an inline SVG for the web page, drawn from the transition table.

Each state is a box at its place in the cycle (the places below; a state
added to the controller without one is drawn in a row of its own at the
bottom, never left out), each transition an arrow with its trigger.
Transitions from nearly every state (``hold``, ``latch``) are one note
each beside their destination, as in ``docs/state-machine.md``.  Boxes
carry ``id="state-NAME"`` so the page can light the state the table is in.
"""

from __future__ import annotations

import math
from html import escape
from typing import Callable

from firmware.controller.states import TRANSITIONS, TableState

BOX_W, BOX_H = 104, 30
PLACES: dict[str, tuple[int, int]] = {
    "boot": (70, 40), "homing": (230, 40), "idle": (400, 40), "stacking": (580, 40), "paused": (760, 40),
    "service": (70, 160), "ready": (400, 160), "raising": (580, 160), "rejected": (760, 160),
    "center_down": (230, 280), "dice": (580, 280),
    "open": (230, 400), "center_up": (400, 400), "in_play": (580, 400),
    "hold": (760, 520), "latched": (400, 520),
}
MANY = 6                  # more sources than this: a note, not arrows


def _edge(a: tuple[int, int], b: tuple[int, int]) -> tuple[float, float, float, float]:
    """From the border of box a towards box b, to the border of b."""
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    length = math.hypot(dx, dy) or 1.0

    def cut(cx: float, cy: float, sign: float) -> tuple[float, float]:
        tx = (BOX_W / 2) / abs(dx) if dx else math.inf
        ty = (BOX_H / 2) / abs(dy) if dy else math.inf
        t = min(tx, ty)
        return cx + sign * dx * t, cy + sign * dy * t
    x1, y1 = cut(ax, ay, 1)
    x2, y2 = cut(bx, by, -1)
    return x1, y1, x2 - 4 * dx / length, y2 - 4 * dy / length


def state_diagram(state_words: Callable[[str], str] = str, trigger_words: Callable[[str], str] = str,
                  any_state: str = "{trigger}: from any active state", label: str = "the controller's states") -> str:
    """The SVG (a string to put in the page as it is); states and triggers named by ``state_words`` and
    ``trigger_words`` (the page's language: the identifiers themselves by default)."""
    places = dict(PLACES)
    spare = [s.value for s in TableState if s.value not in places]
    for i, name in enumerate(spare):
        places[name] = (70 + 170 * i, 640)
    height = 700 if spare else 580
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 860 {height}" class="diagram" role="img" '
             f'aria-label="{escape(label)}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>']
    notes: dict[str, list[str]] = {}
    edges: list[tuple[str, str, str]] = []
    for row in TRANSITIONS:
        sources = row["source"] if isinstance(row["source"], list) else [row["source"]]
        if len(sources) > MANY:
            notes.setdefault(row["dest"], []).append(any_state.format(trigger=trigger_words(row["trigger"])))
        else:
            edges += [(source, row["dest"], trigger_words(row["trigger"])) for source in sources]
    pairs = {(a, b) for a, b, _ in edges}
    for source, dest, trigger in edges:
        x1, y1, x2, y2 = _edge(places[source], places[dest])
        both_ways = (dest, source) in pairs
        if both_ways:                       # two parallel arrows, each label on its own side
            length = math.hypot(x2 - x1, y2 - y1) or 1.0
            ox, oy = -(y2 - y1) / length * 5, (x2 - x1) / length * 5
            x1, y1, x2, y2 = x1 + ox, y1 + oy, x2 + ox, y2 + oy
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        if both_ways:
            my += 12 if x2 < x1 or y2 < y1 else -2
        parts.append(f'<g class="edge"><line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" '
                     f'marker-end="url(#arrow)"/><text x="{mx:.0f}" y="{my - 3:.0f}">{escape(trigger)}</text></g>')
    for name, (x, y) in places.items():
        parts.append(f'<g class="state" id="state-{name}"><rect x="{x - BOX_W / 2:.0f}" y="{y - BOX_H / 2:.0f}" '
                     f'width="{BOX_W}" height="{BOX_H}" rx="8"/><text x="{x}" y="{y + 5}">'
                     f'{escape(state_words(name))}</text></g>')
        for i, note in enumerate(notes.get(name, [])):
            parts.append(f'<text class="note" x="{x}" y="{y + BOX_H / 2 + 16 + 14 * i:.0f}">{escape(note)}</text>')
    parts.append("</svg>")
    return "".join(parts)
