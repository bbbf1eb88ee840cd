"""What the reader driver reports: the link's state, its line counters, and a command's reply."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from firmware.reader.codec import Frame


class LinkState(enum.Enum):
    CLOSED = "closed"           # not started, or stopped
    CONNECTING = "connecting"   # port open, waiting for the first PING reply
    UP = "up"
    DOWN = "down"               # waiting to reopen


@dataclass
class ReaderCounters:
    frames_ok: int = 0
    crc_errors: int = 0
    resyncs: int = 0
    noise_bytes: int = 0
    drops: int = 0              # intact frames dropped: unexpected SEQ, unknown type, bad payload, not a tile
    unexpected_replies: int = 0
    unknown_messages: int = 0
    bad_payloads: int = 0
    not_tiles: int = 0
    tags: int = 0
    heartbeats: int = 0
    retries: int = 0
    commands_failed: int = 0
    link_losses: int = 0
    reconnects: int = 0
    event_gaps: int = 0
    events_lost: int = 0
    overflows: int = 0
    antenna_faults: int = 0
    board_errors: int = 0


@dataclass
class Reply:
    """The outcome of one command: ``ok`` with the reply frames, or why it failed."""

    ok: bool
    status: int | None = None
    frames: list[Frame] = field(default_factory=list)
    error: str = ""

    @property
    def payload(self) -> bytes:
        return self.frames[-1].payload if self.frames else b""
