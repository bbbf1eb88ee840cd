"""Frames of the tile reader protocol (TRP v1): encode, CRC, and a resynchronising decoder.

A frame on the line is ``A5 LEN SEQ CMD PAYLOAD CRC_hi CRC_lo`` where LEN
counts SEQ, CMD and the payload (2..250) and the CRC is CRC-16/CCITT-FALSE
over LEN..PAYLOAD.  The line is noisy in real tables (motors next to the
cable), so the decoder accepts a frame only when SOF, LEN range and CRC all
hold; on any failure it drops one byte and looks for the next 0xA5.  Bytes
between frames are noise.  Nothing here raises on bad input: it is counted.

One loss the CRC cannot see: a frame whose last byte (CRC_lo) was 0xA5 and
was lost on the line still checks, with the next frame's SOF in its place.
Its content is right, but that SOF is then gone and so would be the next
frame.  So the last byte of an accepted frame that is 0xA5 stays a candidate
start: when what follows the frame is not a frame of its own (no SOF, or a
candidate that fails), the decoder tries a frame starting at that shared
byte before scanning on.  A clean stream never pays for it (the frame after
is found first, and a failed try is not counted as an error).
"""

from __future__ import annotations

import binascii
import enum
from dataclasses import dataclass

from firmware.frozen import quick_init

SOF = 0xA5
MIN_LEN, MAX_LEN = 2, 250
MAX_PAYLOAD = MAX_LEN - 2
REPLY = 0x80


class Cmd(enum.IntEnum):
    PING = 0x01
    RESET_RF = 0x02
    STREAM_START = 0x10
    STREAM_STOP = 0x11
    INVENTORY = 0x12
    ANTENNA_STATUS = 0x13
    TAG = 0x40
    HEARTBEAT = 0x41
    ERROR = 0x7F


HOST_COMMANDS = frozenset({Cmd.PING, Cmd.RESET_RF, Cmd.STREAM_START, Cmd.STREAM_STOP, Cmd.INVENTORY,
                           Cmd.ANTENNA_STATUS})
UNSOLICITED = frozenset({Cmd.TAG, Cmd.HEARTBEAT, Cmd.ERROR})


class Status(enum.IntEnum):
    OK = 0x00
    BUSY = 0x01
    TIMEOUT = 0x02
    MORE = 0x03
    ANTENNA_ERROR = 0xF8
    BAD_REQUEST = 0xFE


class BoardError(enum.IntEnum):
    BAD_CRC = 0x01
    UNKNOWN_COMMAND = 0x02
    BAD_PAYLOAD = 0x03
    ANTENNA_FAULT = 0x10
    OVERFLOW = 0x11
    RF_FIELD = 0x12


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR."""
    return binascii.crc_hqx(data, 0xFFFF)


@quick_init
@dataclass(frozen=True)
class Frame:
    seq: int
    cmd: int
    payload: bytes = b""

    def encode(self) -> bytes:
        return encode(self.seq, self.cmd, self.payload)

    def __str__(self) -> str:
        try:
            name = Cmd(self.cmd & 0x7F).name + (" reply" if self.cmd & REPLY else "")
        except ValueError:
            name = f"0x{self.cmd:02X}"
        return f"{name} seq={self.seq} payload={self.payload.hex(' ')}"


def encode(seq: int, cmd: int, payload: bytes = b"") -> bytes:
    """The bytes of one frame."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes; the protocol allows {MAX_PAYLOAD}")
    body = bytes((len(payload) + 2, seq & 0xFF, cmd & 0xFF)) + payload
    crc = crc16(body)
    return bytes((SOF,)) + body + bytes((crc >> 8, crc & 0xFF))


@dataclass
class DecoderCounters:
    frames_ok: int = 0
    crc_errors: int = 0
    bad_length: int = 0
    resyncs: int = 0          # times the decoder dropped a byte of a broken frame and searched again
    noise_bytes: int = 0      # bytes outside any frame
    shared_starts: int = 0    # frames whose SOF was the last byte of the frame before (which lost its own)


_FRAME, _NEED, _BAD_LENGTH, _BAD_CRC = range(4)


def _try_frame(buf: bytearray, i: int) -> tuple[int, int]:
    """What starts at ``buf[i]`` (a SOF): (_FRAME, end), (_NEED, 0) for more bytes, or a failure."""
    n = len(buf)
    if n - i < 2:
        return _NEED, 0
    length = buf[i + 1]
    if length < MIN_LEN or length > MAX_LEN:
        return _BAD_LENGTH, 0
    end = i + length + 4
    if end > n:
        return _NEED, 0
    if binascii.crc_hqx(buf[i + 1:end - 2], 0xFFFF) != (buf[end - 2] << 8 | buf[end - 1]):
        return _BAD_CRC, 0
    return _FRAME, end


class FrameDecoder:
    """Feed it whatever the port returned; it hands back the whole, intact frames."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._shared = False      # buf[0] is the last byte (0xA5) of an accepted frame: maybe the next one's SOF
        self.counters = DecoderCounters()

    @property
    def pending_bytes(self) -> int:
        """Bytes kept for a frame not yet complete (a kept shared start byte belongs to a decoded frame)."""
        return len(self._buf) - self._shared

    def reset(self) -> None:
        """Forget a partial frame (after the port was reopened)."""
        self.counters.noise_bytes += self.pending_bytes
        self._buf.clear()
        self._shared = False

    def feed(self, data: bytes) -> list[Frame]:
        n = len(data)
        if not self._buf and not self._shared and n >= MIN_LEN + 4 and data[0] == SOF and data[1] + 4 == n \
                and data[1] <= MAX_LEN and data[n - 1] != SOF \
                and binascii.crc_hqx(data[1:n - 2], 0xFFFF) == (data[n - 2] << 8 | data[n - 1]):
            # the usual read: exactly one whole, intact frame and nothing kept from before (what the loop
            # below finds in it, without copying it into the buffer)
            self.counters.frames_ok += 1
            return [Frame(data[2], data[3], bytes(data[4:n - 2]))]
        buf = self._buf
        buf += data
        frames: list[Frame] = []
        c = self.counters
        # shared: the index of the last byte of the frame just accepted, when it is SOF, until what follows
        # that frame is known to be (or not to be) a frame of its own
        shared: int | None = 0 if self._shared else None
        i, n = (1 if self._shared else 0), len(buf)
        while i < n:
            if shared is not None:
                own = _try_frame(buf, i) if buf[i] == SOF else (_BAD_LENGTH, 0)
                if own[0] == _FRAME:                   # the usual case: the next frame follows
                    shared = None
                else:
                    status, end = _try_frame(buf, shared)
                    if status == _NEED:
                        break                          # wait for the bytes that decide
                    start, shared = shared, None
                    if status == _FRAME:               # the frame before lost its last byte: this is the next
                        c.shared_starts += 1
                        i = self._accept(buf, start, end, frames)
                        if buf[i - 1] == SOF:
                            shared = i - 1
                        continue
                    # not a frame either way: on as usual (a failed try at the shared byte is not an error)
            j = buf.find(SOF, i)
            if j < 0:
                c.noise_bytes += n - i
                i = n
                break
            c.noise_bytes += j - i
            i = j
            status, end = _try_frame(buf, i)
            if status == _NEED:
                break
            if status != _FRAME:
                if status == _BAD_LENGTH:
                    c.bad_length += 1
                else:
                    c.crc_errors += 1
                c.resyncs += 1
                i += 1
                continue
            i = self._accept(buf, i, end, frames)
            if buf[i - 1] == SOF:
                shared = i - 1
        start = i if shared is None else shared
        del buf[:start]
        self._shared = shared is not None
        return frames

    def _accept(self, buf: bytearray, i: int, end: int, frames: list[Frame]) -> int:
        frames.append(Frame(buf[i + 2], buf[i + 3], bytes(buf[i + 4:end - 2])))
        self.counters.frames_ok += 1
        return end
