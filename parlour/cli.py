"""``mjtable tourney``: run a tournament from the command line (new, plan, seat, result, confirm, standings ...).

Registered into ``mjtable`` through the ``mjtable.commands`` entry point, so
the table's firmware never imports the hall's side.  Every action opens the
database named by ``--db`` (a file path or sqlite:///PATH: SQLite;
postgresql://USER@HOST/DBNAME: PostgreSQL), does one thing through
:mod:`parlour.desk`, prints JSON with ``--json`` or a short text, and exits 2
with one line on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

from firmware.cli.words import N_, _, ngettext
from parlour import serve_cmd

DB_HELP = N_("the tournament database: a file (SQLite) or postgresql://USER@HOST/DBNAME")


def register(sub: Any) -> None:
    """Add ``tourney`` and its actions to ``mjtable``'s subcommands."""
    parser = sub.add_parser("tourney", help=_("a tournament across the hall's tables: seats, results, standings"),
                            description=_("A tournament across the hall's tables (see the README's 'A tournament')."))
    actions = parser.add_subparsers(dest="tourney_action", metavar="ACTION", required=True)

    def action(name: str, help_text: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        p = actions.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--db", required=True, help=_(DB_HELP))
        p.add_argument("--event", help=_("the event's name (needed when the database holds several)"))
        p.add_argument("--json", action="store_true", help=_("print JSON"))
        p.set_defaults(func=_run(func))
        return p

    new = action("new", _("a new event: its format, its players and every round seated"), _new)
    new.add_argument("--name", required=True, help=_("the event's name (letters, digits, '_' or '-')"))
    new.add_argument("--rules", required=True, choices=("mcr", "competition"), help=_("the rule set played"))
    new.add_argument("--players", required=True, type=Path, help=_("players.csv (header name,team)"))
    new.add_argument("--teams", action="store_true",
                     help=_("a team event: team-mates kept apart where the teams' sizes allow (team_clashes says)"))
    new.add_argument("--rounds", required=True, type=int, help=_("rounds (a table's game each)"))
    new.add_argument("--hands-per-round", required=True, type=int, help=_("hands of each table's game"))
    new.add_argument("--round-minutes", type=int, help=_("a round's time limit (the table ends it: time_up)"))
    new.add_argument("--standard-points", type=int, default=8,
                     help=_("竞技麻将: the 标准分 of round 1, one more each round (default 8)"))
    new.add_argument("--advance", type=int, default=1, choices=(1, 2), help=_("竞技麻将: places advancing per table"))
    new.add_argument("--alternates", type=int, default=0,
                     help=_("竞技麻将: best next places across the tables advancing as 替补 each round (default 0)"))
    new.add_argument("--seed", type=int, default=0, help=_("the seating's random seed"))
    new.add_argument("--plan-seconds", type=_seconds, default=20.0, help=_("time the seating search may take"))

    action("plan", _("every round's seating and its certificate (repeated pairs, lower bound, optimal)"), _plan)
    seat = action("seat", _("a round's tables and who sits where"), _seat)
    seat.add_argument("--round", type=int, required=True)

    result = action("result", _("a table's round typed in (halls with tables not on the fleet)"), _result)
    result.add_argument("--table", required=True)
    result.add_argument("--round", type=int, required=True)
    result.add_argument("file",
                        help=_("JSON {\"E\": n, \"S\": n, \"W\": n, \"N\": n}: net points by seat; - reads stdin"))
    result.add_argument("--unbalanced", action="store_true", help=_("accept scores that do not sum to 0"))

    conf = action("confirm", _("a referee confirms a table's round, or corrects it"), _confirm)
    conf.add_argument("--table", required=True)
    conf.add_argument("--round", type=int, required=True)
    conf.add_argument("--referee", required=True, help=_("who confirms (kept with the fact)"))
    conf.add_argument("--correct", metavar="FILE", help=_("the corrected score by seat (JSON as for result; - stdin)"))
    conf.add_argument("--note", default="", help=_("why (kept with the fact)"))

    pen = action("penalty", _("points off a player's score in a round"), _penalty)
    pen.add_argument("--round", type=int, required=True)
    pen.add_argument("--player", required=True)
    pen.add_argument("--points", type=int, required=True)
    pen.add_argument("--reason", required=True)
    pen.add_argument("--referee", required=True)

    appeal = action("appeal", _("a player's appeal about a table's round (kept for the referee)"), _appeal)
    appeal.add_argument("--round", type=int, required=True)
    appeal.add_argument("--table", required=True)
    appeal.add_argument("--by", required=True)
    appeal.add_argument("text")

    wd = action("withdraw", _("a player leaves (a replacement may take the place); later rounds seated again"),
                _withdraw)
    wd.add_argument("player")
    wd.add_argument("--replacement", help=_("who takes the place (same team)"))
    wd.add_argument("--seed", type=int, default=0)
    wd.add_argument("--plan-seconds", type=_seconds, default=20.0)

    action("standings", _("players by points then score, ties sharing a rank (--teams: the teams)"), _standings) \
        .add_argument("--teams", action="store_true", help=_("the team ranking"))
    action("progress", _("per round: tables, results in, confirmed, waiting"), _progress)
    export = action("export", _("CSV: every player's result per round (or --standings)"), _export)
    export.add_argument("--csv", action="store_true", help=_("CSV on stdout (the default; --json for JSON rows)"))
    export.add_argument("--standings", action="store_true", help=_("the standings instead of the results"))
    serve_cmd.register(action, _serve)


def _run(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            from parlour.store.facts_store import TourneyStore
        except ImportError as exc:
            raise ValueError(_("mjtable tourney needs the hall's packages (%(package)s is missing): pip install "
                               "'mjtable[parlour]'") % {"package": exc.name}) from None
        args.store = TourneyStore(args.db)
        try:
            return func(args)
        finally:
            args.store.close()
    return run


def _clashes(cert: dict) -> str:
    n = cert.get("team_clashes") or 0
    return ngettext("; WARNING: team-mates share a table %(n)s time (a team has more players than there are "
                    "tables, or the rounds leave no other way)",
                    "; WARNING: team-mates share a table %(n)s times (a team has more players than there are "
                    "tables, or the rounds leave no other way)", n) % {"n": n} if n else ""


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("%(text)r is not a number of seconds") % {"text": text}) from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(_("%(text)s: from above 0 to 3600 seconds") % {"text": text})
    return value


def _deadline(seconds: float) -> Callable[[], bool]:
    end = time.monotonic() + max(0.1, seconds)
    return lambda: time.monotonic() >= end


def _event(args: argparse.Namespace) -> int:
    return args.store.event_id(args.event)


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=1) if args.json else text)


def _read_json(name: str) -> Any:
    raw = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(_("%(file)s: not JSON (%(problem)s, line %(line)s)")
                         % {"file": _("stdin") if name == "-" else name, "problem": exc.msg, "line": exc.lineno}) \
            from None


def _new(args: argparse.Namespace) -> int:
    from parlour.core.event import EventFormat
    from parlour.desk import certificate_json, create, read_players
    fmt = EventFormat(args.name, args.rules, args.rounds, args.hands_per_round, teams=args.teams,
                      round_minutes=args.round_minutes, standard_points=args.standard_points,
                      advance_per_table=args.advance, alternates=args.alternates)
    try:
        text = args.players.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(_("%(file)s: not UTF-8 text (byte %(byte)s); save it as UTF-8 CSV")
                         % {"file": args.players, "byte": exc.start}) from None
    players = read_players(text, args.teams)
    _event_id, plan = create(args.store, fmt, players, args.seed, _deadline(args.plan_seconds))
    cert = certificate_json(plan.certificate)
    _print(args, {"event": fmt.name, "players": len(players), "rounds": fmt.rounds, "certificate": cert},
           _("%(event)s: %(players)s players, %(rounds)s rounds seated (%(method)s): %(repeated)s repeated meetings, "
             "lower bound %(bound)s") % {"event": fmt.name, "players": len(players), "rounds": fmt.rounds,
                                         "method": cert["method"], "repeated": cert["pairs_repeated"],
                                         "bound": cert["lower_bound"]}
           + (_(", optimal") if cert["optimal"] else "") + _clashes(cert))
    return 0


def _plan(args: argparse.Namespace) -> int:
    from parlour.desk import plan_json
    data = plan_json(args.store.state(_event(args)))
    lines = [_("round %(round)s: ") % {"round": r["round"]}
             + "; ".join(f"{t['table']} " + " ".join(f"{s}={n}" for s, n in t['seats'].items()) for t in r["tables"])
             + (_("; bye %(players)s") % {"players": ", ".join(r["bye"])} if r["bye"] else "") for r in data["rounds"]]
    cert = data["certificate"]
    lines.append(_("repeated meetings %(repeated)s, lower bound %(bound)s, %(optimal)s")
                 % {"repeated": cert["pairs_repeated"], "bound": cert["lower_bound"],
                    "optimal": _("optimal") if cert["optimal"] else _("not proven optimal")} + _clashes(cert))
    _print(args, data, "\n".join(lines))
    return 0


def _seat(args: argparse.Namespace) -> int:
    from parlour.desk import seat_json
    data = seat_json(args.store.state(_event(args)), args.round)
    _print(args, data, "\n".join(f"{t['table']}: " + "  ".join(f"{s} {n}" for s, n in t["seats"].items())
                                 for t in data["tables"])
           + ("\n" + _("bye: %(players)s") % {"players": ", ".join(data["bye"])} if data["bye"] else ""))
    return 0


def _result(args: argparse.Namespace) -> int:
    from parlour.desk import enter_result
    enter_result(args.store, _event(args), args.round, args.table, _read_json(args.file), source="hand",
                 unbalanced=args.unbalanced)
    _print(args, {"round": args.round, "table": args.table, "stored": True},
           _("round %(round)s table %(table)s: result stored") % {"round": args.round, "table": args.table})
    return 0


def _confirm(args: argparse.Namespace) -> int:
    from parlour.desk import confirm
    correction = _read_json(args.correct) if args.correct else None
    confirm(args.store, _event(args), args.round, args.table, args.referee, correction, args.note)
    what = "corrected" if correction is not None else "confirmed"
    _print(args, {"round": args.round, "table": args.table, what: True},
           (_("round %(round)s table %(table)s: corrected by %(referee)s") if correction is not None
            else _("round %(round)s table %(table)s: confirmed by %(referee)s"))
           % {"round": args.round, "table": args.table, "referee": args.referee})
    return 0


def _penalty(args: argparse.Namespace) -> int:
    from parlour.desk import penalty
    penalty(args.store, _event(args), args.round, args.player, args.points, args.reason, args.referee)
    _print(args, {"stored": True}, _("%(player)s: %(points)s off round %(round)s (%(reason)s)")
           % {"player": args.player, "points": args.points, "round": args.round, "reason": args.reason})
    return 0


def _appeal(args: argparse.Namespace) -> int:
    from parlour.desk import appeal
    appeal(args.store, _event(args), args.round, args.table, args.by, args.text)
    _print(args, {"stored": True}, _("appeal about round %(round)s table %(table)s stored")
           % {"round": args.round, "table": args.table})
    return 0


def _withdraw(args: argparse.Namespace) -> int:
    from parlour.desk import certificate_json, withdraw
    plan = withdraw(args.store, _event(args), args.player, args.replacement, args.seed, _deadline(args.plan_seconds))
    cert = certificate_json(plan.certificate)
    _print(args, {"withdrawn": args.player, "replacement": args.replacement, "certificate": cert},
           (_("%(player)s withdrawn for %(replacement)s") if args.replacement else _("%(player)s withdrawn"))
           % {"player": args.player, "replacement": args.replacement}
           + _("; later rounds seated again: %(repeated)s repeated meetings (lower bound %(bound)s)")
           % {"repeated": cert["pairs_repeated"], "bound": cert["lower_bound"]} + _clashes(cert))
    return 0


def _standings(args: argparse.Namespace) -> int:
    from parlour.desk import standings_json, teams_json
    state = args.store.state(_event(args))
    if args.teams:
        data = teams_json(state)
        text = _head(_("team")) + "\n".join(
            f"{r['rank']:>4}  {r['team']:<20} {r['table_points']:>7}  {r['score']:>7}" for r in data)
    else:
        data = standings_json(state)
        withdrawn = _("  (withdrawn)")
        text = _head(_("name"), (_("games"), _("byes"))) + "\n".join(
            f"{r['rank']:>4}  {r['name']:<20} {r['table_points']:>7}  {r['score']:>7}  {r['rounds']:>5}  {r['byes']:>5}"
            + (withdrawn if r["withdrawn"] else "") for r in data)
    _print(args, data, text)
    return 0


def _head(who: str, more: tuple[str, ...] = ()) -> str:
    """The standings' heading line (rank, who, points, score and ``more``: columns of 5), its columns as wide as
    the words need."""
    from unicodedata import east_asian_width

    def pad(text: str, width: int, left: bool = False) -> str:
        room = " " * max(0, width - sum(2 if east_asian_width(c) in "WF" else 1 for c in text))
        return text + room if left else room + text
    rank, points, score = _("rank"), _("points"), _("score")
    return (f"{pad(rank, 4)}  {pad(who, 20, left=True)} {pad(points, 7)}  {pad(score, 7)}"
            + "".join(f"  {pad(word, 5)}" for word in more) + "\n")


def _progress(args: argparse.Namespace) -> int:
    from parlour.desk import progress_json
    data = progress_json(args.store.state(_event(args)))
    _print(args, data, "\n".join(_("round %(round)s: %(results)s/%(tables)s results, %(confirmed)s confirmed") % r
                                 + (_(", waiting for %(tables)s") % {"tables": ", ".join(r["waiting"])}
                                    if r["waiting"] else "") for r in data))
    return 0


def _export(args: argparse.Namespace) -> int:
    from parlour.desk import export_csv, export_rows, standings_json
    state = args.store.state(_event(args))
    if args.json and args.csv:
        raise ValueError(_("export: --csv or --json, not both"))
    if args.json:
        rows = standings_json(state) if args.standings else list(export_rows(state))
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    sys.stdout.write(export_csv(state, "standings" if args.standings else "results"))
    return 0


def _serve(args: argparse.Namespace) -> int:
    return serve_cmd.serve(args)
