"""The simulated tile reader board: the other end of the reader protocol, byte for byte.

It behaves as the real board does: answers every host command (a retried
command with the same SEQ gets the same reply without acting twice),
streams one TAG per tile passing an enabled antenna, sends a HEARTBEAT every
second, numbers its unsolicited frames with an event counter, and reports
bad host frames, antenna faults and event-buffer overflows with ERROR
frames.  Its UART is slow (the line's baud): unsolicited frames queue, and
past ``queue_frames`` the board drops events and says so (ERROR 0x11).
Tiles reach the antennas from the world (a head's feed, a seat pad).
"""

from __future__ import annotations

import logging
import struct
from collections import Counter, deque
from typing import Callable

from firmware.loop import Loop
from firmware.reader.codec import REPLY, BoardError, Cmd, FrameDecoder, Status, encode
from firmware.reader.messages import ANTENNAS, REQUEST_LENGTH, ErrorReport, PingInfo, inventory_parts
from sim.reader_line import ReaderLine

log = logging.getLogger(__name__)

HEARTBEAT_S = 1.0
REPLY_DELAY_S = 0.002          # the board's processing time before it answers
FIRMWARE = (1, 4)
RSSI = 180
_HEARTBEAT = struct.Struct(">IH")       # a HEARTBEAT's payload (firmware.reader.messages.Heartbeat)
_TAG = struct.Struct(">B8sBI")          # a TAG's payload (firmware.reader.messages.TagEvent)


class ReaderBoard:
    def __init__(self, loop: Loop, line: ReaderLine, serial: int = 0x4D4A0001, queue_frames: int = 64,
                 field: Callable[[int], list[bytes]] | None = None) -> None:
        self.loop = loop
        self.line = line
        self.serial = serial
        self.queue_frames = queue_frames
        self.field = field or (lambda antenna: [])     # tiles in an antenna's field now (for INVENTORY)
        self.boot_s = loop.now()
        self.counter = 0                # event counter: SEQ of the next unsolicited frame
        self.stream_mask = 0
        self.tags_sent = 0
        self.faulty: set[int] = set()   # antennas with a fault (cable, short, no field)
        self.overflowed = 0             # events dropped since the last ERROR 0x11
        self.commands_seen = 0
        self.commands_executed = 0      # retries answered from the last reply do not count
        self.passed_unstreamed: Counter[int] = Counter()    # tiles past an antenna not streamed, by antenna
        self.hung = False
        self.reboots = 0
        self._rx = FrameDecoder()
        self._last_reply: tuple[int, int, list[bytes]] | None = None   # (seq, cmd, frames)
        self._pending: deque[float] = deque()                          # finish times of queued frames
        line.receiver = self.receive
        self._heartbeat()

    def uptime_ms(self) -> int:
        return round((self.loop.now() - self.boot_s) * 1000)        # (an int: round of a float without digits)

    # -- host -> board -------------------------------------------------------
    def receive(self, data: bytes) -> None:
        if self.hung:
            return
        crc_before = self._rx.counters.crc_errors
        frames = self._rx.feed(data)
        if self._rx.counters.crc_errors > crc_before:
            self._unsolicited(Cmd.ERROR, ErrorReport(BoardError.BAD_CRC, 0).pack())
        for frame in frames:
            self.commands_seen += 1
            last = self._last_reply
            if last is not None and last[0] == frame.seq and last[1] == frame.cmd:
                self.loop.call_later(REPLY_DELAY_S, self._send_all, last[2])   # a retry: same answer, no action
                continue
            self.commands_executed += 1
            replies = self._execute(frame.seq, frame.cmd, frame.payload)
            if replies is None:
                continue
            self._last_reply = (frame.seq, frame.cmd, replies)
            self.loop.call_later(REPLY_DELAY_S, self._send_all, replies)

    def _execute(self, seq: int, cmd: int, payload: bytes) -> list[bytes] | None:
        def reply(*payloads: bytes) -> list[bytes]:
            return [encode(seq, cmd | REPLY, p) for p in payloads]

        try:
            command = Cmd(cmd)
        except ValueError:
            command = None
        if command not in REQUEST_LENGTH:
            self._unsolicited(Cmd.ERROR, ErrorReport(BoardError.UNKNOWN_COMMAND, cmd).pack())
            return reply(bytes((Status.BAD_REQUEST,)))
        if len(payload) != REQUEST_LENGTH[command]:
            self._unsolicited(Cmd.ERROR, ErrorReport(BoardError.BAD_PAYLOAD, cmd).pack())
            return reply(bytes((Status.BAD_REQUEST,)))
        if command is Cmd.PING:
            return reply(PingInfo(1, FIRMWARE, ANTENNAS, self.serial).pack())
        if command is Cmd.RESET_RF:
            return reply(bytes((Status.OK,)))
        if command is Cmd.STREAM_START:
            self.stream_mask = payload[0]
            self.tags_sent = 0
            bad = [a for a in self.faulty if self.stream_mask >> a & 1]
            for antenna in bad:
                self._unsolicited(Cmd.ERROR, ErrorReport(BoardError.ANTENNA_FAULT, antenna).pack())
            return reply(bytes((Status.ANTENNA_ERROR if bad else Status.OK,)))
        if command is Cmd.STREAM_STOP:
            self.stream_mask = 0
            return reply(bytes((Status.OK,)) + self.tags_sent.to_bytes(2, "big"))
        if command is Cmd.INVENTORY:
            antenna = payload[0]
            if antenna >= ANTENNAS:
                return reply(bytes((Status.BAD_REQUEST,)))
            if antenna in self.faulty:
                return reply(inventory_parts(antenna, [], Status.ANTENNA_ERROR)[0].pack())
            return reply(*(part.pack() for part in inventory_parts(antenna, list(self.field(antenna)))))
        if command is Cmd.ANTENNA_STATUS:
            healthy = sum(1 << a for a in range(ANTENNAS) if a not in self.faulty)
            return reply(bytes((Status.OK, healthy)))
        return None

    # -- board -> host -------------------------------------------------------
    def _send_all(self, frames: list[bytes]) -> None:
        for frame in frames:
            self._transmit(frame)

    def _transmit(self, frame: bytes) -> None:
        now = self.loop.now()
        while self._pending and self._pending[0] <= now:
            self._pending.popleft()
        self._pending.append(self.line.board_send(frame))

    def _unsolicited(self, cmd: Cmd, payload: bytes) -> bool:
        """Queue an event frame; False (and counted as overflow) when the board's buffer is full."""
        pending = self._pending
        now = self.loop.now()
        while pending and pending[0] <= now:
            pending.popleft()
        if len(pending) >= self.queue_frames and cmd is not Cmd.ERROR:
            self.overflowed += 1
            return False
        if self.overflowed and cmd is not Cmd.ERROR:
            self.overflowed = 0
            self._emit(Cmd.ERROR, ErrorReport(BoardError.OVERFLOW, 0).pack())
        self._emit(cmd, payload)
        return True

    def _emit(self, cmd: Cmd, payload: bytes) -> None:
        frame = encode(self.counter, cmd, payload)
        self.counter = (self.counter + 1) & 0xFF
        self._transmit(frame)

    def _heartbeat(self) -> None:
        if self.hung:
            return
        # (what Heartbeat(uptime, tags).pack() gives, without the message object: one a second, all day)
        self._unsolicited(Cmd.HEARTBEAT, _HEARTBEAT.pack(self.uptime_ms() & 0xFFFFFFFF, self.tags_sent & 0xFFFF))
        self.loop.call_later(HEARTBEAT_S, self._heartbeat)

    # -- faults ----------------------------------------------------------------
    def hang(self, duration_s: float) -> None:
        """The board's firmware hangs (no replies, no heartbeats), then its watchdog reboots it."""
        self.hung = True
        self.loop.call_later(duration_s, self._reboot)

    def _reboot(self) -> None:
        self.hung = False
        self.reboots += 1
        self.boot_s = self.loop.now()
        self.counter = 0
        self.stream_mask = 0
        self.tags_sent = 0
        self._last_reply = None
        self._rx = FrameDecoder()
        self._heartbeat()

    # -- the world -----------------------------------------------------------
    def tile_passed(self, antenna: int, uid: bytes) -> None:
        """A tile crossed ``antenna``'s field (a head's single file, or laid on a pad)."""
        if not self.stream_mask >> antenna & 1:
            self.passed_unstreamed[antenna] += 1     # (for a head: a tile counted that is never read)
            return
        if antenna in self.faulty:
            return
        # (what TagEvent(antenna, uid, RSSI, uptime).pack() gives, without the message object: a tile each)
        if self._unsolicited(Cmd.TAG, _TAG.pack(antenna, uid, RSSI, self.uptime_ms() & 0xFFFFFFFF)):
            self.tags_sent += 1

    def set_antenna_fault(self, antenna: int, faulty: bool) -> None:
        if faulty and antenna not in self.faulty:
            self.faulty.add(antenna)
            if self.stream_mask >> antenna & 1:
                self._unsolicited(Cmd.ERROR, ErrorReport(BoardError.ANTENNA_FAULT, antenna).pack())
        elif not faulty:
            self.faulty.discard(antenna)
