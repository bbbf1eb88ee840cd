"""The reader driver: commands, the TAG stream, and keeping the link to the board alive.

It runs on the table's loop and never blocks: a poll timer reads whatever the
port holds (``timeout=0``), feeds the frame decoder and dispatches.  One
command is in flight at a time; a command unanswered within
``command_timeout_s`` is sent again with the same SEQ, up to ``retries``
times, then the link is down.  The link is also down when no HEARTBEAT came
for ``heartbeat_timeout_s`` or the port raised; then the port is closed and
reopened with capped backoff (E80 is raised once per outage), and a link that
comes back resumes streaming where it was.  Lost events (a gap in the board's
event counter, an ERROR 0x11 overflow, fewer TAGs received than the board
says it sent) are reported to ``on_events_lost``: a wall being read then has
positions it must leave unknown.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Callable

from firmware.config import ReaderSection
from firmware.faults import Fault, FaultCode, FaultReporter
from firmware.listeners import Listeners
from firmware.loop import Handle, Loop
from firmware.reader.codec import REPLY, BoardError, Cmd, DecoderCounters, Frame, FrameDecoder, Status, encode
from firmware.reader.link import LinkState, ReaderCounters, Reply
from firmware.reader.messages import (ErrorReport, Heartbeat, InventoryPart, PayloadError, PingInfo, TagEvent,
                                      is_tile_uid)
from firmware.ports.hardware import PortError, SerialPort

log = logging.getLogger(__name__)

POLL_S = 0.005
IDLE_POLL_S = 0.05      # the poll interval on a quiet line
IDLE_AFTER = 20         # empty polls before the line counts as quiet
READ_CHUNK = 4096
# the unsolicited commands as plain ints (an enum member is looked up on its class at every use: a frame a second)
_TAG, _HEARTBEAT, _ERROR = int(Cmd.TAG), int(Cmd.HEARTBEAT), int(Cmd.ERROR)


@dataclass
class _Command:
    cmd: Cmd
    payload: bytes
    done: Callable[[Reply], None]
    seq: int = 0
    attempts: int = 0
    frames: list[Frame] = field(default_factory=list)
    timer: Handle | None = None


class ReaderDriver:
    def __init__(self, loop: Loop, open_port: Callable[[], SerialPort], cfg: ReaderSection, faults: FaultReporter,
                 poll_s: float = POLL_S, reconnect_first_s: float = 0.5, reconnect_max_s: float = 8.0) -> None:
        self.loop = loop
        self.cfg = cfg
        self.faults = faults
        self.bus = faults.bus
        self._open_port = open_port
        self.poll_s = poll_s
        self.reconnect_first_s = reconnect_first_s
        self.reconnect_max_s = reconnect_max_s
        self.state = LinkState.CLOSED
        self.board: PingInfo | None = None
        self.on_tag: Listeners[Callable[[TagEvent], None]] = Listeners()
        self.on_events_lost: Listeners[Callable[[int | None, str], None]] = Listeners()   # (count or None, why)
        self.on_link: Listeners[Callable[[LinkState], None]] = Listeners()
        self._port: SerialPort | None = None
        self._decoder = FrameDecoder()
        self._counters = ReaderCounters()
        self._seq = 0
        self._current: _Command | None = None
        self._queue: deque[_Command] = deque()
        self._poll_timer: Handle | None = None
        self._idle_polls = 0
        self._woken = False               # the port tells when bytes arrive: no polling
        self._heartbeat_timer: Handle | None = None
        self._last_beat_s = 0.0
        self._reopen_timer: Handle | None = None
        self._backoff_s = reconnect_first_s
        self._last_counter: int | None = None
        self._stream_mask = 0
        self.faulty_antennas: set[int] = set()
        self._stream_acked = False          # the board confirmed our STREAM_START (its TAG count is ours)
        self._tags_since_start = 0
        self._lost_reported_since_start = 0
        self._outage_reported = False
        self._ever_up = False

    # -- life cycle ----------------------------------------------------------
    def start(self) -> None:
        if self.state is LinkState.CLOSED:
            self._open()

    def stop(self) -> None:
        for timer in (self._poll_timer, self._heartbeat_timer, self._reopen_timer):
            if timer is not None:
                timer.cancel()
        self._fail_commands("driver stopped")
        self._close_port()
        self._set_state(LinkState.CLOSED)

    @property
    def counters(self) -> ReaderCounters:
        c = self._counters
        d = self._decoder.counters
        c.frames_ok, c.crc_errors, c.resyncs, c.noise_bytes = d.frames_ok, d.crc_errors, d.resyncs, d.noise_bytes
        return c

    def reset_counters(self) -> None:
        """Start the line counters from zero (a technician's fresh look after a repair)."""
        self._counters = ReaderCounters()
        self._decoder.counters = DecoderCounters()

    def counters_dict(self) -> dict[str, int]:
        return asdict(self.counters)

    # -- commands ------------------------------------------------------------
    def ping(self, done: Callable[[Reply], None]) -> None:
        self.command(Cmd.PING, b"", done)

    def antenna_status(self, done: Callable[[Reply], None]) -> None:
        self.command(Cmd.ANTENNA_STATUS, b"", done)

    def inventory(self, antenna: int, done: Callable[[Reply], None]) -> None:
        self.command(Cmd.INVENTORY, bytes((antenna,)), done)

    def reset_rf(self, done: Callable[[Reply], None]) -> None:
        self.command(Cmd.RESET_RF, b"", done)

    def stream_start(self, antenna_mask: int, done: Callable[[Reply], None] | None = None) -> None:
        """Stream TAGs from the antennas in the mask; kept across reconnects until :meth:`stream_stop`."""
        self._stream_mask = antenna_mask
        self._send_stream_start(done or self._stream_started)

    def _send_stream_start(self, done: Callable[[Reply], None]) -> None:
        self._tags_since_start = 0          # the board restarts its count too
        self._lost_reported_since_start = 0
        self._stream_acked = False

        def started(reply: Reply) -> None:
            self._stream_acked = reply.status in (Status.OK, Status.ANTENNA_ERROR)
            done(reply)
        self.command(Cmd.STREAM_START, bytes((self._stream_mask,)), started)

    def stream_stop(self, done: Callable[[Reply], None] | None = None) -> None:
        self._stream_mask = 0
        self._stream_acked = False
        self.command(Cmd.STREAM_STOP, b"", lambda reply: self._stream_stopped(reply, done))

    def command(self, cmd: Cmd, payload: bytes, done: Callable[[Reply], None]) -> None:
        """Send ``cmd``; ``done(reply)`` is called on the loop with the answer or the failure."""
        if self.state is not LinkState.UP and not (self.state is LinkState.CONNECTING and cmd is Cmd.PING):
            self._counters.commands_failed += 1
            self.loop.post(done, Reply(False, error=f"reader link {self.state.value}"))
            return
        self._queue.append(_Command(cmd, payload, done))
        if self._current is None:
            self._send_next()

    def _send_next(self) -> None:
        if self._current is not None or not self._queue:
            return
        command = self._current = self._queue.popleft()
        command.seq = self._seq
        self._seq = (self._seq + 1) & 0xFF
        self._send(command)

    def _send(self, command: _Command) -> None:
        command.attempts += 1
        command.frames = []
        if not self._write(encode(command.seq, command.cmd, command.payload)):
            return
        command.timer = self.loop.call_later(self.cfg.command_timeout_s, self._timed_out, command)

    def _timed_out(self, command: _Command) -> None:
        if command is not self._current:
            return
        if command.attempts <= self.cfg.retries:
            self._counters.retries += 1
            log.debug("reader: no reply to %s seq=%d, retry %d", command.cmd.name, command.seq, command.attempts)
            self._send(command)
            return
        self._link_down(f"no reply to {command.cmd.name} after {command.attempts} tries")

    def _finish(self, reply: Reply) -> None:
        command = self._current
        if command is None:
            return
        if command.timer is not None:
            command.timer.cancel()
        self._current = None
        if not reply.ok:
            self._counters.commands_failed += 1
        command.done(reply)
        self._send_next()

    def _fail_commands(self, why: str) -> None:
        pending = ([self._current] if self._current else []) + list(self._queue)
        self._current = None
        self._queue.clear()
        for command in pending:
            if command.timer is not None:
                command.timer.cancel()
            self._counters.commands_failed += 1
            self.loop.post(command.done, Reply(False, error=why))

    # -- port ----------------------------------------------------------------
    def _open(self) -> None:
        self._reopen_timer = None
        try:
            self._port = self._open_port()
        except PortError as exc:
            self._link_down(str(exc))
            return
        self._decoder.reset()
        self._set_state(LinkState.CONNECTING)
        port = self._port
        tell = getattr(port, "on_readable", None)
        self._woken = bool(tell and tell(lambda: self.loop.post(self._readable, port)))
        if not self._woken:
            self._poll_timer = self.loop.call_later(self.poll_s, self._poll)
        self.command(Cmd.PING, b"", self._connected)

    def _connected(self, reply: Reply) -> None:
        if not reply.ok:
            return      # the failure already took the link down
        try:
            self.board = PingInfo.unpack(reply.payload)
        except PayloadError as exc:
            self._link_down(f"bad PING reply: {exc}")
            return
        if self._ever_up:
            self._counters.reconnects += 1
        self._ever_up = True
        self._backoff_s = self.reconnect_first_s
        self._outage_reported = False
        self._set_state(LinkState.UP)
        self._arm_heartbeat()
        log.info("reader up: protocol %d, firmware %d.%d, %d antennas, serial %08X", self.board.protocol,
                 *self.board.firmware, self.board.antennas, self.board.serial)
        if self._stream_mask:
            self._send_stream_start(self._stream_started)

    def _write(self, data: bytes) -> bool:
        if self._port is None:
            return False
        try:
            self._port.write(data)
        except PortError as exc:
            self._link_down(str(exc))
            return False
        self._poll_soon()                 # a reply is coming: back to the fast poll
        return True

    def _readable(self, port: SerialPort) -> None:
        """A port that tells when bytes arrive told so (no polling): read them now."""
        if port is self._port:
            self._poll()

    def _poll_soon(self) -> None:
        self._idle_polls = 0
        if self._woken:
            return
        if self._port is not None and (self._poll_timer is None or self._poll_timer.when > self.loop.now()
                                       + self.poll_s):
            if self._poll_timer is not None:
                self._poll_timer.cancel()
            self._poll_timer = self.loop.call_later(self.poll_s, self._poll)

    def _poll(self) -> None:
        self._poll_timer = None
        port = self._port
        if port is None:
            return
        try:
            waiting = port.in_waiting
            data = port.read(waiting if waiting < READ_CHUNK else READ_CHUNK) if waiting else b""   # (a frame each)
        except PortError as exc:
            self._link_down(str(exc))
            return
        if data:
            self._idle_polls = 0
            for frame in self._decoder.feed(data):
                self._dispatch(frame)
        else:
            self._idle_polls += 1
        if self._port is not None and self._poll_timer is None and not self._woken:
            # A quiet line is polled less often (up to IDLE_POLL_S); any byte brings the fast poll back.
            # TAG times come from the board's clock, so a slower poll never shifts the wall map.
            interval = self.poll_s if self._idle_polls < IDLE_AFTER else max(self.poll_s, IDLE_POLL_S)
            self._poll_timer = self.loop.call_later(interval, self._poll)

    def _close_port(self) -> None:
        if self._poll_timer is not None:
            self._poll_timer.cancel()
            self._poll_timer = None
        if self._port is not None:
            self._port.close()
            self._port = None

    def _link_down(self, reason: str) -> None:
        if self.state is LinkState.DOWN:
            log.debug("reader still down: %s", reason)
        else:
            log.warning("reader link down: %s", reason)
        if self._heartbeat_timer is not None:
            self._heartbeat_timer.cancel()
            self._heartbeat_timer = None
        self._close_port()
        if not self._stream_acked:
            # the board was not streaming: no TAG can be lost in the outage, and the event counter's jump over it
            # (heartbeats) is not a loss of this wall's tags
            self._last_counter = None
        self._fail_commands(f"reader link down: {reason}")
        if self.state is not LinkState.DOWN:
            self._counters.link_losses += 1
        if not self._outage_reported:
            self._outage_reported = True
            self.faults.report(Fault(FaultCode.E80, self.loop.now(), "reader", {"reason": reason}))
        self._set_state(LinkState.DOWN)
        if self._reopen_timer is None:
            self._reopen_timer = self.loop.call_later(self._backoff_s, self._open)
            self._backoff_s = min(self._backoff_s * 2, self.reconnect_max_s)

    def _set_state(self, state: LinkState) -> None:
        if state is self.state:
            return
        self.state = state
        self.bus.publish("reader.link", state=state.value)
        self.on_link.notify(state)

    def _arm_heartbeat(self) -> None:
        """The link is alive until ``heartbeat_timeout_s`` after the last heartbeat: one watchdog timer
        that moves itself on when it fires early (not a new timer for every beat)."""
        self._last_beat_s = self.loop.now()
        if self._heartbeat_timer is None:
            self._heartbeat_timer = self.loop.call_later(self.cfg.heartbeat_timeout_s, self._heartbeat_lost)

    def _heartbeat_lost(self) -> None:
        self._heartbeat_timer = None
        due = self._last_beat_s + self.cfg.heartbeat_timeout_s
        if due > self.loop.now():
            self._heartbeat_timer = self.loop.call_at(due, self._heartbeat_lost)
            return
        self._link_down(f"no heartbeat for {self.cfg.heartbeat_timeout_s:g} s")

    # -- incoming ------------------------------------------------------------
    def _dispatch(self, frame: Frame) -> None:
        cmd = frame.cmd
        if cmd & REPLY:
            self._reply(frame)
            return
        if cmd != _TAG and cmd != _HEARTBEAT and cmd != _ERROR:
            self._drop("unknown_messages", frame)
            return
        self._check_counter(frame.seq)
        try:
            if cmd == _TAG:
                self._tag(TagEvent.unpack(frame.payload, frame.seq, self.loop.now()))
            elif cmd == _HEARTBEAT:
                self._heartbeat(Heartbeat.unpack(frame.payload, frame.seq))
            else:
                self._board_error(ErrorReport.unpack(frame.payload, frame.seq))
        except PayloadError as exc:
            log.debug("reader: %s: %s", frame, exc)
            self._drop("bad_payloads", frame)

    def _drop(self, counter: str, frame: Frame) -> None:
        setattr(self._counters, counter, getattr(self._counters, counter) + 1)
        self._counters.drops += 1
        log.debug("reader: dropped %s (%s)", frame, counter)

    def _reply(self, frame: Frame) -> None:
        command = self._current
        if command is None or frame.seq != command.seq or frame.cmd != (command.cmd | REPLY) or not frame.payload:
            self._drop("unexpected_replies", frame)
            return
        status = frame.payload[0]
        if command.cmd is Cmd.INVENTORY:
            try:
                InventoryPart.unpack(frame.payload)
            except PayloadError:
                self._drop("bad_payloads", frame)
                return
            command.frames.append(frame)
            if status == Status.MORE:
                if command.timer is not None:
                    command.timer.cancel()
                command.timer = self.loop.call_later(self.cfg.command_timeout_s, self._timed_out, command)
                return
            self._finish(Reply(status in (Status.OK, Status.TIMEOUT), status, command.frames))
            return
        command.frames.append(frame)
        ok = status == Status.OK
        self._finish(Reply(ok, status, command.frames, "" if ok else _status_text(status)))

    def _check_counter(self, counter: int) -> None:
        last = self._last_counter
        self._last_counter = counter
        if last is None:
            return
        expected = (last + 1) & 0xFF
        if counter != expected:
            lost = (counter - expected) & 0xFF
            self._counters.event_gaps += 1
            self._counters.events_lost += lost
            self._events_lost(lost, f"event counter jumped from {last} to {counter}")

    def _events_lost(self, count: int | None, why: str) -> None:
        log.warning("reader: events lost (%s): %s", "?" if count is None else count, why)
        self.bus.publish("reader.events_lost", count=count, why=why)
        self.on_events_lost.notify(count, why)

    def _tag(self, tag: TagEvent) -> None:
        if not is_tile_uid(tag.uid):
            self._counters.not_tiles += 1
            self._counters.drops += 1
            log.debug("reader: UID %s is not a tile tag", tag.uid.hex())
            return
        self._counters.tags += 1
        self._tags_since_start += 1
        self.on_tag.notify(tag)

    def _heartbeat(self, beat: Heartbeat) -> None:
        self._counters.heartbeats += 1
        if self.state is LinkState.UP:
            self._arm_heartbeat()
        if self._stream_mask and self._stream_acked:
            self._check_tags_sent(beat.tags_sent)

    def _check_tags_sent(self, tags_sent: int) -> None:
        """The board says how many TAGs it sent since STREAM_START; more than we got were lost."""
        missing = (tags_sent - self._tags_since_start) & 0xFFFF
        if 0 < missing < 0x8000 and missing > self._lost_reported_since_start:
            new = missing - self._lost_reported_since_start
            self._lost_reported_since_start = missing
            self._events_lost(new, f"board sent {tags_sent} TAGs since stream start, {self._tags_since_start} came")

    def _board_error(self, report: ErrorReport) -> None:
        self._counters.board_errors += 1
        if report.code == BoardError.OVERFLOW:
            self._counters.overflows += 1
            self._events_lost(None, "board event buffer overflow")
        elif report.code == BoardError.ANTENNA_FAULT:
            self._antenna_fault(report.detail)
        else:
            log.info("reader board error 0x%02X detail 0x%02X", report.code, report.detail)

    def _antenna_fault(self, antenna: int) -> None:
        if antenna in self.faulty_antennas:
            return
        self.faulty_antennas.add(antenna)
        self._counters.antenna_faults += 1
        where = f"head of side {antenna}" if antenna < 4 else f"seat pad of side {antenna - 4}"
        self.faults.report(Fault(FaultCode.E81, self.loop.now(), "reader",
                                              {"antenna": antenna, "where": where}))

    def _stream_started(self, reply: Reply) -> None:
        if reply.status == Status.ANTENNA_ERROR:
            self.antenna_status(self._antennas_checked)
        elif not reply.ok:
            log.warning("reader: stream start failed: %s", reply.error)

    def _antennas_checked(self, reply: Reply) -> None:
        if not reply.ok or len(reply.payload) < 2:
            return
        healthy = reply.payload[1]
        for antenna in range(8):
            if not healthy >> antenna & 1:
                self._antenna_fault(antenna)
            else:
                self.faulty_antennas.discard(antenna)

    def _stream_stopped(self, reply: Reply, done: Callable[[Reply], None] | None) -> None:
        if reply.ok and len(reply.payload) >= 3:
            self._check_tags_sent(int.from_bytes(reply.payload[1:3], "big"))
        if done is not None:
            done(reply)


def _status_text(status: int) -> str:
    try:
        return f"board status {Status(status).name}"
    except ValueError:
        return f"board status 0x{status:02X}"
