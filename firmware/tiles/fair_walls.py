"""Committed walls: the walls' tile order, the dice's seed and a nonce, sealed by SHA-256 before the dice are thrown.

When a set's walls are read and verified, before anybody throws the dice,
the table seals them: it draws a fresh nonce and a seed for electronic dice
from its source of randomness (the operating system's CSPRNG on a table,
the seeded generator of a simulated one), writes the **preimage** below and
publishes its SHA-256, the **commitment**.  When the hand ends the preimage
is revealed; anyone can then hash it, compare with the commitment they saw
before the dice, and deal the revealed walls with the dice thrown to check
every starting hand and every draw.  The nonce keeps the commitment from
being guessed (by hashing candidate walls); the seed decides electronic
dice, so those are fixed by the commitment too.  Physical dice are thrown
by people after the commitment is out: they are not in it (nobody can know
them then), and the walls could not have been chosen to suit them.

The canonical encoding, version 1 (UTF-8, lines joined by ``\\n``, no final
newline; ``SP`` is one space)::

    mjtable-walls/1
    set SP <set id>
    stacks SP <stacks per side>
    side SP 0 SP <tiles>
    side SP 1 SP <tiles>
    side SP 2 SP <tiles>
    side SP 3 SP <tiles>
    dice SP <physical|electronic> SP <seed: 64 lower-case hex digits>
    nonce SP <64 lower-case hex digits>

``<tiles>`` is the side's wall in stacking order, stack 1 (the owner's
right-hand end) first, each stack bottom tile then top tile (the 108 set's
last stack has only its bottom tile), tile codes separated by commas: ``1m``..
``9m``, ``1p``..``9p``, ``1s``..``9s``, ``E S W N C F P``, ``1f``..``8f``, and
``?`` for a place whose tile was not read.  ``dice`` says how the table was set to
throw (the players' dice in the dome, or electronic); the seed decides the
faces whenever electronic dice are thrown (also when a dome that does not
spin falls back on them).  The commitment is the SHA-256 of those bytes, in
lower-case hex.

Electronic dice from the seed: the byte stream is SHA-256(seed || ``dice`` ||
counter as 4 bytes big-endian) for counter 0, 1, 2...; each byte below 252
gives one face, ``byte % 6 + 1``, in order (bytes 252..255 are skipped, so
every face is equally likely); a throw of two dice takes two faces, MCR's
two throws four.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from firmware.tiles.tile import TileError, code, parse

MAGIC = "mjtable-walls/1"
SIDES = 4
SEED_BYTES = NONCE_BYTES = 32
DICE_MODES = ("physical", "electronic")
MAX_PREIMAGE = 4096         # characters: a 144-tile preimage is about 700


class SealError(ValueError):
    """A preimage that is not in the canonical encoding; the message says where."""


@dataclass(frozen=True)
class SealedWalls:
    """What the preimage holds: the walls (sides of stacks, stack 1 first, each [bottom, top] or [bottom]; a kind,
    or None where not read), how the dice were to be thrown, their seed and the nonce."""

    set_id: str
    sides: tuple[tuple[tuple[int | None, ...], ...], ...]
    dice_mode: str
    seed: bytes
    nonce: bytes

    def preimage(self) -> str:
        """The canonical encoding (the module's docstring)."""
        if self.dice_mode not in DICE_MODES:
            raise SealError(f"dice mode {self.dice_mode!r}: physical or electronic")
        if len(self.seed) != SEED_BYTES or len(self.nonce) != NONCE_BYTES:
            raise SealError("the seed and the nonce are 32 bytes each")
        if len(self.sides) != SIDES or not self.set_id or any(c in self.set_id for c in " \n"):
            raise SealError("four sides and a set id without spaces")
        stacks = len(self.sides[0])
        lines = [MAGIC, f"set {self.set_id}", f"stacks {stacks}"]
        for side, side_stacks in enumerate(self.sides):
            if len(side_stacks) != stacks:
                raise SealError(f"side {side} has {len(side_stacks)} stacks, side 0 {stacks}")
            tiles = [("?" if kind is None else code(kind)) for stack in side_stacks for kind in stack]
            lines.append(f"side {side} {','.join(tiles)}")
        lines.append(f"dice {self.dice_mode} {self.seed.hex()}")
        lines.append(f"nonce {self.nonce.hex()}")
        return "\n".join(lines)

    def commitment(self) -> str:
        return commitment_of(self.preimage())


def commitment_of(preimage: str) -> str:
    """The commitment to a preimage: SHA-256 of its UTF-8 bytes, lower-case hex."""
    return hashlib.sha256(preimage.encode("utf-8")).hexdigest()


def seal(set_id: str, sides: list, dice_mode: str, seed: bytes, nonce: bytes) -> SealedWalls:
    """Sealed walls from a wall as the bookkeeping keeps it (sides of stacks, [bottom, top])."""
    return SealedWalls(set_id, tuple(tuple(tuple(stack) for stack in side) for side in sides), dice_mode, seed, nonce)


def parse_preimage(text: str) -> SealedWalls:
    """The preimage read back, strictly (anything not in the canonical encoding is refused)."""
    if not isinstance(text, str) or len(text) > MAX_PREIMAGE:
        raise SealError(f"a preimage is text of at most {MAX_PREIMAGE} characters")
    lines = text.split("\n")
    if len(lines) != 9 or lines[0] != MAGIC:
        raise SealError(f"a preimage is nine lines, the first {MAGIC!r}")
    set_id = _field(lines[1], "set")
    try:
        stacks = int(_field(lines[2], "stacks"))
    except ValueError:
        raise SealError("line 3: 'stacks N'") from None
    if not 1 <= stacks <= 18:
        raise SealError(f"line 3: {stacks} stacks per side")
    sides = []
    for side in range(SIDES):
        tiles = _field(lines[3 + side], f"side {side}").split(",")
        if len(tiles) not in (2 * stacks, 2 * stacks - 1):
            raise SealError(f"side {side}: {len(tiles)} tiles for {stacks} stacks")
        kinds = [_kind(t, side) for t in tiles]
        sides.append(tuple(tuple(kinds[i:i + 2]) for i in range(0, len(kinds), 2)))
    mode, _, seed = _field(lines[7], "dice").partition(" ")
    if mode not in DICE_MODES:
        raise SealError(f"line 8: dice {mode!r}: physical or electronic")
    return SealedWalls(set_id, tuple(sides), mode, _hex(seed, "dice seed"), _hex(_field(lines[8], "nonce"), "nonce"))


def _field(line: str, name: str) -> str:
    if not line.startswith(name + " ") or len(line) == len(name) + 1:
        raise SealError(f"expected '{name} ...', got {line[:40]!r}")
    return line[len(name) + 1:]


def _kind(text: str, side: int) -> int | None:
    if text == "?":
        return None
    try:
        kinds = parse(text)
    except TileError as exc:
        raise SealError(f"side {side}: {exc}") from None
    if len(kinds) != 1 or code(kinds[0]) != text:
        raise SealError(f"side {side}: {text[:8]!r} is not one tile code")
    return kinds[0]


def _hex(text: str, what: str) -> bytes:
    if len(text) != 64 or text != text.lower():
        raise SealError(f"the {what} is 64 lower-case hex digits")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise SealError(f"the {what} is 64 lower-case hex digits") from None


def dice_faces(seed: bytes, throws: int) -> tuple[int, ...]:
    """The faces electronic dice show for ``seed``: two per throw (the module's docstring)."""
    faces: list[int] = []
    counter = 0
    while len(faces) < 2 * throws:
        for byte in hashlib.sha256(seed + b"dice" + counter.to_bytes(4, "big")).digest():
            if byte < 252 and len(faces) < 2 * throws:
                faces.append(byte % 6 + 1)
        counter += 1
    return tuple(faces)
