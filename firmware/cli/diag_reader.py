"""The reader tools of ``mjtable diag`` that talk to the board themselves: a started driver on the
table's port (or ``--port``, or the simulated board with ``--sim``), and enrollment of a set's tags."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from firmware.cli.words import _, ngettext
from firmware.file_checks import check_writable
from firmware.config import TableConfig, load_table_config
from firmware.diagnostics.reader_answers import ask_reader, place_words
from firmware.events import EventBus
from firmware.faults import FaultCode, FaultReporter, TableError
from firmware.reader.driver import LinkState, ReaderDriver, Reply
from firmware.reader.enroll import Enrollment, feeding_order
from firmware.reader.registry import TileRegistry, load_table_registry, write_set_file
from firmware.tiles.sets import tile_set
from firmware.tiles.tile import code


def ask_board(args: argparse.Namespace, request: dict) -> tuple[dict, str]:
    """Ask the board straight (no service): the answer, and where it came from."""
    return _session(args, lambda s: _ask_board(s, args, request)), _board_where(args)


class ReaderSession:
    """A started reader driver and a way to run its loop until something is true."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.cfg: TableConfig = load_table_config(_model(args))
        self.sim = None
        if args.sim:
            from firmware.root.simulator import parse_fault
            from firmware.root.simulator import SimTable

            self.sim = SimTable(self.cfg, seed=args.seed, faults=[parse_fault(s) for s in args.inject])
            self.loop = self.sim.loop
            self.bus = self.sim.bus
            self.reader = self.sim.table.reader
            self.where = _("simulated reader")
        else:
            from firmware.root.host import real_loop
            from firmware.root.host import open_serial

            url = args.port or self.cfg.reader.url
            r = self.cfg.reader
            self.loop = real_loop()
            self.bus = EventBus(self.loop.now)
            self.reader = ReaderDriver(self.loop, lambda: open_serial(url, r.baud), r, FaultReporter(self.bus),
                                       r.poll_s, reconnect_max_s=r.reconnect_max_s)
            self.where = _("reader on %(port)s") % {"port": url}
        self.reader.start()
        try:
            self.run_until(lambda: self.reader.state is LinkState.UP, args.link_timeout_s)
        except TableError:
            self.close()
            raise TableError(_("%(code)s %(where)s not answering; %(hint)s")
                             % {"code": FaultCode.E80.value, "where": self.where, "hint": _(FaultCode.E80.hint)},
                             FaultCode.E80) from None

    def run_until(self, done: Callable[[], bool], timeout_s: float) -> None:
        if self.sim is not None:
            from firmware.root.simulator import SimTimeout

            try:
                self.sim.loop.run_until(done, timeout_s)
            except SimTimeout:
                raise TableError(_("%(where)s: no answer within %(seconds)s s")
                                 % {"where": self.where, "seconds": f"{timeout_s:g}"}) from None
        else:
            from firmware.root.host import run_until

            run_until(self.loop, done, timeout_s, self.where)

    def call(self, start: Callable[[Callable[[Reply], None]], None], timeout_s: float = 5.0) -> Reply:
        replies: list[Reply] = []
        start(replies.append)
        self.run_until(lambda: bool(replies), timeout_s)
        return replies[0]

    def registry(self) -> TileRegistry | None:
        try:
            return load_table_registry(self.cfg) if self.cfg.reader.registry else None
        except TableError:
            return None

    def close(self) -> None:
        self.reader.stop()
        if self.sim is not None:
            self.sim.close()


def _session(args: argparse.Namespace, fn: Callable[[ReaderSession], int]) -> int:
    session = ReaderSession(args)
    try:
        return fn(session)
    finally:
        session.close()


def _board_where(args: argparse.Namespace) -> str:
    if args.sim:
        return _("simulated reader")
    return _("reader on %(port)s") % {"port": args.port or load_table_config(_model(args)).reader.url}


def _ask_board(s: ReaderSession, args: argparse.Namespace, request: dict) -> dict:
    if request["action"] == "counters":
        # listen for a while with every antenna streaming, then read the line counters
        s.reader.stream_start(0xFF, lambda reply: None)
        end = s.loop.now() + args.seconds
        s.run_until(lambda: s.loop.now() >= end, args.seconds + 1.0)
    answers: list[dict] = []
    ask_reader(s.reader, s.registry(), s.loop.now, request, answers.append)
    s.run_until(lambda: bool(answers), 5.0)
    return answers[0]


def _where(antenna: int) -> str:
    return place_words(antenna, _)


def enroll(args: argparse.Namespace) -> int:
    cfg = load_table_config(_model(args))
    chosen = tile_set(args.tiles or cfg.table.tile_set)
    declared = sorted(cfg.reader.registry)
    if args.set_id not in declared:
        raise TableError(_("--set %(set)r: the table model %(model)s declares the sets %(sets)s ([reader.registry]); a "
                           "set is enrolled for one of them")
                         % {"set": args.set_id, "model": cfg.source, "sets": ", ".join(declared) or _("none")})
    out = args.out or cfg.registry_files().get(args.set_id)
    if out.exists() and not args.force:
        raise TableError(_("%(file)s exists; add --force to replace it") % {"file": out})
    check_writable(out, "--out")                  # (before the first tile: the file can be written)

    def run(s: ReaderSession) -> int:
        enrollment = Enrollment(chosen, args.set_id, args.antenna)
        print(_("enrolling set %(set)s: %(tiles)s tiles over antenna %(antenna)s (%(where)s), one at a time, in this "
                "order:") % {"set": args.set_id, "tiles": chosen.size, "antenna": args.antenna,
                             "where": _where(args.antenna)} + f"\n  {feeding_order(chosen)}")
        last_tile = [s.loop.now()]

        def on_tag(event) -> None:
            entry = enrollment.tag(event)
            if entry is not None:
                last_tile[0] = s.loop.now()
                print(f"  {len(enrollment.tiles):3d}/{chosen.size} {code(entry[1]):3} {entry[0].hex()}")

        s.reader.on_tag.add(on_tag)
        s.reader.stream_start(1 << args.antenna, lambda reply: None)
        if s.sim is not None:
            # on the bench: the simulated technician feeds the set, sorted, over the antenna
            tiles = sorted(s.sim.world.sets.get(args.set_id, []), key=lambda t: t.kind)
            s.sim.world.feed_over_antenna(args.antenna, tiles)
        while not enrollment.done:
            s.run_until(lambda: enrollment.done or s.loop.now() - last_tile[0] > args.tile_timeout_s,
                        args.tile_timeout_s + 5.0)
            if not enrollment.done:
                raise TableError(_("no tile for %(seconds)s s after %(done)s of %(tiles)s (next: %(next)s); nothing "
                                   "written") % {"seconds": f"{s.loop.now() - last_tile[0]:.0f}",
                                                 "done": len(enrollment.tiles), "tiles": chosen.size,
                                                 "next": enrollment.next_face})
        write_set_file(out, args.set_id, enrollment.tiles)
        repeats = ngettext(", %(n)s repeated tile ignored", ", %(n)s repeated tiles ignored", enrollment.repeats) % {
            "n": enrollment.repeats} if enrollment.repeats else ""
        print(_("written: %(file)s (%(tiles)s tiles%(repeats)s)")
              % {"file": out, "tiles": len(enrollment.tiles), "repeats": repeats})
        return 0
    return _session(args, run)


def _model(args: argparse.Namespace) -> Path:
    from firmware.cli.run_cmd import diag_model

    return diag_model(args)
