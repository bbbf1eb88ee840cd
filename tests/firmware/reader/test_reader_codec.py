"""Reader protocol codec: known frames, every message type, and resync under corruption."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware.reader.codec import REPLY, Cmd, Frame, FrameDecoder, Status, crc16, encode
from firmware.reader.messages import (ErrorReport, Heartbeat, InventoryPart, PayloadError, PingInfo, TagEvent,
                                      inventory_parts, is_tile_uid)

UID = bytes.fromhex("e004010203040506")


def test_ping_example_of_the_spec():
    assert encode(0x07, Cmd.PING) == bytes.fromhex("A5 02 07 01 2B 4A")
    assert crc16(bytes.fromhex("02 07 01")) == 0x2B4A


def test_crc_check_value():
    assert crc16(b"123456789") == 0x29B1


def test_payload_limits():
    assert len(encode(1, Cmd.TAG, bytes(248))) == 248 + 6
    with pytest.raises(ValueError):
        encode(1, Cmd.TAG, bytes(249))


@pytest.mark.parametrize("message, unpack", [
    (TagEvent(3, UID, 200, 123456), lambda p: TagEvent.unpack(p, 0, 0.0)),
    (Heartbeat(987654, 42), lambda p: Heartbeat.unpack(p, 0)),
    (ErrorReport(0x10, 2), lambda p: ErrorReport.unpack(p, 0)),
    (PingInfo(1, (1, 4), 8, 0x4D4A0001), PingInfo.unpack),
    (InventoryPart(Status.OK, 5, (UID, UID[::-1])), InventoryPart.unpack),
])
def test_every_message_round_trips_through_a_frame(message, unpack):
    frames = FrameDecoder().feed(encode(9, Cmd.TAG, message.pack()))
    assert len(frames) == 1 and unpack(frames[0].payload) == message


@pytest.mark.parametrize("unpack, payload", [
    (lambda p: TagEvent.unpack(p, 0, 0.0), bytes(13)),
    (lambda p: TagEvent.unpack(p, 0, 0.0), bytes([9]) + bytes(13)),      # antenna 9 does not exist
    (lambda p: Heartbeat.unpack(p, 0), bytes(5)),
    (lambda p: ErrorReport.unpack(p, 0), bytes(3)),
    (PingInfo.unpack, bytes(8)),
    (InventoryPart.unpack, bytes([0, 1, 2]) + bytes(8)),                  # says 2 UIDs, carries 1
])
def test_bad_payloads_raise_payload_error(unpack, payload):
    with pytest.raises(PayloadError):
        unpack(payload)


def test_inventory_splits_into_frames_of_28():
    parts = inventory_parts(0, [UID] * 60)
    assert [len(p.uids) for p in parts] == [28, 28, 4]
    assert [p.status for p in parts] == [Status.MORE, Status.MORE, Status.OK]
    assert inventory_parts(4, [])[0].uids == ()


def test_tile_uids_start_with_e0():
    assert is_tile_uid(UID) and not is_tile_uid(b"\x04" + UID[1:]) and not is_tile_uid(UID[:7])


def test_noise_between_frames_is_dropped_and_counted():
    d = FrameDecoder()
    frames = d.feed(b"\x00\x13\x37" + encode(1, Cmd.HEARTBEAT, bytes(6)) + b"\xff" + encode(2, Cmd.PING | REPLY))
    assert [f.seq for f in frames] == [1, 2]
    assert d.counters.noise_bytes == 4 and d.counters.frames_ok == 2


def test_frames_split_byte_by_byte():
    d = FrameDecoder()
    data = encode(5, Cmd.TAG, TagEvent(1, UID, 1, 2).pack()) * 3
    frames = [f for b in data for f in d.feed(bytes([b]))]
    assert len(frames) == 3 and d.pending_bytes == 0


def test_truncated_frame_then_a_good_one():
    d = FrameDecoder()
    good = encode(8, Cmd.HEARTBEAT, bytes(6))
    frames = d.feed(encode(7, Cmd.TAG, bytes(14))[:9] + good)
    assert frames == [Frame(8, Cmd.HEARTBEAT, bytes(6))]
    assert d.counters.crc_errors == 1 and d.counters.resyncs >= 1


def test_bad_length_resyncs():
    d = FrameDecoder()
    assert d.feed(b"\xa5\x01\xa5\xff" + encode(3, Cmd.PING)) == [Frame(3, Cmd.PING)]
    assert d.counters.bad_length == 2


def test_a_corrupted_byte_loses_only_its_frame():
    frames = [encode(i, Cmd.HEARTBEAT, Heartbeat(i * 1000, i).pack()) for i in range(5)]
    stream = bytearray(b"".join(frames))
    stream[len(frames[0]) + 4] ^= 0x40            # inside frame 1's payload
    got = FrameDecoder().feed(bytes(stream))
    assert [f.seq for f in got] == [0, 2, 3, 4]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_crash(data):
    d = FrameDecoder()
    for frame in d.feed(data):
        assert 0 <= frame.seq <= 255 and len(frame.payload) <= 248
    assert d.pending_bytes <= len(data)


_frames = st.lists(st.tuples(st.integers(0, 255), st.sampled_from(list(Cmd)), st.binary(max_size=40)),
                   min_size=1, max_size=12)


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_frames, st.integers(0, 2**32 - 1), st.floats(0, 0.05))
def test_corrupted_streams_yield_only_frames_that_were_sent_intact(sent, seed, p_corrupt):
    rng = random.Random(seed)
    encoded = [encode(seq, cmd, payload) for seq, cmd, payload in sent]
    stream, intact = bytearray(), []
    for (seq, cmd, payload), raw in zip(sent, encoded):
        noisy = bytes(b ^ rng.randrange(1, 256) if rng.random() < p_corrupt else b for b in raw)
        if rng.random() < 0.1:
            noisy = noisy[: rng.randrange(len(noisy))]          # truncated on the wire
        if rng.random() < 0.2:
            stream += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6)))   # line noise
        stream += noisy
        if noisy == raw:
            intact.append(Frame(seq, cmd, payload))
    stream += bytes(260)          # quiet line afterwards: every pending candidate resolves
    d = FrameDecoder()
    got = []
    cut = 0
    while cut < len(stream):
        step = rng.randrange(1, 64)
        got += d.feed(bytes(stream[cut:cut + step]))
        cut += step
    assert got == intact           # nothing invented, nothing intact lost, order kept


@settings(max_examples=100, deadline=None, derandomize=True)
@given(_frames, st.integers(0, 2**32 - 1))
def test_clean_streams_in_any_chunks_decode_completely(sent, seed):
    rng = random.Random(seed)
    stream = b"".join(encode(seq, cmd, payload) for seq, cmd, payload in sent)
    d = FrameDecoder()
    got, cut = [], 0
    while cut < len(stream):
        step = rng.randrange(1, 80)
        got += d.feed(stream[cut:cut + step])
        cut += step
    assert got == [Frame(seq, cmd, payload) for seq, cmd, payload in sent]
    assert d.counters.crc_errors == 0 and d.counters.noise_bytes == 0


def _frame_ending_in_sof(cmd: int = Cmd.TAG) -> tuple[Frame, bytes]:
    """A frame whose last byte (CRC_lo) is 0xA5, the start byte."""
    for n in range(10_000):
        frame = Frame(n % 256, cmd, n.to_bytes(4, "big"))
        raw = frame.encode()
        if raw[-1] == 0xA5:
            return frame, raw
    raise AssertionError("no such frame")


def test_a_lost_last_byte_that_was_the_start_byte_does_not_lose_the_next_frame():
    first, raw = _frame_ending_in_sof()
    second = Frame(9, Cmd.HEARTBEAT, Heartbeat(1000, 1).pack())
    d = FrameDecoder()
    got = d.feed(raw[:-1] + second.encode())
    # the first checks with the second's SOF in place of its lost 0xA5; the second still decodes from that SOF
    assert got == [first, second]
    assert d.counters.shared_starts == 1 and d.counters.crc_errors == 0 and d.pending_bytes == 0


def test_a_lost_last_start_byte_byte_by_byte_and_followed_by_noise():
    first, raw = _frame_ending_in_sof()
    second = Frame(9, Cmd.HEARTBEAT, Heartbeat(1000, 1).pack())
    d = FrameDecoder()
    stream = raw[:-1] + second.encode() + b"\x00\x13" + encode(10, Cmd.PING)
    got = [f for b in stream for f in d.feed(bytes([b]))]
    assert got == [first, second, Frame(10, Cmd.PING)]


def test_a_frame_ending_in_the_start_byte_then_a_clean_stream_costs_nothing():
    first, raw = _frame_ending_in_sof()
    d = FrameDecoder()
    assert d.feed(raw) == [first] and d.pending_bytes == 0     # returned at once, nothing waits for it
    assert d.feed(b"\x00" + encode(3, Cmd.PING)) == [Frame(3, Cmd.PING)]
    assert d.feed(raw + raw) == [first, first]
    c = d.counters
    assert (c.crc_errors, c.bad_length, c.resyncs, c.shared_starts, c.noise_bytes) == (0, 0, 0, 0, 1)


_sof_heavy_frames = st.lists(
    st.tuples(st.integers(0, 255), st.sampled_from(list(Cmd)),
              st.lists(st.sampled_from([0xA5, 0xA5, 0x00, 0x02, 0x7F, 0xFF]) | st.integers(0, 255),
                       max_size=30).map(bytes)),
    min_size=2, max_size=14)


def _is_subsequence(got: list[Frame], sent: list[Frame]) -> bool:
    it = iter(sent)
    return all(any(g == s for s in it) for g in got)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_sof_heavy_frames, st.integers(0, 2**32 - 1), st.floats(0.05, 0.6), st.floats(0, 1))
def test_single_byte_deletions_lose_only_their_own_frames(sent, seed, p_delete, p_last):
    """Every frame the line did not touch is decoded, in order; nothing decoded was not sent."""
    rng = random.Random(seed)
    frames = [Frame(seq, cmd, payload) for seq, cmd, payload in sent]
    stream, untouched = bytearray(), []
    for frame in frames:
        raw = bytearray(frame.encode())
        if rng.random() < p_delete:       # one byte lost; often the last one (the case the CRC cannot see)
            del raw[len(raw) - 1 if rng.random() < p_last else rng.randrange(len(raw))]
        else:
            untouched.append(frame)
        stream += raw
    stream += bytes(260)
    d = FrameDecoder()
    got, cut = [], 0
    while cut < len(stream):
        step = rng.randrange(1, 40)
        got += d.feed(bytes(stream[cut:cut + step]))
        cut += step
    assert _is_subsequence(got, frames)                   # no phantom, order kept
    assert _is_subsequence(untouched, got)                # every untouched frame decoded


def test_the_last_byte_deletion_property_holds_for_frames_ending_in_the_start_byte():
    ending = [_frame_ending_in_sof(cmd)[0] for cmd in (Cmd.TAG, Cmd.HEARTBEAT, Cmd.ERROR, Cmd.PING)]
    plain = Frame(1, Cmd.PING)
    frames = [ending[0], ending[1], plain, ending[2], ending[3], plain]
    stream = b"".join(f.encode()[:-1] if f is not plain else f.encode() for f in frames)
    assert FrameDecoder().feed(stream + bytes(8)) == frames
