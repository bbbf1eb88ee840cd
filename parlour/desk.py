"""The tournament desk: every action an organiser or referee takes, checked against the facts and stored as facts.

One function per action (create an event, plan its seating again, withdraw
or replace a player, open a round, enter or correct a table's result,
confirm it, a penalty, an appeal) and the views derived from the facts (the
plan with its certificate, a round's seats, standings, the CSV export).  The
CLI (:mod:`parlour.cli`) and the hall service (:mod:`parlour.service`) call
these; neither writes a fact any other way.
"""

from __future__ import annotations

import csv
import io
import logging
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from parlour.core.event import SEATS, EventFormat, FormatError, Seat, check_player_name
from parlour.core.facts import FactKind, TournamentState, score_by_seat
from parlour.core.seating import Plan, RoundSeating, TableSeats, certify, plan_seating
from parlour.core.standings import number, round_points, standings, team_standings
from parlour.core.words import worded
from parlour.store.facts_store import TourneyStore

log = logging.getLogger(__name__)

Deadline = Callable[[], bool]


@dataclass(frozen=True)
class Player:
    name: str
    team: str | None = None


def read_players(text: str, teams: bool) -> list[Player]:
    """players.csv (header ``name,team``; team may be empty unless the event has teams); FormatError names the line."""
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "name" not in [f.strip() for f in reader.fieldnames]:
        raise worded(FormatError, "players file: the first line must be the header name,team")
    players: list[Player] = []
    seen: set[str] = set()
    for line_no, row in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() if isinstance(v, str) else "" for k, v in row.items()
               if k is not None}
        if not any(row.values()):
            raise worded(FormatError, "players file line %(line)s: no name (remove the empty line, or give the name)",
                         line=line_no)
        try:
            name = check_player_name(row.get("name", ""))
        except FormatError as exc:
            raise worded(FormatError, "players file line %(line)s: %(problem)s", line=line_no, problem=exc) from None
        if name in seen:
            raise worded(FormatError, "players file line %(line)s: %(name)r is there twice", line=line_no, name=name)
        team = row.get("team") or None
        if teams and not team:
            raise worded(FormatError, "players file line %(line)s: %(name)r has no team (the event has teams)",
                         line=line_no, name=name)
        seen.add(name)
        players.append(Player(name, team))
    if len(players) < 4:
        raise worded(FormatError, "players file: %(players)s players; a table needs 4", players=len(players))
    return players


def create(store: TourneyStore, fmt: EventFormat, players: list[Player], seed: int = 0,
           deadline: Deadline | None = None) -> tuple[int, Plan]:
    """A new event: its format, its players, and every round seated (one transaction for the plan)."""
    if fmt.teams and any(not p.team for p in players):
        raise worded(FormatError, "every player needs a team in a team event")
    event_id = store.create_event(fmt)
    store.append_many(event_id, [(FactKind.ENROL, {"name": p.name, "team": p.team}) for p in players])
    plan = replan(store, event_id, seed, deadline)
    return event_id, plan


def replan(store: TourneyStore, event_id: int, seed: int = 0, deadline: Deadline | None = None) -> Plan:
    """Seat again every round not yet opened, keeping the opened ones as they were played."""
    state = store.state(event_id)
    played = [seating_of(state, r) for r in state.played_rounds()]
    teams = {name: team for name, team in state.teams.items() if team} if state.fmt.teams else None
    plan = plan_seating(state.active, state.fmt.rounds, teams=teams, played=played, seed=seed, deadline=deadline)
    store.append_many(event_id, [(FactKind.SEATING, seating_body(r, plan)) for r in plan.rounds
                                 if r.round not in state.opened])
    log.info("event %s seated: %s", state.fmt.name, plan.certificate)
    return plan


def withdraw(store: TourneyStore, event_id: int, name: str, replacement: str | None = None,
             seed: int = 0, deadline: Deadline | None = None) -> Plan:
    """A player leaves before the next round (a replacement, if any, takes the team's place); the rest re-planned."""
    state = store.state(event_id)
    if name not in state.active:
        raise worded(FormatError, "%(name)r is not playing in %(event)s", name=name, event=state.fmt.name)
    next_round = max(state.opened, default=0) + 1
    if next_round > state.fmt.rounds:
        raise worded(FormatError, "every round has been opened: there is nothing left to re-plan")
    items: list[tuple[FactKind, Mapping[str, Any]]] = [(FactKind.WITHDRAW, {"name": name, "from_round": next_round})]
    if replacement is not None:
        replacement = check_player_name(replacement)
        if replacement in state.teams and replacement not in state.withdrawn:
            raise worded(FormatError, "%(name)r is playing already", name=replacement)
        items.append((FactKind.ENROL, {"name": replacement, "team": state.teams[name], "replaces": name}))
    store.append_many(event_id, items)
    if len(store.state(event_id).active) < 4:
        raise worded(FormatError, "fewer than 4 players are left")
    return replan(store, event_id, seed, deadline)


def open_round(store: TourneyStore, event_id: int, round_no: int, ends_at: float | None) -> bool:
    """Mark the round as being played (its seating then stands); False if it was open already."""
    state = store.state(event_id)
    if round_no not in state.seatings:
        raise worded(FormatError, "round %(round)s is not seated (the event has %(rounds)s)", round=round_no,
                     rounds=state.fmt.rounds)
    return store.append(event_id, FactKind.ROUND_OPEN, {"round": round_no, "ends_at": ends_at},
                        dedup=f"open:{round_no}")


def enter_result(store: TourneyStore, event_id: int, round_no: int, table: str, score: Mapping[str, Any], *,
                 source: str = "hand", hands: int | None = None, reason: str | None = None,
                 unbalanced: bool = False) -> bool:
    """A table's round: the score by seat.  One per table and round (the first stands; a referee corrects it).

    Typed in (``source`` "hand") the scores must sum to 0 unless ``unbalanced``
    (a typing slip is the usual reason they do not).  False: a result was
    there already (from the fleet or typed in) and nothing was stored.
    """
    state = store.state(event_id)
    told = state.table_round(round_no, table)
    checked = score_by_seat(score)
    if source == "hand":
        if told.score is not None:
            raise worded(FormatError, "round %(round)s table %(table)s has a result already (from %(source)s); a "
                         "referee corrects it: mjtable tourney confirm --round %(round)s --table %(table)s "
                         "--correct FILE", round=round_no, table=table, source=told.source)
        if sum(checked.values()) != 0 and not unbalanced:
            raise worded(FormatError, "the scores sum to %(sum)s, not 0: check them (--unbalanced if penalties "
                         "really make it so)", sum=sum(checked.values()))
    if round_no not in state.opened:
        if source != "hand":
            raise worded(FormatError, "round %(round)s is not open: a table's result for it is not taken",
                         round=round_no)
        open_round(store, event_id, round_no, None)        # typed in: the round was played, off the fleet
    body = {"round": round_no, "table": table, "score": {s.value: v for s, v in checked.items()},
            "hands": hands, "reason": reason, "source": source}
    return store.append(event_id, FactKind.RESULT, body, dedup=f"result:{round_no}:{table}")


def confirm(store: TourneyStore, event_id: int, round_no: int, table: str, referee: str,
            correction: Mapping[str, Any] | None = None, note: str = "") -> None:
    """A referee confirms a table's round as it stands, or corrects its score (which confirms the correction)."""
    state = store.state(event_id)
    told = state.table_round(round_no, table)
    referee = check_player_name(referee)
    if correction is not None:
        checked = score_by_seat(correction, "correction")
        store.append(event_id, FactKind.CORRECTION, {"round": round_no, "table": table, "referee": referee,
                                                     "score": {s.value: v for s, v in checked.items()},
                                                     "note": note})
        return
    if told.score is None:
        raise worded(FormatError, "round %(round)s table %(table)s has no result to confirm yet: correct it with "
                     "--correct FILE, or wait for the table", round=round_no, table=table)
    store.append(event_id, FactKind.CONFIRM, {"round": round_no, "table": table, "referee": referee, "note": note})


def penalty(store: TourneyStore, event_id: int, round_no: int, name: str, points: int, reason: str,
            referee: str) -> None:
    """Points off a player's score in a round (before its places are decided)."""
    state = store.state(event_id)
    if name not in state.teams:
        raise worded(FormatError, "%(name)r is not a player of %(event)s", name=name, event=state.fmt.name)
    if not 1 <= round_no <= state.fmt.rounds:
        raise worded(FormatError, "round %(round)s: the event has rounds 1 to %(rounds)s", round=round_no,
                     rounds=state.fmt.rounds)
    if isinstance(points, bool) or not isinstance(points, int) or not 0 < points <= 10**6:
        raise worded(FormatError, "penalty points %(points)r: a whole number above 0", points=points)
    store.append(event_id, FactKind.PENALTY, {"round": round_no, "name": name, "points": points,
                                              "reason": reason, "referee": check_player_name(referee)})


def appeal(store: TourneyStore, event_id: int, round_no: int, table: str, by: str, text: str) -> None:
    state = store.state(event_id)
    state.table_round(round_no, table)
    store.append(event_id, FactKind.APPEAL, {"round": round_no, "table": table, "by": check_player_name(by),
                                             "text": text[:2000]})


# ---- views


def seating_of(state: TournamentState, round_no: int) -> RoundSeating:
    body = state.seatings[round_no]
    return RoundSeating(round_no, tuple(TableSeats(t["table"], tuple(t["seats"][s.value] for s in SEATS))
                                        for t in body["tables"]), tuple(body.get("bye", ())))


def seating_body(seating: RoundSeating, plan: Plan) -> dict[str, Any]:
    return {"round": seating.round, "bye": list(seating.bye),
            "tables": [{"table": t.table, "seats": {s.value: n for s, n in zip(SEATS, t.seats)}}
                       for t in seating.tables],
            "certificate": certificate_json(plan.certificate)}


def certificate_json(cert: Any) -> dict[str, Any]:
    return {"pairs_repeated": cert.pairs_repeated, "lower_bound": cert.lower_bound, "optimal": cert.optimal,
            "method": cert.method, "team_clashes": cert.team_clashes}


def seat_json(state: TournamentState, round_no: int) -> dict[str, Any]:
    if round_no not in state.seatings:
        raise worded(FormatError, "round %(round)s is not seated (the event has rounds 1 to %(rounds)s)",
                     round=round_no, rounds=state.fmt.rounds)
    body = state.seatings[round_no]
    return {"round": round_no, "tables": [{"table": t["table"], "seats": {s.value: t["seats"][s.value] for s in SEATS}}
                                          for t in body["tables"]],
            "bye": list(body.get("bye", ()))}


def plan_json(state: TournamentState) -> dict[str, Any]:
    """Every round's seats and the certificate, recounted from the seats stored (not the planner's word)."""
    rounds = [seating_of(state, r) for r in sorted(state.seatings)]
    teams = {n: t for n, t in state.teams.items() if t} if state.fmt.teams else None
    return {"event": state.fmt.name, "rules": state.fmt.rules.value,
            "rounds": [seat_json(state, r.round) | {"opened": r.round in state.opened} for r in rounds],
            "certificate": certificate_json(certify(state.active, rounds, teams, fixed=len(state.played_rounds())))}


def standings_json(state: TournamentState) -> list[dict[str, Any]]:
    return [row.as_dict() for row in standings(state)]


def teams_json(state: TournamentState) -> list[dict[str, Any]]:
    return [row.as_dict() for row in team_standings(state)]


def progress_json(state: TournamentState) -> list[dict[str, Any]]:
    """Per round: its tables, which have a result, which are confirmed."""
    out = []
    for round_no in sorted(state.seatings):
        tables = [state.tables[(round_no, t["table"])] for t in state.seatings[round_no]["tables"]]
        out.append({"round": round_no, "opened": round_no in state.opened, "ends_at": state.opened.get(round_no),
                    "tables": len(tables), "results": sum(t.score is not None for t in tables),
                    "confirmed": sum(t.confirmed for t in tables),
                    "waiting": [t.table for t in tables if t.score is None] if round_no in state.opened else []})
    return out


EXPORT_FIELDS = ("round", "table", "seat", "name", "team", "score", "penalty", "points", "place", "advanced",
                 "source", "confirmed", "hands", "reason")


def export_rows(state: TournamentState) -> Iterable[dict[str, Any]]:
    """One row per player per table round with a result: ``score`` after the round's penalties (as places and
    points are), ``penalty`` what came off."""
    points = round_points(state)
    penalty: dict[tuple[int, str], int] = {}
    for item in state.penalties:
        key = (int(item["round"]), item["name"])
        penalty[key] = penalty.get(key, 0) + int(item["points"])
    for (round_no, table), told in sorted(state.tables.items()):
        if told.score is None:
            continue
        for seat in SEATS:
            name = told.seats[seat]
            taken = points.get(round_no, {}).get(name)
            yield {"round": round_no, "table": table, "seat": seat.value, "name": name,
                   "team": state.teams.get(name) or "",
                   "score": told.score[Seat(seat)] - penalty.get((round_no, name), 0),
                   "penalty": penalty.get((round_no, name), 0),
                   "points": number(taken.points) if taken else "", "place": taken.place if taken else "",
                   "advanced": int(taken.advanced) if taken else "", "source": told.source or "",
                   "confirmed": int(told.confirmed), "hands": told.hands if told.hands is not None else "",
                   "reason": told.reason or ""}


def export_csv(state: TournamentState, what: str = "results") -> str:
    out = io.StringIO()
    if what == "standings":
        writer = csv.DictWriter(out, fieldnames=("rank", "name", "team", "table_points", "score", "rounds", "byes",
                                                 "advanced", "withdrawn"), extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        for row in standings_json(state):
            writer.writerow(row | {"team": row["team"] or "", "withdrawn": int(row["withdrawn"])})
    else:
        writer = csv.DictWriter(out, fieldnames=EXPORT_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(export_rows(state))
    return out.getvalue()
