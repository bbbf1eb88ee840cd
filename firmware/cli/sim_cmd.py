"""``mjtable sim``: run the table on the simulator and report.

A run is the real controller on the simulated table for ``--hands`` hands:
sets poured in, shuffled and stacked with the reader streaming, walls
verified and raised, dice, deals, simulated players playing each hand by
the rule set, the referee scoring it, and the used set stacked underneath
while the next hand is played.  A progress bar counts the hands; with
``--speed X`` the run is paced to X times real time with a live line of the
table.  The summary and the ``--report`` JSON come from :mod:`sim.report`.
``--one-cycle`` runs a single stacking cycle instead, with times per side.
``--fleet N --broker URL`` runs N tables on a real broker (:mod:`firmware.cli.sim_fleet`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from firmware.cli import words
from firmware.cli.arg_types import MAX_SECONDS, add_rules_option, count, seconds
from firmware.cli.words import N_, _, ngettext
from firmware.rules.names import DEFAULT as DEFAULT_RULES
from firmware.cli.sim_fleet import add_fleet_options, check_fleet_args, run_fleet


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sim", help=_("run the table on the simulator"),
                            description=_("Run the controller on the simulated table for a number of hands."))
    parser.add_argument("--table", type=Path, help=_("table model (TOML); default: the four-port double-set model"))
    parser.add_argument("--seed", type=int, default=1, help=_("seed for everything random (default 1)"))
    parser.add_argument("--tiles", type=int, choices=(144, 136, 112, 108), help=_("override the table's tile set"))
    parser.add_argument("--inject", action="append", default=[], metavar="SPEC",
                        help=_("fault to inject, KIND[:TARGET][@WHEN][=VALUE]; repeatable"))
    parser.add_argument("--shuffle-bias", action="append", default=[], metavar="SPEC",
                        help=_("a biased shuffle in the table model: favour=SEAT:PAIRS (rigged dice deal seat E/S/W/N "
                               "PAIRS more pairs a hand on average) or clump=P (the ring lifts a tile of the last "
                               "one's suit with extra probability P); repeatable"))
    parser.add_argument("--wear", action="append", default=[], metavar="PART:PERCENT",
                        help=_("a part (head0..3, lift0..3) slowing by PERCENT a cycle until it jams; repeatable"))
    parser.add_argument("--report", type=Path, help=_("write the JSON report here"))
    parser.add_argument("--hands", type=count(1, 1_000_000), default=16, help=_("hands to play (default 16)"))
    add_rules_option(parser, _("the rule set the simulated players play (default mcr; with --one-cycle: the set it "
                               "decides, else --tiles or the table model's)"), default=None)
    parser.add_argument("--state", type=Path, help=_("the table database; an existing file resumes from it"))
    parser.add_argument("--one-cycle", action="store_true", help=_("just one stacking cycle, with times per side"))
    parser.add_argument("--speed", type=_speed, default=None, metavar="X",
                        help=_("'max' (as fast as possible, the default) or a factor of real time (1 = watch it live)"))
    parser.add_argument("--auto-ack-s", type=_auto_ack, default=60.0, metavar="S",
                        help=_("a simulated technician clears an injected fault and acknowledges a latched fault "
                               "after S simulated seconds (default 60; 'none': never, the run ends latched)"))
    parser.add_argument("--diag-socket", type=Path, metavar="PATH",
                        help=_("open the technician's socket for this table: mjtable diag --socket PATH ..."))
    parser.add_argument("--web", type=count(1, 65535), metavar="PORT",
                        help=_("serve the table's web page for this simulated table on http://127.0.0.1:PORT/ "
                               "(with --speed; the login is printed)"))
    parser.add_argument("--web-users", type=Path, metavar="FILE",
                        help=_("with --web: the users file (mjtable web passwd --users FILE); default: two users "
                               "made for the run, tech and staff, with new passwords"))
    parser.add_argument("--service", action="store_true",
                        help=_("power on in service mode (both lift keys held): no game; with --diag-socket, "
                               "train on the service tests; runs until Ctrl-C or --until-s"))
    parser.add_argument("--until-s", type=seconds, metavar="S",
                        help=_("with --service: stop after S simulated seconds"))
    parser.add_argument("--quiet", action="store_true", help=_("no progress bar; print only the last summary line"))
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help=_("more output: every hand in the summary, -vv the controller's log"))
    add_fleet_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from firmware.cli.console_log import console_tracebacks

    with console_tracebacks(keep=args.verbose >= 2):      # (below -vv a traceback goes to a file, not the console)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    explicit_rules = args.rules is not None
    args.rules = args.rules or DEFAULT_RULES
    check_fleet_args(args)
    if args.fleet is not None:
        return run_fleet(args)
    if not args.one_cycle:
        return run_game(args)
    from firmware.config import default_table_path, load_table_config
    from firmware.root.simulator import parse_fault
    from firmware.root.simulator import SimTable
    from firmware.root.simulator import Stopwatch

    cfg = load_table_config(args.table or default_table_path())
    tiles = _tiles_of_rules(args) if explicit_rules else args.tiles
    if tiles:
        cfg = cfg.model_copy(update={"table": cfg.table.model_copy(update={"tile_set": tiles})})
    faults = [parse_fault(spec) for spec in args.inject]
    if args.report:
        from firmware.file_checks import check_writable
        check_writable(args.report, "--report")
    watch = Stopwatch()
    sim = SimTable(cfg, seed=args.seed, faults=faults)
    result, verification = sim.stack_and_read("A")
    wall_s = watch.elapsed_s
    report = {
        "version": 1, "seed": args.seed, "table": cfg.table.name, "tile_set": cfg.table.tile_set,
        "ok": result.ok, "stack_s": round(result.duration_s, 3),
        "sides": [{"side": s, "tiles": result.tiles[s], "stacks": result.stacks[s],
                   "done_s": None if result.side_done_s[s] is None else round(result.side_done_s[s], 3)}
                  for s in range(4)],
        "pauses": result.pauses,
        "wall": {"may_rise": verification.may_rise, "summary": verification.summary(),
                 "problems": [str(p) for p in verification.problems], "warnings": verification.warnings},
        "rfid": _rfid_report(sim, verification),
        "faults": [{"code": f.code.value, "tier": f.tier.value, "at_s": round(f.at_s, 3), "source": f.source,
                    "detail": f.detail, "text": f.code.text, "hint": f.code.hint} for f in sim.faults()],
        "motors_safe": sim.table.motors_safe(),
        "simulated_s": round(sim.loop.now(), 3), "wall_s": round(wall_s, 3),
    }
    if not args.quiet:
        print(_("table: %(table)s, %(tiles)s-tile set, seed %(seed)s")
              % {"table": cfg.table.name, "tiles": cfg.table.tile_set, "seed": args.seed})
        for side in report["sides"]:
            done = (_("not complete") if side["done_s"] is None
                    else _("done at %(s)s s") % {"s": f"{side['done_s']:6.2f}"})
            print("  " + _("side %(side)s: %(tiles)s tiles, %(stacks)s stacks, %(done)s")
                  % {"side": side["side"], "tiles": f"{side['tiles']:3d}", "stacks": f"{side['stacks']:2d}",
                     "done": done})
        print("  " + _("wall: %(summary)s") % {"summary": wall_words(verification)})
        for problem in verification.problems[:10]:
            print(f"    {problem}")
        rfid = report["rfid"]
        print("  " + _("reader: %(tiles_read)s tags, %(frames_ok)s frames ok, %(crc_errors)s CRC errors, %(resyncs)s "
                       "resyncs, %(reconnects)s reconnects, %(events_lost)s events lost") % rfid)
        for fault in report["faults"]:
            print("  " + _("fault %(code)s (%(tier)s) at %(at)s s: %(text)s")
                  % {"code": fault["code"], "tier": words.tier(fault["tier"]), "at": f"{fault['at_s']:.2f}",
                     "text": _(fault["text"])} + f" [{fault['source']}]\n    "
                  + _("hint: %(hint)s") % {"hint": _(fault["hint"])})
    times = {"simulated": f"{result.duration_s:.2f}", "wall": f"{wall_s:.2f}"}
    status = (_("stacked in %(simulated)s simulated s (%(wall)s s wall)") % times if result.ok
              else _("stopped by %(code)s in %(simulated)s simulated s (%(wall)s s wall)")
              % {**times, "code": result.fault.code.value})
    print(status + ", " + ngettext("%(n)s back-pressure pause", "%(n)s back-pressure pauses", result.pauses)
          % {"n": result.pauses} + "; " + (_("motors safe") if report["motors_safe"] else _("motors RUNNING")))
    if args.report:
        args.report.write_text(json.dumps(report, indent=2) + "\n")
    latched = result.fault is not None and result.fault.tier.value == "latched"
    return 1 if latched else 0


def _rfid_report(sim, verification) -> dict:
    c = sim.table.reader.counters
    return {"frames_ok": c.frames_ok, "crc_errors": c.crc_errors, "resyncs": c.resyncs, "reconnects": c.reconnects,
            "tiles_read": c.tags, "events_lost": c.events_lost, "drops": c.drops,
            "sets_verified": int(verification.may_rise), "sets_rejected": int(not verification.may_rise)}


def run_game(args: argparse.Namespace) -> int:
    from firmware.root.simulator import SimRun, Stopwatch, parse_fault, parse_shuffle_bias, parse_wear

    cfg = _checked_game_args(args)
    faults = [parse_fault(spec) for spec in args.inject]
    bias, wear = parse_shuffle_bias(args.shuffle_bias), parse_wear(args.wear)
    _checked_files_and_faults(args, faults)
    watch = Stopwatch()
    run = SimRun(cfg, rules=args.rules, seed=args.seed, faults=faults, hands=0 if args.service else args.hands,
                 state_path=args.state, play=not args.service, auto_ack_s=args.auto_ack_s, service=args.service,
                 shuffle_bias=bias, wear=wear)
    if getattr(args, "own_process", False):
        from firmware.root.host import keep_startup_objects
        keep_startup_objects()
    if args.verbose >= 2:
        _log_events(run)
    report, hands, results, completed = _played(run, args, watch)
    return _told(args, report, hands, results, completed)


def _checked_game_args(args: argparse.Namespace):
    """The table model of the run, once the options were found to go together (ValueError: which do not)."""
    from firmware.config import default_table_path, load_table_config

    cfg = load_table_config(args.table or default_table_path())
    if args.tiles:
        cfg = cfg.model_copy(update={"table": cfg.table.model_copy(update={"tile_set": args.tiles})})
    if args.hands < 1:
        raise ValueError(_("--hands must be at least 1"))
    if args.until_s is not None and not args.service:
        raise ValueError(_("--until-s goes with --service (a game ends after --hands)"))
    if args.service and args.speed is None and args.until_s is None:
        raise ValueError(_("--service runs in real time: add --speed 1 (or --until-s S for a bounded run)"))
    if args.web is not None and args.speed is None:
        raise ValueError(_("--web needs --speed X (at max speed the run is over before a page loads), "
                           "e.g. --web 8080 --speed 20"))
    if args.web_users is not None and args.web is None:
        raise ValueError(_("--web-users goes with --web PORT"))
    if args.web_users is not None and not args.web_users.is_file():
        raise ValueError(_("--web-users %(file)s: no such file (mjtable web passwd NAME --users FILE)")
                         % {"file": args.web_users})
    return cfg


def _checked_files_and_faults(args: argparse.Namespace, faults: list) -> None:
    """Before the first simulated second: the faults fit the run, the report can be written, the state resumed."""
    from firmware.file_checks import check_writable
    from firmware.root.simulator import check_fits_run, check_resume

    if not args.service:
        check_fits_run(faults, args.hands)
    rules_tiles = _tiles_of_rules(args)
    if args.report:
        check_writable(args.report, "--report")
    if args.state:
        check_resume(args.state, args.rules, rules_tiles)


def _played(run, args: argparse.Namespace, watch) -> tuple[dict, list, dict, bool]:
    """Serve what was asked (the socket, the page), play the run to its end, close: (report, hands, results,
    completed)."""
    from firmware.root.simulator import Pacer, build_report

    scratch = tempfile.TemporaryDirectory(prefix="mjtable-sim-") if args.web and not args.diag_socket else None
    page, server = _served(run, args, scratch)
    try:
        with _ended_by_sigterm(), _progress(args) as bar:
            pacer = Pacer(run.loop, args.speed)
            pacer.on_tick = lambda: _show(bar, run, pacer, args)
            if args.service:
                completed = _run_service(run, pacer, args)
            else:
                try:
                    completed = pacer.run_until(lambda: run.players.finished, args.hands * 900.0 + 600.0)
                except KeyboardInterrupt:         # Ctrl-C while watching: the summary of what was played
                    print(_("stopped by Ctrl-C"), file=sys.stderr)
                    completed = False
            _show(bar, run, pacer, args)
        run.settle()
        report = build_report(run, args.rules, 0 if args.service else args.hands, watch.elapsed_s)
        # every hand of the run only for a summary that lists them (-v): a long run's summary holds none
        listed = bool(run.controller) and args.verbose > 0
        hands = run.store.hands(since=run.start_hand) if listed else []
        results = {r.hand: r for r in run.session.scoreboard.hands(since=run.start_hand, all_games=True)} \
            if listed else {}
    finally:
        _close(page, server, run, scratch)
    return report, hands, results, completed


def _served(run, args: argparse.Namespace, scratch) -> tuple:
    """The technician's socket and the web page of the run, as asked: (page, server)."""
    socket_path = args.diag_socket or (Path(scratch.name) / "diag.sock" if scratch else None)
    page = server = None
    try:
        server = run.serve_diag(socket_path) if socket_path else None
        if args.diag_socket:
            command = f"mjtable diag --socket {args.diag_socket} state"
            print(_("technician's socket: %(command)s") % {"command": command}, file=sys.stderr)
        if args.web:
            from firmware.root.simulator import SimWebPage
            page = SimWebPage(args.web, socket_path, run.state_path, args.web_users)
            page.start()
            print(page.describe(), file=sys.stderr, flush=True)
    except BaseException:
        _close(page, server, run, scratch)
        raise
    return page, server


def _told(args: argparse.Namespace, report: dict, hands: list, results: dict, completed: bool) -> int:
    """The report written, the summary (or the last line) printed, the broken invariants said; the exit status."""
    from firmware.root.simulator import final_line, summary_lines
    tr = words.translations()

    if args.report:
        args.report.write_text(json.dumps(report, indent=2, default=str, ensure_ascii=False) + "\n")
    if args.quiet:                  # the last line only, with the hand count
        print(final_line(report, with_hands=not args.service, tr=tr))
    else:
        print("\n".join(summary_lines(report, hands, verbose=args.verbose > 0, results=results, tr=tr)))
    if not completed:
        print("mjtable sim: " + _("the run did not complete (the table is: %(state)s)")
              % {"state": words.state(report["final_state"])}, file=sys.stderr)
    refusal = report.get("refusal")
    if refusal:
        print("mjtable sim: " + _("BUG: the table's referee refused hand %(hand)s's action %(seq)s (%(action)s): "
                                  "%(why)s; the players stopped there")
              % refusal, file=sys.stderr)
    if not report["chips_conserved"]:
        print("mjtable sim: " + _("INVARIANT BROKEN: the stored payments and chips do not add up"), file=sys.stderr)
    unsafe = any(report["motor_s_under_interlock"].values())
    if unsafe:
        print("mjtable sim: " + _("INVARIANT BROKEN: a motor ran while an interlock was active"), file=sys.stderr)
    latched = report["final_state"] == "latched"
    return 1 if latched or not completed or refusal or not report["chips_conserved"] or unsafe else 0


def _interrupted(*_: object) -> None:
    raise KeyboardInterrupt


def _tiles_of_rules(args: argparse.Namespace) -> int:
    """The tile set of ``--rules``; ``--tiles`` must be it (the rule set decides which tiles are played)."""
    from firmware.rules.registry import load_ruleset

    rules_tiles = load_ruleset(args.rules).tile_set
    if args.tiles and args.tiles != rules_tiles:
        raise ValueError(_("--tiles %(tiles)s does not suit --rules %(rules)s, which plays %(plays)s tiles (the rule "
                           "set decides the tile set; leave --tiles out)")
                         % {"tiles": args.tiles, "rules": args.rules, "plays": rules_tiles})
    return rules_tiles


@contextlib.contextmanager
def _ended_by_sigterm() -> Iterator[None]:
    """A kill (SIGTERM) ends the run as Ctrl-C does: the summary, the socket and the page cleaned up."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_service(run, pacer, args: argparse.Namespace) -> bool:
    """Service mode: the table waits for a technician's tests until Ctrl-C or ``--until-s``."""
    until_s = args.until_s if args.until_s is not None else float("inf")
    try:
        pacer.run_until(lambda: run.loop.now() >= until_s, until_s)
    except KeyboardInterrupt:
        print(_("stopped"), file=sys.stderr)
    return True


SERVICE_BAR = N_("service mode: {n_fmt} simulated s [{elapsed}{postfix}]")      # (no hands: time is the measure)
SERVICE_BAR_UNTIL = N_("service mode: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} simulated s "
                       "[{elapsed}{postfix}]")


class _NoBar:
    """The bar of a ``--quiet`` run: counts, shows nothing."""

    total = None

    def __init__(self) -> None:
        self.n = 0

    def update(self, n: int) -> None:
        self.n += n

    def set_postfix_str(self, text: str) -> None:
        pass


@contextlib.contextmanager
def _progress(args: argparse.Namespace) -> Iterator:
    """A progress bar (stderr) over the hands, or in service mode (no hands) over the simulated seconds, with the
    live line as its postfix; log lines go above it.  ``--quiet``: no bar (and tqdm is not loaded)."""
    if args.quiet:
        yield _NoBar()
        return
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    if args.service:
        until_s = int(args.until_s) if args.until_s is not None else None
        options = dict(total=until_s, bar_format=_(SERVICE_BAR_UNTIL) if until_s else _(SERVICE_BAR))
    else:
        options = dict(total=args.hands, unit=_("hand"))
    with tqdm(dynamic_ncols=True, mininterval=0.2, file=sys.stderr, **options) as bar, \
            logging_redirect_tqdm():
        yield bar


def _show(bar, run, pacer, args: argparse.Namespace) -> None:
    """Advance the bar to the hands played (in service mode: the whole simulated seconds); when watching
    (--speed X), the live line of the table."""
    if args.service:
        done = int(run.loop.now())
        done = min(done, bar.total) if bar.total else done
    else:
        done = run.game.hands_recorded if run.game is not None else 0
    if done > bar.n:
        bar.update(done - bar.n)
    if args.speed is not None and run.controller is not None:
        from firmware.game.status import LIVE_COMPONENTS, live_line
        bar.set_postfix_str(live_line(run.session.get_status(LIVE_COMPONENTS), pacer.shown_now_s, words))
    elif run.controller is None:
        bar.set_postfix_str(_("power off"))


# -vv: the controller's steps as log lines (INFO), as ``mjtable run`` logs them on a table
_EVENT_LINES: dict[str, Callable[[dict], str]] = {
    "controller.state": lambda d: f"state {d['state']}",
    "controller.stacking": lambda d: f"stacking set {d['set_id'] or '(not known yet)'}"
                                     + (", going on with the interrupted cycle" if d.get("resumed") else ""),
    "deal": lambda d: f"hand {d['hand']} dealt: dealer side {d['dealer']}, dice {d['dice']}",
    "hand.over": lambda d: f"hand {d['hand']} over",
    "controller.acknowledged": lambda d: "latched fault acknowledged",
}


def _log_events(run) -> None:
    """Log the controller's state changes and main events at INFO (``-vv``), from this power-on (the events
    of the boot already past) and across power cuts (each boot wires a new bus: listen to every one)."""
    log = logging.getLogger("firmware.controller")

    def event(e) -> None:
        line = _EVENT_LINES.get(e.topic)
        if line is not None:
            log.info("%s", line(e.data))

    for past in list(run.record.events):
        event(past)
    run.bus.subscribe("", event)
    listen = run._listen                # (called with the new bus at every boot)

    def listen_too(bus) -> None:
        listen(bus)
        bus.subscribe("", event)
    run._listen = listen_too


def _close(page, server, run, scratch) -> None:
    """The web page, the socket, the table and its scratch folder, in that order (what was opened)."""
    if page is not None:
        page.stop()
    if server is not None:
        server.stop()
    run.close()
    if scratch is not None:
        scratch.cleanup()


def _speed(text: str) -> float | None:
    if text == "max":
        return None
    try:
        speed = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("--speed is 'max' or a factor of real time, not %(text)r")
                                         % {"text": text}) from None
    if not 0 < speed < float("inf"):              # (a NaN compares false)
        raise argparse.ArgumentTypeError(_("--speed must be a positive number (1 = real time; as fast as it goes: "
                                           "'max'), not %(text)r") % {"text": text})
    return speed


def _auto_ack(text: str) -> float | None:
    """Seconds (0: at once, at most a week) or 'none'; not a NaN, an infinity or a negative."""
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("--auto-ack-s is seconds or 'none', not %(text)r") % {"text": text}) \
            from None
    if not 0 <= value <= MAX_SECONDS:          # (a NaN compares false)
        raise argparse.ArgumentTypeError(_("--auto-ack-s is seconds from 0 to %(max)s or 'none', not %(text)r")
                                         % {"max": f"{MAX_SECONDS:g}", "text": text})
    return value


# a wall's defects, in words (the verification's codes)
DEFECTS = {"unread": N_("unread"), "unknown": N_("unknown"), "foreign": N_("of another set"),
           "duplicate": N_("duplicated"), "not_in_set": N_("not in this tile set"), "missing": N_("missing"),
           "side_count": N_("a side's count wrong"), "stray": N_("stray tags")}


def wall_words(verification) -> str:
    """A stacked set's verification in this language (as :meth:`Verification.summary` says it in English)."""
    from collections import Counter

    if not verification.problems:
        return (_("verified, every tile present exactly once") if verification.verified else
                _("counted only (the set is not enrolled): every side holds its tiles, no tile verified"))
    counts = Counter(p.defect.value for p in verification.problems)
    head = ("" if verification.verified else _("counted only: ")) + (
        _("accepted with warnings: ") if verification.may_rise else _("rejected: "))
    return head + ", ".join(f"{n} {_(DEFECTS[name]) if name in DEFECTS else name}"
                            for name, n in sorted(counts.items()))
