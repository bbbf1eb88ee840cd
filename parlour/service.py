"""The hall's tournament service: seats the tables for a round over the fleet, collects results, publishes standings.

For one event on one site.  Opening a round publishes, for each of the
round's tables, a signed **retained** assignment on the physical table's
assignment topic (the players by seat, the rule set, the hands, the time
limit); the table plays it and publishes its hands and, when the game ends,
the game's result with the assignment it belongs to.  The service takes
every event of the site (through the fleet's de-duplicating
:class:`~firmware.fleet.consumer.FleetConsumer`) and stores:

* each hand of an assigned game as a ``hand`` fact (de-duplicated on its
  ``msg_id`` in the database too, so a restart of the service, a table's
  power cut or a broker restart never counts one twice);
* each assigned game's end as the table's ``result`` for the round (net
  points by seat, the hands played, the reason: ``hands_done`` or
  ``time_up``), once per table and round.

An event is believed only for the table whose topic it came on (the
broker's ACL lets a table write only its own subtree): a table cannot report
another's round.  A gap in a table's ``seq`` asks that table to publish
again (a signed ``resend_since``).  After every new result the standings
are published retained on ``mj/v1/<site>/hall/tourney/<event>/standings``
for the hall's screens.  Nothing here reads a clock: ``wall_s`` is given.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from firmware.fleet.consumer import Change, FleetConsumer
from firmware.fleet.topics import PREFIX, TableTopics, check_id
from parlour import desk
from parlour.core.event import SEATS, FormatError
from parlour.core.facts import FactKind
from parlour.core.words import worded
from parlour.store.facts_store import TourneyStore

log = logging.getLogger(__name__)

ASSIGNMENT_TTL_S = 2 * 24 * 3600.0      # a retained assignment's signature lives two days (the table allows 7)
RESEND_EVERY_S = 10.0                   # a table's gap is asked for again at most this often

# (site, table, assignment data, issued_at, expires_at) -> the signed payload
AssignmentSigner = Callable[[str, str, dict[str, Any], float, float], bytes]
# (site, table, seq) -> a signed resend_since command
ResendSigner = Callable[[str, str, int, float], bytes]
# (topic, payload, retain, response topic or None): a command's answer comes back on its response topic
Publish = Callable[[str, bytes, bool, "str | None"], None]


def standings_topic(site: str, event: str) -> str:
    return f"{PREFIX}/{site}/hall/tourney/{event}/standings"


@dataclass
class ServiceCounters:
    hands: int = 0
    hands_repeated: int = 0
    results: int = 0
    results_repeated: int = 0
    foreign: int = 0              # events of another event, or an assignment of a table it did not come from
    resend_asked: int = 0
    standings_published: int = 0
    refusals: dict[str, int] = field(default_factory=dict)


class HallService:
    """Seats and collects one event's rounds on one site's tables.

    ``tables`` are the site's table ids in the order of the event's tables
    (T1 is the first, T2 the second ...): the hall says which physical
    table is which.
    """

    def __init__(self, store: TourneyStore, event_id: int, site: str, tables: list[str], *,
                 sign_assignment: AssignmentSigner, sign_resend: ResendSigner, publish: Publish,
                 wall_s: Callable[[], float], requester: str = "tourney") -> None:
        self.store, self.event_id, self.site = store, event_id, check_id(site, "site")
        self.fleet_ids = [check_id(t, "table id") for t in tables]
        if len(set(self.fleet_ids)) != len(self.fleet_ids):
            raise worded(FormatError, "--tables: a table is named twice")
        self.sign_assignment, self.sign_resend = sign_assignment, sign_resend
        self.publish, self.wall_s = publish, wall_s
        self.requester = check_id(requester, "requester")
        self.consumer = FleetConsumer(site)
        self.counters = ServiceCounters()
        state = store.state(event_id)
        self.event = state.fmt.name
        self.tag = state.tag                  # what the tables are told (the name and the event's key)
        self._asked: dict[str, float] = {}

    # ---- which table is which

    def fleet_table(self, table: str) -> str:
        """The site's table id of the event's table ``T<n>``; FormatError when the hall named too few."""
        number = int(table[1:]) if table[:1] == "T" and table[1:].isdigit() else 0
        if not 1 <= number <= len(self.fleet_ids):
            raise worded(FormatError, "the round needs table %(table)s but --tables names %(tables)s", table=table,
                         tables=len(self.fleet_ids))
        return self.fleet_ids[number - 1]

    def event_table(self, fleet_id: str) -> str | None:
        return f"T{self.fleet_ids.index(fleet_id) + 1}" if fleet_id in self.fleet_ids else None

    # ---- a round

    def open_round(self, round_no: int) -> list[str]:
        """Seat the round's tables (retained, signed); the round's seating then stands.  The assignments
        published (again, when the round was open: the same ids change nothing at the tables)."""
        state = self.store.state(self.event_id)
        seating = desk.seat_json(state, round_no)
        fmt = state.fmt
        now = self.wall_s()
        ends_at = state.opened.get(round_no) if round_no in state.opened else (
            now + fmt.round_minutes * 60.0 if fmt.round_minutes else None)
        for t in seating["tables"]:
            self.fleet_table(t["table"])                 # every table named before anything is published
        desk.open_round(self.store, self.event_id, round_no, ends_at)
        sent = []
        for t in seating["tables"]:
            fleet_id = self.fleet_table(t["table"])
            data = {"id": f"{self.tag}/{round_no}/{fleet_id}", "event": self.tag, "round": round_no,
                    "rules": fmt.rules.value, "hands": fmt.hands_per_round, "seats": dict(t["seats"]),
                    "ends_at": ends_at}
            payload = self.sign_assignment(self.site, fleet_id, data, now, now + ASSIGNMENT_TTL_S)
            self.publish(TableTopics(self.site, fleet_id).assign, payload, True, None)
            sent.append(data["id"])
        log.info("round %d of %s assigned to %d tables", round_no, self.event, len(sent))
        return sent

    def clear_assignments(self) -> None:
        """Withdraw every retained assignment (an empty retained payload): the tables go back to their own games."""
        for fleet_id in self.fleet_ids:
            self.publish(TableTopics(self.site, fleet_id).assign, b"", True, None)

    # ---- what the tables tell

    def on_change(self, change: Change) -> None:
        """A consumer's change: events of this event's games become facts."""
        if change.what != "event":
            return
        message = change.message
        data = message.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("assignment"), dict):
            return
        tag = data["assignment"]
        if tag.get("event") != self.tag:
            if isinstance(tag.get("event"), str) and tag["event"].startswith(f"{self.event}-"):
                self.counters.foreign += 1        # the same name, another database's event (made again?)
                self._refuse(f"{change.table}: a game of {tag['event']}, not of this database's {self.tag}")
            return
        table = self.event_table(change.table)
        if table is None or tag.get("table") != change.table:
            self.counters.foreign += 1
            log.warning("event %s from table %s names table %s of %s: not taken", message.get("msg_id"),
                        change.table, tag.get("table"), self.event)
            return
        try:
            round_no = int(tag["round"])
            if message.get("kind") == "hand":
                self._hand(round_no, table, message, data)
            elif message.get("kind") == "game" and data.get("event") == "ended":
                self._result(round_no, table, message, data)
        except (FormatError, KeyError, TypeError, ValueError) as exc:
            self._refuse(f"{change.table}: {exc}")

    def _hand(self, round_no: int, table: str, message: dict, data: dict) -> None:
        body = {"round": round_no, "table": table, "msg_id": message["msg_id"], "hand": data.get("hand"),
                "winners": data.get("winners"), "payments": data.get("payments")}
        if self.store.append(self.event_id, FactKind.HAND, body, dedup=f"hand:{message['msg_id']}"):
            self.counters.hands += 1
        else:
            self.counters.hands_repeated += 1

    def _result(self, round_no: int, table: str, message: dict, data: dict) -> None:
        nets = data["nets"]
        if not isinstance(nets, list) or len(nets) != 4:
            raise FormatError(f"game end {message.get('msg_id')}: nets is not four numbers")
        state = self.store.state(self.event_id)
        if round_no not in state.opened:
            raise FormatError(f"a result of round {round_no}, which this service has not opened")
        seats = {seat.value: name for seat, name in state.table_round(round_no, table).seats.items()}
        if data.get("players") != seats:
            raise FormatError(f"round {round_no} table {table} was played by {data.get('players')}, not by the "
                              f"round's seating {seats}: not taken (a referee enters the result)")
        stored = desk.enter_result(self.store, self.event_id, round_no, table,
                                   {seat.value: nets[i] for i, seat in enumerate(SEATS)}, source="fleet",
                                   hands=data.get("hands"), reason=data.get("reason"))
        if not stored:
            self.counters.results_repeated += 1
            return
        self.counters.results += 1
        log.info("%s round %d table %s: %s after %s hands (%s)", self.event, round_no, table, nets,
                 data.get("hands"), data.get("reason"))
        self.publish_standings()

    def _refuse(self, why: str) -> None:
        self.counters.refusals[why] = self.counters.refusals.get(why, 0) + 1
        if self.counters.refusals[why] == 1:
            log.warning("not taken: %s", why)

    def publish_standings(self) -> None:
        state = self.store.state(self.event_id)
        body = {"event": self.event, "ts": self.wall_s(), "standings": desk.standings_json(state),
                "progress": desk.progress_json(state)}
        if state.fmt.teams:
            body["teams"] = desk.teams_json(state)
        self.publish(standings_topic(self.site, self.event),
                     json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), True, None)
        self.counters.standings_published += 1

    # ---- gaps

    def ask_for_gaps(self) -> None:
        """A table whose ``seq`` has a hole is asked to publish again from before it (at most every 10 s)."""
        now = self.wall_s()
        by_table: dict[str, list[int]] = {}
        for key, missing in self.consumer.gaps().items():      # (keyed "table:db_id")
            by_table.setdefault(key.split(":", 1)[0], []).extend(missing)
        for fleet_id, gaps in sorted(by_table.items()):
            gaps.sort()
            if not gaps or fleet_id not in self.fleet_ids or now - self._asked.get(fleet_id, -1e18) < RESEND_EVERY_S:
                continue
            self._asked[fleet_id] = now
            topics = TableTopics(self.site, fleet_id)
            self.publish(topics.command("resend_since"), self.sign_resend(self.site, fleet_id, gaps[0] - 1, now),
                         False, topics.response(self.requester))
            self.counters.resend_asked += 1
            log.info("table %s: events %s missing, asked to publish again", fleet_id, gaps[:5])

    def round_complete(self, round_no: int) -> bool:
        return self.store.state(self.event_id).round_complete(round_no)
