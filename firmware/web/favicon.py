"""``python -m firmware.web.favicon``: draw the page's icon (a 中 tile) as ``static/favicon.svg`` and ``favicon.ico``.

One geometry, two files: the SVG the pages link (``<link rel="icon">``) and
a 32 x 32 ICO (a 32-bit bitmap with its alpha) that ``/favicon.ico`` serves
to browsers that ask for it whatever the page says.  Both are drawn from the
same rectangles here, with no font and no image library; a test checks the
shipped files are what this script draws.
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
SIZE = 32
SUPERSAMPLE = 4           # subsamples per pixel side: the ICO's edges are smoothed by coverage


@dataclass(frozen=True)
class Box:
    """A filled rectangle with rounded corners (radius ``r``) on the 32 x 32 grid, in a colour ``#rrggbb``."""

    x0: float
    y0: float
    x1: float
    y1: float
    colour: str
    r: float = 0.0

    def covers(self, x: float, y: float) -> bool:
        if not (self.x0 <= x < self.x1 and self.y0 <= y < self.y1):
            return False
        if self.r <= 0:
            return True
        cx = min(max(x, self.x0 + self.r), self.x1 - self.r)
        cy = min(max(y, self.y0 + self.r), self.y1 - self.r)
        return (x - cx) ** 2 + (y - cy) ** 2 <= self.r ** 2


GREEN, IVORY, RED = "#1b8a3a", "#fbf8ef", "#c8102e"
SHAPES = (
    Box(3, 1, 30, 31, GREEN, 4),          # the tile's back, seen below its face
    Box(3, 1, 30, 26, IVORY, 4),          # the face
    Box(8, 8, 25, 11, RED), Box(8, 15, 25, 18, RED),      # 中: its box
    Box(8, 8, 11, 18, RED), Box(22, 8, 25, 18, RED),
    Box(15, 4, 18, 23, RED),              # and its stroke (on whole pixels: sharp at 32 x 32)
)


def svg() -> str:
    """The icon as SVG (the pages link it)."""
    rects = "".join(f'<rect x="{b.x0:g}" y="{b.y0:g}" width="{b.x1 - b.x0:g}" height="{b.y1 - b.y0:g}"'
                    + (f' rx="{b.r:g}"' if b.r else "") + f' fill="{b.colour}"/>' for b in SHAPES)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {SIZE} {SIZE}" width="{SIZE}" height="{SIZE}">'
            f"<title>mjtable</title>{rects}</svg>\n")


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def pixels() -> list[list[tuple[int, int, int, int]]]:
    """The icon's RGBA pixels, top row first: each the mean of its subsamples (the topmost shape at each)."""
    rows = []
    n = SUPERSAMPLE
    for py in range(SIZE):
        row = []
        for px in range(SIZE):
            total, hits = [0, 0, 0], 0
            for sy in range(n):
                for sx in range(n):
                    x, y = px + (sx + 0.5) / n, py + (sy + 0.5) / n
                    top = next((b for b in reversed(SHAPES) if b.covers(x, y)), None)
                    if top is not None:
                        hits += 1
                        for i, c in enumerate(_rgb(top.colour)):
                            total[i] += c
            if hits:
                row.append((round(total[0] / hits), round(total[1] / hits), round(total[2] / hits),
                            round(255 * hits / (n * n))))
            else:
                row.append((0, 0, 0, 0))
        rows.append(row)
    return rows


def ico() -> bytes:
    """The icon as a Windows ICO: one 32 x 32 image, a 32-bit BGRA bitmap (bottom row first) and its AND mask."""
    image = b"".join(bytes((b, g, r, a)) for row in reversed(pixels()) for r, g, b, a in row)
    mask = bytes(SIZE * ((SIZE + 31) // 32) * 4)                      # (the alpha decides; the mask is all drawn)
    header = struct.pack("<IiiHHIIiiII", 40, SIZE, 2 * SIZE, 1, 32, 0, len(image) + len(mask), 0, 0, 0, 0)
    data = header + image + mask
    return struct.pack("<HHH", 0, 1, 1) + struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(data), 22) + data


def main(out: Path = STATIC) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "favicon.svg").write_text(svg(), encoding="utf-8")
    (out / "favicon.ico").write_bytes(ico())
    print(f"written: {out / 'favicon.svg'}, {out / 'favicon.ico'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
