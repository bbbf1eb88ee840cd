"""``mjtable diag``: the technician's tools.

The controller tools (state, faults, counters, sensors, ack, and the motor
tests: test, jog, learn, burn-in) ask the running service over its local
socket; with ``--direct`` this process drives the table itself (no service
running), with ``--sim`` a simulated table in this process.  The reader
tools and enrollment talk to the reader board on the configured port
(``--port`` to pick another, e.g. the pseudo-terminal of ``mjtable
reader-sim``) or, with ``--sim``, to the simulated board.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable

from firmware.cli import diag_ask, words
from firmware.cli.diag_ask import DEFAULT_SOCKET
from firmware.cli.arg_types import add_rules_option, count, seconds
from firmware.cli.words import _
from firmware.cli.run_cmd import add_table_options
from firmware.diagnostics.service_limits import (BURN_IN_CYCLES, BURN_IN_CYCLES_MAX, DISK_JOG_S, GROUP_TESTS,
                                                 LEARN_RUNS, LEARN_RUNS_MAX)
from firmware.faults import TableError
from firmware.reader.messages import ANTENNAS

LINK_TIMEOUT_S = 5.0
# (the board's tools and the configuration are imported by the tool that runs: --help builds no models)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("diag", help=_("technician diagnostics: state, faults, sensors, motor tests, tile reader"),
                            description=_("Technician diagnostics."),
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog=_("examples:\n  mjtable diag faults\n  mjtable diag jog wall_lift2\n"
                                     "  mjtable diag --sim --service burn-in --cycles 3\n"
                                     "  mjtable diag --sim reader ping\n"
                                     "  mjtable diag --port /dev/pts/5 reader inventory --antenna 4\n"
                                     "  mjtable diag enroll --set A --antenna 0 --out set-a.csv"))
    parser.add_argument("--port", help=_("reader port URL instead of the table's (e.g. /dev/ttyUSB0, /dev/pts/5)"))
    parser.add_argument("--sim", action="store_true", help=_("use the simulated table in this process"))
    parser.add_argument("--seed", type=int, default=1, help=_("seed of the simulated table (with --sim)"))
    parser.add_argument("--link-timeout-s", type=seconds, default=LINK_TIMEOUT_S,
                        help=_("how long to wait for the board to answer (default %(seconds)s)")
                        % {"seconds": f"{LINK_TIMEOUT_S:g}"})
    parser.add_argument("--inject", action="append", default=[], metavar="SPEC",
                        help=_("fault to inject into the simulated table (with --sim); repeatable"))
    parser.add_argument("--socket", type=Path, default=None,
                        help=_("the running controller's socket (default %(socket)s; mjtable sim --diag-socket PATH "
                               "serves one for a simulated table)") % {"socket": DEFAULT_SOCKET})
    parser.add_argument("--service", action="store_true",
                        help=_("with --sim: power the simulated table on in service mode (both lift keys held)"))
    parser.add_argument("--direct", action="store_true",
                        help=_("no service is running: drive the table from this process, in service mode"))
    parser.add_argument("--json", action="store_true",
                        help=_("print the controller's answer as JSON (before or after the tool's name)"))
    add_table_options(parser)     # on a table: its folder /etc/mjtable; with --sim or --port: the shipped model
    add_rules_option(parser, _("with --sim: the rule set the simulated table plays"))
    diag = parser.add_subparsers(dest="diag_command", metavar="TOOL", required=True)
    _reader_tools(diag)
    tool = _controller_tool(diag)
    _status_tools(tool)
    _judge_tool(tool)
    _referee_tools(tool)
    _staff_tools(tool)
    _service_tools(tool)
    _enroll_tool(diag)


def _reader_tools(diag) -> None:
    reader = diag.add_parser("reader", help=_("the tile reader board: ping, antennas, inventory, counters"))
    tools = reader.add_subparsers(dest="reader_command", metavar="ACTION", required=True)
    tools.add_parser("ping", help=_("is the board there: identity and firmware")).set_defaults(func=_ping)
    tools.add_parser("antennas", help=_("health of the 8 antennas")).set_defaults(func=_antennas)
    inventory = tools.add_parser("inventory", help=_("tiles in an antenna's field now"))
    inventory.add_argument("--antenna", type=int, choices=range(ANTENNAS), required=True)
    inventory.set_defaults(func=_inventory)
    counters = tools.add_parser("counters", help=_("listen for a while and print the line counters"))
    counters.add_argument("--seconds", type=seconds, default=10.0)
    counters.set_defaults(func=_counters)


def _controller_tool(diag) -> Callable[..., argparse.ArgumentParser]:
    """``tool(name, text, timeout_s)``: a tool that asks the controller (its socket, --direct or --sim)."""
    def tool(name: str, text: str, timeout_s: float = 60.0) -> argparse.ArgumentParser:
        parser = diag.add_parser(name, help=text)
        parser.add_argument("--socket", type=Path, default=argparse.SUPPRESS,
                            help=_("the running controller's socket (default %(socket)s)") % {"socket": DEFAULT_SOCKET})
        parser.add_argument("--timeout-s", type=seconds, default=timeout_s,
                            help=_("wait this long (default %(seconds)s)") % {"seconds": f"{timeout_s:g}"})
        # (SUPPRESS: not given after the tool, it leaves the one given before the tool as it is)
        parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                            help=_("print the controller's answer as JSON"))
        parser.set_defaults(func=_controller_command, command_name=name)
        return parser
    return tool


def _status_tools(controller_tool) -> None:
    for name, text in (("state", _("the controller's state, bookkeeping and chips")),
                       ("faults", _("fault history with codes and hints")),
                       ("ack", _("acknowledge a latched fault")),
                       ("stop", _("stop the running service test or jog (every motor to safe)"))):
        controller_tool(name, text)
    counters = controller_tool("counters", _("reader line counters, mechanism runs, slow moves and nominal times, "
                                             "tile counts, the fleet link's counters (a table with a [fleet] section)"))
    counters.add_argument("--reset", action="store_true",
                          help=_("start the line counters and slow-move counts from zero (after a repair)"))
    status = controller_tool("status", _("the status the web page shows, per component; --follow: then every change"))
    status.add_argument("--component", action="append", metavar="NAME",
                        help=_("only this component (table, book, stacking, reader, faults, chips, sensors, deal, "
                               "warnings); "
                               "repeatable"))
    status.add_argument("--follow", action="store_true",
                        help=_("subscribe: the snapshot, then the changed fields as they come (Ctrl-C ends)"))
    status.add_argument("--lines", type=count(1, 1_000_000), metavar="N",
                        help=_("with --follow: stop after N lines"))
    warnings = controller_tool("warnings", _("shuffle-bias (fairness) and wear (maintenance) warnings with their "
                                             "evidence: every seat's and wall pattern's statistic, every part's trend"))
    warnings.add_argument("--reset", metavar="WHAT",
                          help=_("start again: 'fairness' (the table was checked), 'maintenance', or a part "
                                 "(head0..3, lift0..3) that was repaired or replaced"))
    sensors = controller_tool("sensors", _("every sensor and key now; --watch S: every change over S seconds"), 660.0)
    sensors.add_argument("--watch", type=seconds, metavar="S", help=_("record every input change for S seconds"))


def _judge_tool(controller_tool) -> None:
    judge = controller_tool("judge", _("check a declared win from the winner's seat pad (the table's referee)"))
    judge.add_argument("--side", type=int, choices=range(4), help=_("the winner's side"))
    judge.add_argument("--tile", help=_("the winning tile, e.g. 5m, E, C"))
    judge.add_argument("--discarder", type=int, choices=range(4), help=_("the discarder's side (none: self-drawn)"))
    judge.add_argument("--melds", metavar="SETS",
                       help=_("the winner's exposed sets, e.g. 'c123p p5m@2 k7s@3 a9p K9s': c chow, p pung, k kong on "
                              "a discard, a pung made a kong (加杠), K concealed kong; @SIDE the side that fed it "
                              "(default: the one to the left)"))
    judge.add_argument("--seat-melds", action="append", default=[], metavar="SIDE=SETS", type=_seat_melds,
                       help=_("another side's exposed sets, as --melds (repeatable): who opened, who fed what, kongs"))
    judge.add_argument("--open", metavar="SIDES", type=_sides, nargs="?", const=[],
                       help=_("sides that had opened when their sets are not given, e.g. 1,3; 'none' (or --open "
                              "alone): nobody had, every other side was closed (辽宁 / 锦州 need it or --seat-melds)"))
    judge.add_argument("--kong-win", action="store_true",
                       help=_("self-drawn on a kong replacement (杠上开花); on a discard: robbing a kong (抢杠)"))
    judge.add_argument("--last-tile", action="store_true", help=_("the wall's last tile (妙手回春 / 海底捞月)"))
    judge.add_argument("--kong-discard", action="store_true",
                       help=_("won on the discard made right after a kong (杠流泪)"))
    judge.add_argument("--followed", action="store_true",
                       help=_("the other three followed the dealer's first discard (跟庄)"))
    judge.add_argument("--liable", type=int, choices=range(4),
                       help=_("the side that alone pays (包付, found at the table)"))
    judge.add_argument("--hand-record", type=Path, metavar="FILE",
                       help=_("judge a whole hand's record again (JSON: the answer of 'mjtable diag hand N --json', or "
                              "its 'record'); nothing is written"))
    judge.add_argument("--check-pad", action="store_true",
                       help=_("with --hand-record: the winner's pad must show the tiles the record declares"))
    judge.add_argument("--record", action="store_true", help=_("write the verdict to the scoreboard for this hand"))
    judge.add_argument("--more", action="store_true",
                       help=_("with --record: another winner on this discard follows (一炮多响): judged now, paid "
                              "with the last one (without --more), all in the order the discarder pays (下家 first)"))
    judge.add_argument("--lay", metavar="TILES",
                       help=_("with --sim: lay these tiles on the pad first, e.g. 123m456p789s123sEE"))


def _referee_tools(controller_tool) -> None:
    penalty = controller_tool("penalty", _("a referee's penalty on the hand in play, paid now (e.g. early_draw)"))
    penalty.add_argument("side", type=int, choices=range(4), help=_("the offender's side"))
    penalty.add_argument("kind",
                         help=_("the penalty's kind (the rule set's [penalties], e.g. wrong_claim, early_draw)"))
    penalty.add_argument("--to", type=int, choices=range(4), help=_("all of it to this harmed side (default: to each "
                                                                    "other side)"))
    kong_tool = controller_tool("kong", _("a kong on the hand in play when it is made, its money paid now (a later "
                                          "judge naming it again does not take it twice)"))
    kong_tool.add_argument("side", type=int, choices=range(4), help=_("the side that made the kong"))
    kong_tool.add_argument("tile", help=_("the kong's tile, e.g. 7s"))
    kong_tool.add_argument("--from", dest="from_side", type=int, choices=range(4), metavar="SIDE",
                           help=_("on this side's discard (明杠); with --added: who fed the pung, when the hand's "
                                  "record does not have it"))
    kong_tool.add_argument("--added", action="store_true", help=_("a drawn tile added to an exposed pung (加杠)"))
    kong_tool.add_argument("--concealed", action="store_true", help=_("four drawn tiles (暗杠)"))
    drawn = controller_tool("drawn", _("the live wall ran out with no win (黄庄): its money where the rule set has "
                                       "it, and the hand's result (the dealer rotation follows)"))
    drawn.add_argument("--yes", action="store_true",
                       help=_("it has: end the hand in play as drawn (needed: the hand cannot be taken back)"))
    drawn.add_argument("--show", action="append", default=[], metavar="SIDE=TILES", type=_side_tiles,
                       help=_("四川: a side still in shows its standing tiles, e.g. 2=123m456m789m1234p (repeatable; "
                              "查花猪 / 查大叫 need every side still in whose tiles the record does not know)"))
    void_tool = controller_tool("void", _("四川's 定缺: a side's void suit on the hand in play, told once, before its "
                                          "first discard"))
    void_tool.add_argument("side", type=int, choices=range(4), help=_("the side"))
    void_tool.add_argument("suit", choices=("m", "p", "s"), help=_("its void suit: m 万, p 筒, s 条"))
    hand_tool = controller_tool("hand", _("a hand's record and its money by reason (default: the hand in play, else "
                                          "the last scored); --json gives the record judge --hand-record reads"))
    hand_tool.add_argument("hand", nargs="?", type=count(1, 10**9), help=_("the hand's number"))


def _staff_tools(controller_tool) -> None:
    session = controller_tool("session", _("the table session (开台): open N minutes, close, status"))
    session.add_argument("action", choices=("open", "close", "status"), nargs="?", default="status")
    session.add_argument("minutes", nargs="?", type=count(1, 24 * 60),
                         help=_("with open: how long the table is open, in minutes (again while open: from now)"))
    players = controller_tool("players", _("the names at the seats: E=NAME S=NAME W=NAME N=NAME, --clear, or none: "
                                           "show them"))
    players.add_argument("names", nargs="*", metavar="SEAT=NAME", type=_seat_name)
    players.add_argument("--clear", action="store_true", help=_("no names (the seats show 东 南 西 北)"))
    game = controller_tool("game", _("start a game now (between hands) with a rule set of the table's tile set and "
                                     "chips, or end the game in play"))
    game.add_argument("action", choices=("start", "end"))
    game.add_argument("--rules", dest="game_rules", help=_("the rule set of the new game (default: the one played)"))
    game.add_argument("--chips", type=count(1, 10_000_000), help=_("each side's chips at the start"))
    log_tool = controller_tool("log", _("the service's recent log, by level and text; --follow: then new lines"))
    log_tool.add_argument("--level", choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), default="INFO")
    log_tool.add_argument("--grep", dest="text", default="", help=_("only lines containing this text"))
    log_tool.add_argument("--lines", dest="log_lines", type=count(1, 500), default=100, help=_("at most this many"))
    log_tool.add_argument("--follow", dest="log_follow", action="store_true",
                          help=_("keep asking for new lines (Ctrl-C ends)"))
    bundle = controller_tool("bundle", _("write a support ticket's archive: config (secrets redacted), recent log, "
                                         "fault history, versions, the database's integrity check"))
    bundle.add_argument("--out", type=Path, required=True, metavar="FILE", help=_("the archive to write (.tar.gz)"))


def _seat_name(text: str) -> tuple[str, str]:
    seat, sep, name = text.partition("=")
    if not sep or seat.upper() not in ("E", "S", "W", "N") or not name:
        raise argparse.ArgumentTypeError(_("%(text)r: SEAT=NAME, SEAT one of E S W N") % {"text": text})
    return seat.upper(), name


def _service_tools(controller_tool) -> None:
    test = controller_tool("test", _("a service test: disk, stackers, lifts, center, dice (service mode only)"))
    test.add_argument("name", choices=GROUP_TESTS)
    jog = controller_tool("jog", _("move one mechanism once: a cam or wall-lift turn, the centre to a stop, "
                                   "the disk for a while, a dice throw (service mode only)"))
    jog.add_argument("mechanism", help=_("stacker0..3, wall_lift0..3, center_lift, turntable, dice"))
    jog.add_argument("--seconds", type=seconds, help=_("turntable: run this long (default %(seconds)s)")
                     % {"seconds": f"{DISK_JOG_S:g}"})
    jog.add_argument("--to", choices=("up", "down"), help=_("center_lift: the stop (default: the other one)"))
    learn = controller_tool("learn", _("learn the nominal times of every cam and lift anew (service mode only)"), 600.0)
    learn.add_argument("--runs", type=count(1, LEARN_RUNS_MAX), default=LEARN_RUNS,
                       help=_("moves per mechanism (default %(runs)s)") % {"runs": LEARN_RUNS})
    burn = controller_tool("burn-in", _("repeat every motor test, counting slow moves (service mode only)"), 3600.0)
    burn.add_argument("--cycles", type=count(1, BURN_IN_CYCLES_MAX), default=BURN_IN_CYCLES,
                      help=_("cycles (default %(cycles)s)") % {"cycles": BURN_IN_CYCLES})


def _enroll_tool(diag) -> None:
    enroll = diag.add_parser("enroll", help=_("read a set's tags in canonical order and write its registry file"))
    enroll.add_argument("--set", dest="set_id", required=True, help=_("set letter (A, B)"))
    enroll.add_argument("--antenna", type=int, choices=range(ANTENNAS), required=True)
    enroll.add_argument("--tiles", type=int, choices=(144, 136, 112, 108), help=_("set size (default: the table's)"))
    enroll.add_argument("--out", type=Path, help=_("registry file to write (default: the table's file for the set)"))
    enroll.add_argument("--force", action="store_true", help=_("replace an existing registry file"))
    enroll.add_argument("--tile-timeout-s", type=seconds, default=120.0,
                        help=_("give up after this long without a tile"))
    enroll.set_defaults(func=_enroll)


def _reader_tool(action: str) -> Callable[[argparse.Namespace], int]:
    """A reader tool: through the running service when its socket is there (it owns the serial port),
    else straight to the board (``--port``, the table's reader URL, or ``--sim``)."""
    def tool(args: argparse.Namespace) -> int:
        request: dict = {"cmd": "reader", "action": action}
        if action == "inventory":
            request["antenna"] = args.antenna
        socket = args.socket or Path(DEFAULT_SOCKET)
        if not args.sim and not args.port and not args.direct and socket.exists():
            from firmware.diagnostics.socket.protocol import ask
            try:
                answer, where = ask(socket, request), _("reader of the running table")
            except OSError as exc:
                raise TableError(f"{socket}: {exc}") from None
            if action == "counters":
                print(_("(the running controller's counters since it started)"))
        else:
            from firmware.cli.diag_reader import ask_board
            answer, where = ask_board(args, request)
        from firmware.diagnostics.reader_answers import reader_text
        print("\n".join(reader_text(answer, where, words)))
        return 0 if answer.get("ok") else 1
    return tool


_ping, _antennas, _inventory, _counters = (_reader_tool(a) for a in ("ping", "antennas", "inventory", "counters"))


def _enroll(args: argparse.Namespace) -> int:
    from firmware.cli.diag_reader import enroll
    return enroll(args)


def _request(args: argparse.Namespace) -> dict:
    request: dict = {"cmd": args.command_name}
    if args.command_name == "sensors" and getattr(args, "watch", None):
        request = {"cmd": "watch", "seconds": args.watch}
        args.timeout_s = max(args.timeout_s, args.watch + 30.0)
    if args.command_name == "status" and getattr(args, "component", None):
        request["components"] = args.component
    for key in ("name", "mechanism", "seconds", "to", "runs", "cycles", "side", "tile", "discarder", "record", "melds",
                "reset", "kind", "open", "liable", "followed", "check_pad", "hand", "more", "suit"):
        if getattr(args, key, None) is not None:
            request[key] = getattr(args, key)
    if args.command_name == "judge":
        _judge_request(args, request)
    if args.command_name == "drawn" and not args.yes:
        raise ValueError(_("drawn ends the hand in play as drawn (黄庄) and pays its money; it cannot be taken back: "
                           "when the live wall has run out with no win, run mjtable diag drawn --yes"))
    if args.command_name == "drawn" and args.show:
        request["show"] = dict(args.show)
    if args.command_name in ("session", "players", "game", "log", "bundle"):
        return _staff_request(args)
    if args.command_name == "kong":
        if not (args.from_side is not None or args.added or args.concealed):
            raise ValueError(_("kong: say which: --from SIDE (on that side's discard), --added (加杠) or --concealed "
                               "(暗杠)"))
        request.update({"added": args.added, "concealed": args.concealed},
                       **({"from": args.from_side} if args.from_side is not None else {}))
    return request


def _staff_request(args: argparse.Namespace) -> dict:
    name = args.command_name
    if name == "session":
        if args.action == "open" and args.minutes is None:
            raise ValueError(_("session open needs the minutes, e.g. mjtable diag session open 60"))
        if args.action != "open" and args.minutes is not None:
            raise ValueError(_("session %(action)s takes no minutes") % {"action": args.action})
        return {"cmd": "session", "action": args.action, **({"minutes": args.minutes} if args.minutes else {})}
    if name == "players":
        if args.clear:
            if args.names:
                raise ValueError(_("players: names or --clear, not both"))
            return {"cmd": "players", "players": None}
        if not args.names:
            return {"cmd": "players"}
        names = dict(args.names)
        if len(names) != 4:
            raise ValueError(_("players: name all four seats, e.g. E=Ana S=Bo W=Chen N=Dong"))
        return {"cmd": "players", "players": names}
    if name == "game":
        return {"cmd": "game", "action": args.action, **({"rules": args.game_rules} if args.game_rules else {}),
                **({"chips": args.chips} if args.chips is not None else {})}
    if name == "log":
        return {"cmd": "log", "level": args.level, "text": args.text, "limit": args.log_lines}
    return {"cmd": "bundle"}


def _judge_request(args: argparse.Namespace, request: dict) -> None:
    if args.more and not args.record:
        raise ValueError(_("--more goes with --record (another winner on this discard follows the one recorded)"))
    if getattr(args, "lay", None) and not args.sim:
        raise ValueError(_("--lay lays tiles on a simulated table's pad: it needs --sim (on a table, the player "
                           "lays the hand on the pad)"))
    if args.hand_record is not None:
        try:
            data = json.loads(args.hand_record.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(_("--hand-record %(file)s: cannot read a JSON hand record: %(problem)s")
                             % {"file": args.hand_record, "problem": exc}) from None
        # (the answer of 'mjtable diag hand N --json' holds the record under "record")
        request["hand_record"] = data["record"] if isinstance(data, dict) and "record" in data and "ok" in data \
            else data
        return
    if args.side is None or args.tile is None:
        raise ValueError(_("judge needs --side and --tile (or --hand-record FILE)"))
    if args.seat_melds:
        request["seat_melds"] = dict(args.seat_melds)
    request["flags"] = [name for name, on in (("kong_win", args.kong_win), ("last_tile", args.last_tile),
                                              ("kong_discard", args.kong_discard)) if on]


def _side_tiles(text: str) -> tuple[str, str]:
    side, sep, tiles = text.partition("=")
    if not sep or side not in ("0", "1", "2", "3") or not tiles:
        raise argparse.ArgumentTypeError(_("%(text)r: SIDE=TILES, e.g. 2=123m456m789m1234p") % {"text": text})
    return side, tiles


def _seat_melds(text: str) -> tuple[str, str]:
    side, sep, sets = text.partition("=")
    if not sep or side not in ("0", "1", "2", "3"):
        raise argparse.ArgumentTypeError(_("%(text)r: SIDE=SETS, e.g. 2='p5m@0 c123p'") % {"text": text})
    return side, sets


def _sides(text: str) -> list[int]:
    """Sides 0..3 separated by commas; ``none``: no side."""
    if text.strip().lower() == "none":
        return []
    sides = [s.strip() for s in text.split(",") if s.strip()]
    if not sides or any(s not in ("0", "1", "2", "3") for s in sides):
        raise argparse.ArgumentTypeError(_("%(text)r: sides 0..3 separated by commas, e.g. 1,3 (or none)")
                                         % {"text": text})
    return sorted({int(s) for s in sides})


def _controller_command(args: argparse.Namespace) -> int:
    """Ask the running controller (its socket), this process's own controller (--direct), or a
    simulated table in this process (--sim)."""

    from firmware.diagnostics.render import render

    request = _request(args)
    if getattr(args, "follow", False):
        return diag_ask.follow(args, request)
    if getattr(args, "lines", None) is not None:
        raise ValueError(_("--lines goes with --follow"))
    if request["cmd"] == "bundle" and (args.sim or args.direct):
        request["integrity"] = True             # (the database is this process's: checked before it closes)
    if getattr(args, "log_follow", False):
        return diag_ask.follow_log(args, request)
    answer = diag_ask.ask(args, request)
    if request["cmd"] == "bundle":
        return diag_ask.write_bundle(args, answer)
    print(json.dumps(answer, indent=2, ensure_ascii=False, default=str) if args.json else render(answer, words))
    if request.get("record") and answer.get("ok") and not answer.get("recorded"):
        if not args.json:           # (the answer says why; as text, say it: the verdict went nowhere)
            print(words.refusal(answer) or answer.get("error") or _("not recorded"))
        return 1
    return 0 if answer.get("ok") else 1
