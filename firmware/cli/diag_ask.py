"""How a ``mjtable diag`` controller tool's request reaches a controller and its answer comes back.

Three ways: the running service's local socket (the default), this
process's own controller on the real table powered on in service mode
(``--direct``), or a simulated table in this process (``--sim``).  Also
the tools that keep asking (``status --follow``, ``log --follow``) and the
support bundle written from an answer.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable

from firmware.cli import words
from firmware.cli.run_cmd import diag_model
from firmware.cli.words import _, ngettext
from firmware.faults import TableError

LOG_WAIT_S = 20.0           # diag log --follow: the controller answers within this when no new line comes
DEFAULT_SOCKET = "/run/mjtable/diag.sock"


def ask(args: argparse.Namespace, request: dict) -> dict:
    if args.sim:
        return _ask_simulated(args, request)
    if args.direct:
        return _ask_direct(args, request)
    from firmware.diagnostics.socket.protocol import ask
    socket = args.socket or Path(DEFAULT_SOCKET)
    try:
        return ask(socket, request, timeout_s=args.timeout_s)
    except ConnectionError as exc:
        raise TableError(_("%(error)s; without a service, add --direct to drive the table from here")
                         % {"error": exc}) from None
    except OSError as exc:
        raise TableError(f"{socket}: {exc}") from None


def write_bundle(args: argparse.Namespace, answer: dict) -> int:
    """``diag bundle --out FILE``: the table's parts, the database's integrity check, one tar.gz."""
    from firmware.root.host import HOST_CLOCK
    from firmware.support_bundle import archive, integrity_check, parts_of

    if not answer.get("ok"):
        print(_("FAILED: %(error)s") % {"error": words.refusal(answer) or answer.get("error") or _("no answer")})
        return 1
    integrity = answer.get("integrity")
    if integrity is None and answer.get("database"):
        integrity = integrity_check(args.state or answer["database"])
    data = archive(parts_of(answer, integrity), HOST_CLOCK.wall_s())
    try:
        args.out.write_bytes(data)
    except OSError as exc:
        raise TableError(f"--out {args.out}: {exc.strerror or exc}") from None
    print(ngettext("diagnostics written to %(file)s (%(n)s byte; integrity check: %(check)s)",
                   "diagnostics written to %(file)s (%(n)s bytes; integrity check: %(check)s)", len(data))
          % {"file": args.out, "n": len(data), "check": ", ".join(integrity or [])[:80]})
    return 0


def follow_log(args: argparse.Namespace, request: dict) -> int:
    """``diag log --follow``: the recent lines, then every new one (the controller answers a follow-up when new
    lines come, or after ``wait_s`` with none; Ctrl-C ends)."""
    if args.sim or args.direct:
        raise ValueError(_("--follow asks a running controller's socket (not with --sim or --direct)"))
    after = 0
    try:
        while True:
            answer = ask(args, {**request, "after": after, **({"wait_s": LOG_WAIT_S} if after else {})})
            if not answer.get("ok"):
                print(_("FAILED: %(error)s") % {"error": words.refusal(answer) or answer.get("error")})
                return 1
            for r in answer["lines"]:
                print(f"{r['level']:8} {r['logger']}: {r['message']}", flush=True)
            after = answer["last"]
    except KeyboardInterrupt:
        return 0


def follow(args: argparse.Namespace, request: dict) -> int:
    """``status --follow``: subscribe to the running controller and print each line as it comes."""
    from firmware.diagnostics.render import render_status_line
    from firmware.diagnostics.socket.protocol import subscribe

    if args.sim or args.direct:
        raise ValueError(_("--follow subscribes to a running controller's socket (not with --sim or --direct)"))
    socket = args.socket or Path(DEFAULT_SOCKET)
    printed = 0
    try:
        for line in subscribe(socket, request.get("components")):
            print(json.dumps(line, ensure_ascii=False) if args.json else render_status_line(line, words), flush=True)
            printed += 1
            if line.get("ok") is False:
                return 1
            if args.lines is not None and printed >= args.lines:
                break
    except ConnectionError as exc:
        raise TableError(str(exc)) from None
    except OSError as exc:
        raise TableError(f"{socket}: {exc}") from None
    return 0


def answer_in_process(session, loop_run_until: Callable[[Callable[[], bool], float], None], request: dict,
            timeout_s: float) -> dict:
    from firmware.diagnostics.commands import DiagCommands

    answers: list[dict] = []
    commands = DiagCommands(session)
    commands.handle(request, answers.append)
    try:
        loop_run_until(lambda: bool(answers), timeout_s)
    except BaseException:
        # Ctrl-C, or no answer in time: a test must not run on with nobody watching (every motor to safe)
        commands.handle({"cmd": "stop"}, lambda answer: None)
        raise
    return answers[0]


def _ask_direct(args: argparse.Namespace, request: dict) -> dict:
    """The technician's own controller on the real table, powered on in service mode."""
    from firmware.cli.run_cmd import DEFAULT_STATE, service_options
    from firmware.root.host import real_loop
    from firmware.root.service import build_service

    args.rules = "mcr"                  # (service mode deals no hand)
    hw = build_service(service_options(args, args.state or DEFAULT_STATE, None), real_loop())
    try:
        hw.start(service=True)
        return answer_in_process(hw.session, hw.run, request, args.timeout_s)
    finally:
        hw.close()


def _lay_on_pad(run, side: int, text: str) -> None:
    """The simulated player lays these tiles (of set A) on the pad of ``side``."""
    from firmware.tiles.tile import parse
    from firmware.root.simulator import SimTile

    free: dict[int, list] = {}
    for entry in run.world.registry.sets["A"]:
        free.setdefault(entry.kind, []).append(entry)
    tiles = []
    for kind in parse(text):
        if not free.get(kind):
            raise ValueError(_("--lay: more copies of a tile than a set has in %(text)r") % {"text": text})
        entry = free[kind].pop()
        tiles.append(SimTile(entry.uid, entry.set_id, entry.kind))
    run.world.lay_on_pad(side, tiles)


def _ask_simulated(args: argparse.Namespace, request: dict) -> dict:
    from firmware.diagnostics import log_ring

    log_ring.install()
    from firmware.root.simulator import check_fits_run, parse_fault
    from firmware.root.simulator import SimRun
    from firmware.root.simulator import SimTimeout

    from firmware.config import load_table_config

    cfg = load_table_config(diag_model(args))
    faults = [parse_fault(s) for s in args.inject]
    check_fits_run(faults, hands=0)             # (no game here: an inject @handN would never happen)
    run = SimRun(cfg, rules=args.rules, seed=args.seed, faults=faults, hands=0, service=args.service)
    try:
        run.loop.run_for(5.0)                       # power on, home (or enter service mode)
        if getattr(args, "lay", None):
            _lay_on_pad(run, args.side, args.lay)
        # (simulated time is cheap: wait as long as the longest test could take, a burn-in's cycles included)
        limit_s = max(args.timeout_s, 7200.0, 120.0 * int(request.get("cycles") or 0) + 600.0)
        try:
            return answer_in_process(run.session, run.run_until, request, limit_s)
        except SimTimeout:
            raise TableError(_("the simulated table did not answer within %(s)s simulated s")
                             % {"s": f"{limit_s:g}"}) from None
    finally:
        run.close()
