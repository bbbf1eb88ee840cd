"""``python -m firmware.web.make_tiles``: draw the 42 tile faces and a tile's back as small SVG files.

The page shows tiles from these files (``firmware/web/static/tiles``,
shipped in the package), drawn with shapes and strokes only: no text and
no font, so a phone without CJK fonts shows the same tiles.  Dots are
circles in their classic places, bamboo are sticks, characters are the
numeral's strokes over 万's, winds are the letters of the notation (E S W
N) drawn as strokes, 中 is its box and stroke, 发 its strokes in green, 白 a
blue frame, flowers a flower with their number as dots (seasons red,
plants blue).  A test checks the shipped files are what this script draws.
"""

from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "static" / "tiles"
W, H = 60, 80
BLUE, GREEN, RED, INK, GOLD = "#1f5fbf", "#1b8a3a", "#c8102e", "#1d2b3a", "#e0a100"
Stroke = list[tuple[float, float]]

NUMERALS: dict[int, list[Stroke]] = {          # 一 .. 九 in the upper half of the face
    1: [[(12, 24), (48, 24)]],
    2: [[(18, 15), (42, 15)], [(12, 33), (48, 33)]],
    3: [[(18, 11), (42, 11)], [(20, 23), (40, 23)], [(12, 35), (48, 35)]],
    4: [[(12, 12), (12, 36), (48, 36), (48, 12), (12, 12)], [(24, 12), (23, 26), (17, 31)],
        [(35, 12), (35, 27), (41, 29)]],
    5: [[(16, 11), (44, 11)], [(28, 11), (23, 36)], [(18, 22), (40, 22), (38, 36)], [(12, 36), (48, 36)]],
    6: [[(28, 7), (31, 12)], [(12, 18), (48, 18)], [(24, 24), (15, 37)], [(36, 24), (45, 37)]],
    7: [[(12, 22), (46, 17)], [(24, 9), (24, 32), (29, 36), (46, 36), (46, 30)]],
    8: [[(26, 11), (22, 26), (12, 37)], [(34, 11), (38, 26), (48, 37)]],
    9: [[(28, 8), (26, 24), (14, 37)], [(14, 18), (38, 18), (38, 32), (42, 36), (48, 34)]],
}
WAN: list[Stroke] = [[(12, 47), (48, 47)], [(27, 47), (22, 62), (13, 73)], [(24, 56), (44, 56), (42, 70), (35, 73)]]
LETTERS: dict[str, list[Stroke]] = {
    "E": [[(44, 16), (17, 16), (17, 64), (44, 64)], [(17, 40), (38, 40)]],
    "S": [[(44, 21), (38, 16), (22, 16), (16, 22), (16, 33), (22, 39), (38, 41), (44, 47), (44, 58), (38, 64),
           (22, 64), (16, 59)]],
    "W": [[(11, 16), (20, 64), (30, 32), (40, 64), (49, 16)]],
    "N": [[(16, 64), (16, 16), (44, 64), (44, 16)]],
}
FA: list[Stroke] = [[(20, 12), (16, 22)], [(12, 27), (48, 27)], [(38, 12), (43, 19)], [(31, 13), (27, 34), (12, 70)],
                    [(22, 42), (44, 42), (31, 58), (16, 72)], [(25, 49), (48, 72)]]
DOTS: dict[int, list[tuple[float, float]]] = {
    2: [(30, 22), (30, 58)], 3: [(16, 16), (30, 40), (44, 64)], 4: [(18, 22), (42, 22), (18, 58), (42, 58)],
    5: [(18, 20), (42, 20), (30, 40), (18, 60), (42, 60)],
    6: [(19, 16), (41, 16), (19, 40), (41, 40), (19, 64), (41, 64)],
    7: [(14, 13), (30, 21), (46, 29), (19, 48), (41, 48), (19, 66), (41, 66)],
    8: [(19, 13), (41, 13), (19, 31), (41, 31), (19, 49), (41, 49), (19, 67), (41, 67)],
    9: [(14, 17), (30, 17), (46, 17), (14, 40), (30, 40), (46, 40), (14, 63), (30, 63), (46, 63)],
}
STICKS: dict[int, list[tuple[float, float]]] = {
    2: [(30, 24), (30, 56)], 3: [(30, 24), (18, 56), (42, 56)], 4: [(19, 24), (41, 24), (19, 56), (41, 56)],
    5: [(17, 20), (43, 20), (30, 40), (17, 60), (43, 60)],
    6: [(14, 24), (30, 24), (46, 24), (14, 56), (30, 56), (46, 56)],
    7: [(30, 14), (14, 40), (30, 40), (46, 40), (14, 66), (30, 66), (46, 66)],
    8: [(12, 24), (24, 24), (36, 24), (48, 24), (12, 56), (24, 56), (36, 56), (48, 56)],
    9: [(14, 14), (30, 14), (46, 14), (14, 40), (30, 40), (46, 40), (14, 66), (30, 66), (46, 66)],
}


def _path(strokes: list[Stroke], colour: str, width: float = 4.0) -> str:
    d = " ".join("M" + " L".join(f"{x:g},{y:g}" for x, y in stroke) for stroke in strokes)
    return (f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{width:g}" stroke-linecap="round" '
            f'stroke-linejoin="round"/>')


def _tile(body: str, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img">'
            f'<title>{title}</title><rect x="1" y="1" width="{W - 2}" height="{H - 2}" rx="6" fill="#fbf8ef" '
            f'stroke="#9a958a" stroke-width="2"/>{body}</svg>\n')


def _dot(x: float, y: float, r: float, colour: str) -> str:
    return (f'<circle cx="{x:g}" cy="{y:g}" r="{r:g}" fill="{colour}"/>'
            f'<circle cx="{x:g}" cy="{y:g}" r="{r * 0.45:g}" fill="#fbf8ef"/>')


def _stick(x: float, y: float, colour: str) -> str:
    return (f'<rect x="{x - 3.5:g}" y="{y - 9:g}" width="7" height="18" rx="3" fill="{colour}"/>'
            f'<path d="M{x - 3.5:g},{y:g} L{x + 3.5:g},{y:g}" stroke="#fbf8ef" stroke-width="1.5"/>')


def face(code: str) -> str:
    """The SVG of one tile code (``5m``, ``E``, ``C``, ``3f``), or ``back``."""
    if code == "back":
        return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
                f'role="img"><title>not read</title><rect x="1" y="1" width="{W - 2}" height="{H - 2}" rx="6" '
                f'fill="#2f7d4f" stroke="#1e5234" stroke-width="2"/></svg>\n')
    if len(code) == 2 and code[0] in "123456789":
        rank, suit = int(code[0]), code[1]
        if suit == "m":
            return _tile(_path(NUMERALS[rank], INK) + _path(WAN, RED), f"{rank} characters")
        if suit == "p":
            if rank == 1:
                body = _dot(30, 40, 15, BLUE) + f'<circle cx="30" cy="40" r="4" fill="{RED}"/>'
            else:
                colours = [BLUE, GREEN, RED]
                body = "".join(_dot(x, y, 6.5, colours[i % 3]) for i, (x, y) in enumerate(DOTS[rank]))
            return _tile(body, f"{rank} dots")
        if suit == "s":
            if rank == 1:
                body = _stick(30, 40, RED) + _stick(30, 22, GREEN) + _stick(30, 58, GREEN)
            else:
                body = "".join(_stick(x, y, RED if rank in (5, 7, 9) and i in (0, 2, 4) and rank != 7 or
                                      (rank == 7 and i == 0) else GREEN) for i, (x, y) in enumerate(STICKS[rank]))
            return _tile(body, f"{rank} bamboo")
        if suit == "f" and rank <= 8:
            colour = RED if rank <= 4 else BLUE
            petals = "".join(f'<circle cx="{30 + 10 * dx:g}" cy="{32 + 10 * dy:g}" r="7" fill="{colour}"/>'
                             for dx, dy in ((0, -1), (0.95, -0.31), (0.59, 0.81), (-0.59, 0.81), (-0.95, -0.31)))
            number = (rank - 1) % 4 + 1
            marks = "".join(f'<circle cx="{30 + 9 * (i - (number - 1) / 2):g}" cy="64" r="3" fill="{INK}"/>'
                            for i in range(number))
            return _tile(petals + f'<circle cx="30" cy="32" r="5" fill="{GOLD}"/>' + marks, f"flower {rank}")
    if code in LETTERS:
        return _tile(_path(LETTERS[code], INK, 5), {"E": "east", "S": "south", "W": "west", "N": "north"}[code])
    if code == "C":
        return _tile(_path([[(14, 27), (14, 51), (46, 51), (46, 27), (14, 27)], [(30, 10), (30, 72)]], RED, 5),
                     "red dragon")
    if code == "F":
        return _tile(_path(FA, GREEN, 4.5), "green dragon")
    if code == "P":
        return _tile(f'<rect x="12" y="12" width="36" height="56" rx="3" fill="none" stroke="{BLUE}" '
                     f'stroke-width="3"/><rect x="17" y="17" width="26" height="46" rx="2" fill="none" '
                     f'stroke="{BLUE}" stroke-width="1.5"/>', "white dragon")
    raise ValueError(f"no tile {code!r}")


def codes() -> list[str]:
    return ([f"{r}{s}" for s in "mps" for r in range(1, 10)] + list("ESWNCFP") + [f"{r}f" for r in range(1, 9)]
            + ["back"])


def main(out: Path = OUT) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for code in codes():
        (out / f"{code}.svg").write_text(face(code), encoding="utf-8")
    print(f"written: {len(codes())} tiles in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
