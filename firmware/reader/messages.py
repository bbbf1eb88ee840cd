"""Payloads of the reader protocol: what each message carries, both ways.

The driver parses replies and unsolicited messages with these; the
simulator's board builds them with the same functions, so a field added to
the protocol is added in one place.  A payload of the wrong length raises
:class:`PayloadError`, which the driver counts and drops.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from firmware.frozen import quick_init
from firmware.reader.codec import BoardError, Cmd, Status

UID_BYTES = 8
UID_FIRST_BYTE = 0xE0          # ISO 15693: a UID with another first byte is not a tile
MAX_UIDS_PER_FRAME = 28
ANTENNAS = 8                   # 0..3 stacking heads, 4..7 seat pads


class PayloadError(ValueError):
    """A payload whose length or content does not fit its message type."""


def is_tile_uid(uid: bytes) -> bool:
    return len(uid) == UID_BYTES and uid[0] == UID_FIRST_BYTE


@quick_init
@dataclass(frozen=True)
class TagEvent:
    """One tile passed an antenna: which antenna, its UID, signal strength, board time."""

    antenna: int
    uid: bytes
    rssi: int
    board_ms: int
    counter: int = 0           # the board's event counter (the frame's SEQ)
    received_s: float = 0.0    # host time the frame was decoded

    def pack(self) -> bytes:
        return struct.pack(">B8sBI", self.antenna, self.uid, self.rssi, self.board_ms & 0xFFFFFFFF)

    @classmethod
    def unpack(cls, payload: bytes, counter: int, received_s: float) -> "TagEvent":
        if len(payload) != 14:
            raise PayloadError(f"TAG payload of {len(payload)} bytes, expected 14")
        antenna, uid, rssi, board_ms = struct.unpack(">B8sBI", payload)
        if antenna >= ANTENNAS:
            raise PayloadError(f"TAG from antenna {antenna}; the board has {ANTENNAS}")
        return cls(antenna, uid, rssi, board_ms, counter, received_s)


@quick_init
@dataclass(frozen=True)
class Heartbeat:
    uptime_ms: int
    tags_sent: int             # TAG events sent since STREAM_START
    counter: int = 0

    def pack(self) -> bytes:
        return struct.pack(">IH", self.uptime_ms & 0xFFFFFFFF, self.tags_sent & 0xFFFF)

    @classmethod
    def unpack(cls, payload: bytes, counter: int) -> "Heartbeat":
        if len(payload) != 6:
            raise PayloadError(f"HEARTBEAT payload of {len(payload)} bytes, expected 6")
        uptime_ms, tags_sent = struct.unpack(">IH", payload)
        return cls(uptime_ms, tags_sent, counter)


@quick_init
@dataclass(frozen=True)
class ErrorReport:
    code: int                  # BoardError value (unknown codes are kept as numbers)
    detail: int
    counter: int = 0

    def pack(self) -> bytes:
        return bytes((self.code, self.detail))

    @classmethod
    def unpack(cls, payload: bytes, counter: int) -> "ErrorReport":
        if len(payload) != 2:
            raise PayloadError(f"ERROR payload of {len(payload)} bytes, expected 2")
        if payload[0] == BoardError.ANTENNA_FAULT and payload[1] >= ANTENNAS:
            # an antenna the board does not have: a garbled frame, never a fault of a real antenna
            raise PayloadError(f"ERROR antenna fault of antenna {payload[1]}; the board has {ANTENNAS}")
        return cls(payload[0], payload[1], counter)


@dataclass(frozen=True)
class PingInfo:
    protocol: int
    firmware: tuple[int, int]
    antennas: int
    serial: int

    def pack(self) -> bytes:
        return struct.pack(">BBBBBI", Status.OK, self.protocol, *self.firmware, self.antennas, self.serial)

    @classmethod
    def unpack(cls, payload: bytes) -> "PingInfo":
        if len(payload) != 9:
            raise PayloadError(f"PING reply of {len(payload)} bytes, expected 9")
        _, protocol, major, minor, antennas, serial = struct.unpack(">BBBBBI", payload)
        return cls(protocol, (major, minor), antennas, serial)


@dataclass(frozen=True)
class InventoryPart:
    """One frame of an INVENTORY result."""

    status: int
    antenna: int
    uids: tuple[bytes, ...]

    def pack(self) -> bytes:
        return bytes((self.status, self.antenna, len(self.uids))) + b"".join(self.uids)

    @classmethod
    def unpack(cls, payload: bytes) -> "InventoryPart":
        if len(payload) < 3:
            raise PayloadError(f"INVENTORY reply of {len(payload)} bytes, expected at least 3")
        status, antenna, count = payload[0], payload[1], payload[2]
        if count > MAX_UIDS_PER_FRAME or len(payload) != 3 + count * UID_BYTES:
            raise PayloadError(f"INVENTORY reply says {count} UIDs in {len(payload)} bytes")
        uids = tuple(payload[3 + i * UID_BYTES:3 + (i + 1) * UID_BYTES] for i in range(count))
        return cls(status, antenna, uids)


def inventory_parts(antenna: int, uids: list[bytes], final_status: int = Status.OK) -> list[InventoryPart]:
    """Split an inventory into frames of at most 28 UIDs, all but the last marked MORE."""
    chunks = [uids[i:i + MAX_UIDS_PER_FRAME] for i in range(0, len(uids), MAX_UIDS_PER_FRAME)] or [[]]
    return [InventoryPart(Status.MORE if i < len(chunks) - 1 else final_status, antenna, tuple(chunk))
            for i, chunk in enumerate(chunks)]


# Payload lengths the board accepts for each host command.
REQUEST_LENGTH = {Cmd.PING: 0, Cmd.RESET_RF: 0, Cmd.STREAM_START: 1, Cmd.STREAM_STOP: 0, Cmd.INVENTORY: 1,
                  Cmd.ANTENNA_STATUS: 0}
