"""Reader driver against the simulated board: commands, retries, link loss, reconnect, losses, faults."""

import pytest

from firmware.faults import FaultCode
from firmware.reader.codec import REPLY, Cmd, Status, encode
from firmware.reader.driver import LinkState, Reply
from firmware.reader.messages import InventoryPart, PingInfo, TagEvent
from tests.firmware.conftest import make_sim


def _up(*faults, **kw):
    sim = make_sim(*faults, **kw)
    assert sim.start_reader()
    return sim


def _call(sim, method, *args, timeout_s=5.0) -> Reply:
    replies = []
    method(*args, replies.append)
    sim.loop.run_until(lambda: bool(replies), timeout_s)
    return replies[0]


def _codes(sim):
    return [f.code for f in sim.faults()]


def test_link_comes_up_with_the_board_identity():
    sim = _up()
    board = sim.table.reader.board
    assert board == PingInfo(1, (1, 4), 8, 0x4D4A0001)
    reply = _call(sim, sim.table.reader.ping)
    assert reply.ok and PingInfo.unpack(reply.payload) == board


def test_antenna_status_and_inventory_of_a_pad():
    sim = _up()
    tiles = sim.world.sets["A"][:30]
    sim.world.lay_on_pad(1, tiles)
    reply = _call(sim, sim.table.reader.inventory, 5)
    parts = [InventoryPart.unpack(f.payload) for f in reply.frames]
    assert reply.ok and [p.status for p in parts] == [Status.MORE, Status.OK]
    assert [u for p in parts for u in p.uids] == [t.uid for t in tiles]
    status = _call(sim, sim.table.reader.antenna_status)
    assert status.ok and status.payload[1] == 0xFF


def test_a_lost_command_is_retried_with_the_same_seq_and_acted_on_once():
    sim = _up()
    sim.world.reader_line.lose_host_writes = 2
    executed = sim.world.reader.commands_executed
    reply = _call(sim, sim.table.reader.reset_rf)
    assert reply.ok
    assert sim.table.reader.counters.retries == 2
    assert sim.world.reader.commands_executed == executed + 1


def test_a_lost_reply_is_answered_again_without_acting_twice():
    sim = _up()
    reader, board = sim.table.reader, sim.world.reader
    sim.world.reader_line.drop_p = 1.0            # the first reply is lost on the wire
    replies = []
    reader.stream_start(0x0F, replies.append)
    sim.loop.run_for(0.05)
    sim.world.reader_line.drop_p = 0.0
    sim.loop.run_until(lambda: bool(replies), 2.0)
    assert replies[0].ok and reader.counters.retries >= 1
    assert board.commands_seen > board.commands_executed


def test_no_answer_after_the_retries_takes_the_link_down_and_it_comes_back():
    sim = _up()
    sim.world.reader_line.lose_host_writes = 4    # first try + 3 retries
    reply = _call(sim, sim.table.reader.reset_rf)
    assert not reply.ok and "no reply to RESET_RF after 4 tries" in reply.error
    assert sim.table.reader.state is LinkState.DOWN
    assert FaultCode.E80 in _codes(sim)
    sim.loop.run_until(lambda: sim.table.reader.state is LinkState.UP, 10.0)
    assert sim.table.reader.counters.reconnects == 1


def test_heartbeat_loss_is_link_loss_and_a_rebooted_board_resumes_streaming():
    sim = _up()
    reader = sim.table.reader
    tags = []
    reader.on_tag.add(tags.append)
    assert _call(sim, reader.stream_start, 0x0F).ok
    sim.world.reader.hang(6.0)
    sim.loop.run_until(lambda: reader.state is LinkState.DOWN, 5.0)
    assert sim.loop.now() == pytest.approx(sim.world.reader.boot_s + 3.0 + 1.0, abs=1.01)
    assert [f for f in sim.faults() if f.code is FaultCode.E80][0].detail["reason"] == "no heartbeat for 3 s"
    sim.loop.run_until(lambda: reader.state is LinkState.UP, 20.0)
    assert sim.world.reader.reboots == 1
    sim.loop.run_for(0.1)
    assert sim.world.reader.stream_mask == 0x0F   # the driver started the stream again
    sim.world.reader.tile_passed(2, sim.world.sets["A"][0].uid)
    sim.loop.run_for(0.1)
    assert [t.uid for t in tags] == [sim.world.sets["A"][0].uid]


def test_port_vanishing_is_reported_once_and_reopened_with_capped_backoff():
    sim = _up("rfid-disconnect@2s=20s")
    reader = sim.table.reader
    sim.loop.run_until(lambda: reader.state is LinkState.DOWN, 5.0)
    downs = []
    reader.on_link.add(downs.append)
    sim.loop.run_until(lambda: reader.state is LinkState.UP, 40.0)
    assert _codes(sim).count(FaultCode.E80) == 1
    assert reader.counters.link_losses == 1 and reader.counters.reconnects == 1
    # reopen attempts: 0.5, 1, 2, 4, 8, 8 ... never more than 8 s apart
    assert sim.loop.now() - 22.0 <= 8.5


def test_commands_fail_fast_while_the_link_is_down():
    sim = _up("rfid-disconnect@1s=30s")
    sim.loop.run_until(lambda: sim.table.reader.state is LinkState.DOWN, 5.0)
    reply = _call(sim, sim.table.reader.ping)
    assert not reply.ok and "down" in reply.error


def test_dropped_frames_are_counted_as_event_counter_gaps():
    sim = _up("rfid-drop=0.3", seed=4)
    lost = []
    sim.table.reader.on_events_lost.add(lambda n, why: lost.append((n, why)))
    sim.loop.run_for(30.0)
    c = sim.table.reader.counters
    assert c.event_gaps > 0 and c.events_lost >= c.event_gaps
    assert sum(n for n, _ in lost if n) == c.events_lost


def test_antenna_fault_is_e81_naming_the_side():
    sim = _up("antenna:2")
    reply = _call(sim, sim.table.reader.stream_start, 0x0F)
    assert reply.status == Status.ANTENNA_ERROR
    sim.loop.run_for(0.5)
    e81 = [f for f in sim.faults() if f.code is FaultCode.E81]
    assert len(e81) == 1 and e81[0].detail["antenna"] == 2 and "side 2" in e81[0].detail["where"]
    assert sim.table.reader.faulty_antennas == {2}


def test_antenna_failing_while_streaming():
    sim = _up("antenna:1@5s")
    assert _call(sim, sim.table.reader.stream_start, 0x0F).ok
    sim.loop.run_for(6.0)
    assert [f.detail["antenna"] for f in sim.faults() if f.code is FaultCode.E81] == [1]


def test_board_overflow_is_reported_as_lost_events():
    sim = _up()
    sim.world.reader.queue_frames = 4
    lost = []
    sim.table.reader.on_events_lost.add(lambda n, why: lost.append(why))
    assert _call(sim, sim.table.reader.stream_start, 0x0F).ok
    for tile in sim.world.sets["A"][:40]:        # a burst faster than the UART can carry
        sim.world.reader.tile_passed(0, tile.uid)
    sim.loop.run_for(2.0)
    assert sim.table.reader.counters.overflows >= 1
    assert "board event buffer overflow" in lost
    assert any("TAGs since stream start" in why for why in lost) or sim.table.reader.counters.tags < 40


def test_garbage_and_strange_frames_are_dropped_and_counted():
    sim = _up()
    reader = sim.table.reader
    tags = []
    reader.on_tag.add(tags.append)
    line = sim.world.reader_line
    line.to_host += b"\x00\xa5\x07garbage\xff"
    line.to_host += encode(200, Cmd.PING | REPLY, bytes(9))                      # nobody asked
    line.to_host += encode(1, 0x55, b"?")                                       # unknown type
    line.to_host += encode(sim.world.reader.counter, Cmd.TAG, bytes(3))          # bad payload
    sim.world.reader.counter += 1
    line.to_host += encode(sim.world.reader.counter, Cmd.TAG, TagEvent(0, b"\x04" * 8, 9, 9).pack())  # not a tile
    sim.world.reader.counter += 1
    sim.loop.run_for(1.5)
    c = reader.counters
    assert (c.unexpected_replies, c.unknown_messages, c.bad_payloads, c.not_tiles) == (1, 1, 1, 1)
    assert c.noise_bytes > 0 and tags == [] and reader.state is LinkState.UP


def test_line_noise_never_crashes_and_the_link_survives():
    sim = _up("rfid-noise=0.01", seed=2)
    sim.loop.run_for(60.0)
    c = sim.table.reader.counters
    assert c.crc_errors > 0 and c.resyncs > 0
    assert c.heartbeats > 40


def test_an_antenna_fault_of_an_antenna_the_board_does_not_have_is_a_protocol_error():
    """ERROR 0x10 with detail 200 once raised E81 "seat pad of side 196": it is a garbled frame, dropped
    and counted, never a fault of a real antenna."""
    from firmware.reader.codec import BoardError
    from firmware.reader.messages import ErrorReport

    sim = _up()
    assert _call(sim, sim.table.reader.stream_start, 0x0F).ok
    before = sim.table.reader.counters.bad_payloads
    sim.world.reader._unsolicited(Cmd.ERROR, ErrorReport(BoardError.ANTENNA_FAULT, 200).pack())
    sim.world.reader._unsolicited(Cmd.ERROR, ErrorReport(BoardError.ANTENNA_FAULT, 8).pack())
    sim.loop.run_for(0.5)
    assert FaultCode.E81 not in _codes(sim) and sim.table.reader.faulty_antennas == set()
    assert sim.table.reader.counters.bad_payloads == before + 2
