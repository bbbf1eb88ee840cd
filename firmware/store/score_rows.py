"""The scoreboard's rows in the table database: games (局), each hand's result and record, each payment.

A game is played under one rule set from its start chips; it ends when the
rule set says so (局结) and the next starts fresh.  A payment is one row from
a payer to a payee with its reason and the action of the hand's record that
caused it; ``(hand, event, seq)`` is unique, so a payment delivered twice
(after a power cut) is kept once.  Chips are kept per game and side,
updated in the same transaction as the payments; a payment ``held`` off the
board (the 局结 rule) moves no chips until its game ends, when the game's
final scores count it.  :meth:`ScoreRows.check` is what the table database
verifies at power-on: types, and every game's chips against its payments.
"""

from __future__ import annotations

import json
import logging
import zlib
from typing import TYPE_CHECKING, Any

from firmware.store import records as rec
from firmware.store.records import RecordError
from firmware.rules.money import Payment

if TYPE_CHECKING:
    from firmware.store.table_store import TableStore

log = logging.getLogger(__name__)
SIDES = 4
_RESULT_COLUMNS = ("r.hand, r.game, r.dealer, r.winners, r.drawn, r.fans, r.note, r.round_wind, r.record, "
                   "g.rules")
PACK_OVER_BYTES = 256          # text longer than this is kept deflated (a hand's record: ~2.5 KB to ~0.7 KB)


def pack_text(text: str) -> str | bytes:
    """``text`` as kept on the card: deflated when long (every 512-byte page less is one less written to an SD
    card), as it is when short (readable with the ``sqlite3`` shell)."""
    data = text.encode()
    return zlib.compress(data, 9) if len(data) > PACK_OVER_BYTES else text


def unpack_text(value: object, what: str) -> str:
    """A column written by :func:`pack_text` (or before it, as text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return zlib.decompress(value).decode()
        except (zlib.error, UnicodeDecodeError) as exc:
            raise RecordError(f"{what}: not readable ({exc})") from None
    raise RecordError(f"{what}: a value of the wrong type ({type(value).__name__})")


class ScoreRows:
    def __init__(self, store: "TableStore") -> None:
        self.store = store

    # -- games --------------------------------------------------------------------------------------------
    def current_game(self, rules: str, start_chips: int, first_hand: int) -> int:
        """The game of ``rules`` the table is at: the last one (even ended: its final chips stand until the next
        hand is dealt), or a new one with its chips when the last was another rule set's."""
        rows = self.store.read("SELECT id, rules, ended_hand FROM games ORDER BY id DESC LIMIT 1")
        if rows and rows[0][1] == rules:
            return int(rows[0][0])
        if rows and rows[0][1] != rules:
            log.warning("rules changed from %s to %s: a new game starts with %d chips each", rows[0][1], rules,
                        start_chips)
        return self.new_game(rules, start_chips, first_hand)

    def new_game(self, rules: str, start_chips: int, first_hand: int, extra: dict[str, Any] | None = None) -> int:
        """A new game with its chips and the fleet's ``evt/game`` (started, with ``extra``: a round's assignment
        and players), in the caller's batch or its own."""
        with self.store.batch("new game"):
            game = self.store.write("INSERT INTO games (rules, start_chips, first_hand) VALUES (?, ?, ?)",
                                    (rules, start_chips, first_hand)).lastrowid
            for side in range(SIDES):
                self.store.write("INSERT INTO chips (game, side, chips) VALUES (?, ?, ?)", (game, side, start_chips))
            self.store.add_event("game", {"event": "started", "game": game, "rules": rules,
                                          "start_chips": start_chips, "first_hand": first_hand, **(extra or {})})
        rows = self.store.read("SELECT id FROM games WHERE rules = ? ORDER BY id DESC LIMIT 1", (rules,))
        return int(rows[0][0]) if rows else 0

    def ended(self, game: int) -> bool:
        rows = self.store.read("SELECT ended_hand FROM games WHERE id = ?", (game,))
        return bool(rows) and rows[0][0] is not None

    def end_game(self, game: int, hand: int, reason: str, extra: dict[str, Any] | None = None) -> None:
        """The game ends after ``hand`` (局结, a round's hands or time); its held payments count in its final scores.
        With the fleet's ``evt/game`` (ended: the chips, the held payments, the final scores, and ``extra``: a
        round's assignment, players, hands and nets), in the caller's batch."""
        cur = self.store.write("UPDATE games SET ended_hand = ?, end_reason = ? WHERE id = ? AND ended_hand IS NULL",
                               (hand, reason, game))
        if cur.rowcount:
            chips, held = self.chips(game), self.held(game)
            self.store.add_event("game", {"event": "ended", "game": game, "hand": hand, "reason": reason,
                                          "chips": chips, "held": held,
                                          "final": [c + h for c, h in zip(chips, held)], **(extra or {})})

    def games(self, limit: int = 20) -> list[dict[str, Any]]:
        """The newest games, newest last: rules, start, first hand, end, and the final scores of an ended one."""
        rows = self.store.read("SELECT * FROM (SELECT id, rules, start_chips, first_hand, ended_hand, end_reason "
                               "FROM games ORDER BY id DESC LIMIT ?) ORDER BY id", (limit,))
        out = []
        for game, rules, start, first, ended, reason in rows:
            chips = self.chips(game)
            held = self.held(game)
            out.append({"game": game, "rules": rules, "start_chips": start, "first_hand": first,
                        "ended_hand": ended, "end_reason": reason, "chips": chips,
                        "final": [c + h for c, h in zip(chips, held)] if ended is not None else None})
        return out

    def last_game_rules(self) -> str | None:
        rows = self.store.read("SELECT rules FROM games ORDER BY id DESC LIMIT 1")
        return str(rows[0][0]) if rows else None

    def game_start(self, game: int) -> int:
        rows = self.store.read("SELECT start_chips FROM games WHERE id = ?", (game,))
        return int(rows[0][0]) if rows else 0

    def chips(self, game: int) -> list[int]:
        by_side = dict(self.store.read("SELECT side, chips FROM chips WHERE game = ?", (game,)))
        return [int(by_side.get(s, 0)) for s in range(SIDES)]

    def _sums(self, game: int, held: bool, before_hand: int | None = None) -> list[int]:
        out = [0] * SIDES
        where = "game = ? AND held = ?" + (" AND hand < ?" if before_hand is not None else "")
        args: tuple = (game, int(held)) + ((before_hand,) if before_hand is not None else ())
        for side, amount in self.store.read(f"SELECT payee, sum(amount) FROM payments WHERE {where} GROUP BY payee",
                                            args):
            out[side] += amount
        for side, amount in self.store.read(f"SELECT payer, sum(amount) FROM payments WHERE {where} GROUP BY payer",
                                            args):
            out[side] -= amount
        return out

    def paid(self, game: int) -> list[int]:
        """Each side's payments summed over the game, the held ones not counted (independently of the chips)."""
        return self._sums(game, False)

    def held(self, game: int) -> list[int]:
        """Each side's payments held off the board until the game ends."""
        return self._sums(game, True)

    def chips_before(self, game: int, hand: int) -> list[int]:
        """Each side's chips at the deal of ``hand`` (the game's start and its earlier hands' payments)."""
        start = self.game_start(game)
        return [start + d for d in self._sums(game, False, before_hand=hand)]

    # -- payments and results -------------------------------------------------------------------------------------
    def add_payments(self, game: int, hand: int, payments: list[Payment]) -> list[Payment]:
        """Write ``payments`` of ``hand`` (in the caller's batch, or their own): the ones not written before are
        returned, and only they move chips.  ``seq`` is a payment's place among its action's payments."""
        seqs: dict[int, int] = {}
        new: list[Payment] = []
        with self.store.batch(f"payments of hand {hand}"):
            for p in payments:
                seq = seqs.get(p.event, 0)
                seqs[p.event] = seq + 1
                cur = self.store.write(
                    "INSERT OR IGNORE INTO payments (game, hand, event, seq, payer, payee, amount, reason, held) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (game, hand, p.event, seq, p.payer, p.payee, p.amount, p.reason.key, int(p.held)))
                if cur.rowcount == 0:
                    continue
                new.append(p)
                if not p.held:
                    self.store.write("UPDATE chips SET chips = chips - ? WHERE game = ? AND side = ?",
                                     (p.amount, game, p.payer))
                    self.store.write("UPDATE chips SET chips = chips + ? WHERE game = ? AND side = ?",
                                     (p.amount, game, p.payee))
        return new if not self.store.failing else []

    def record_result(self, game: int, hand: int, dealer: int, winners: list[int], drawn: bool, items: list[dict],
                      note: str, round_wind: int, record: str) -> bool:
        """A hand's result row (with its record as JSON), in the caller's batch.  False: recorded before."""
        self.store.unscored_hand = None
        cur = self.store.write(
            "INSERT OR IGNORE INTO hand_results (hand, game, dealer, winners, drawn, fans, note, round_wind, record) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (hand, game, dealer, json.dumps(winners), int(drawn),
                                                   json.dumps(items, ensure_ascii=False), note, round_wind,
                                                   pack_text(record)))
        return cur.rowcount > 0

    def has_result(self, hand: int) -> bool:
        """Whether ``hand`` has its result row (a hand found without one is remembered until a result is
        written: see ``TableStore.unscored_hand``)."""
        if hand == self.store.unscored_hand:
            return False
        if self.store.read("SELECT 1 FROM hand_results WHERE hand = ?", (hand,)):
            return True
        self.store.unscored_hand = hand
        return False

    def payments_of(self, hand: int) -> list[dict[str, Any]]:
        """Every payment of ``hand``, in the order written."""
        return [{"event": event, "seq": seq, "payer": payer, "payee": payee, "amount": amount, "reason": reason,
                 "held": bool(held)}
                for event, seq, payer, payee, amount, reason, held in self.store.read(
                    "SELECT event, seq, payer, payee, amount, reason, held FROM payments WHERE hand = ? ORDER BY id",
                    (hand,))]

    def hand_results(self, game: int | None, since: int = 0, limit: int | None = None) -> list[dict]:
        """Recorded hands with their payments, oldest first."""
        rows = self.store.read(
            f"SELECT * FROM (SELECT {_RESULT_COLUMNS} FROM hand_results r JOIN games g ON g.id = r.game "
            "WHERE (? IS NULL OR r.game = ?) AND r.hand > ? ORDER BY r.hand DESC LIMIT ?) ORDER BY hand",
            (game, game, since, -1 if limit is None else limit))
        return [self._result(*row) for row in rows]

    def hand_results_after(self, game: int | None, after: int, limit: int) -> list[dict]:
        """Up to ``limit`` recorded hands after hand ``after``, oldest first (a page of a long history)."""
        rows = self.store.read(
            f"SELECT {_RESULT_COLUMNS} FROM hand_results r JOIN games g ON g.id = r.game "
            "WHERE (? IS NULL OR r.game = ?) AND r.hand > ? ORDER BY r.hand LIMIT ?", (game, game, after, limit))
        return [self._result(*row) for row in rows]

    def hand_result(self, hand: int) -> dict | None:
        """Hand ``hand``'s recorded result with its payments (as :meth:`hand_results` gives it), None: none."""
        rows = self.store.read(f"SELECT {_RESULT_COLUMNS} FROM hand_results r JOIN games g ON g.id = r.game "
                               "WHERE r.hand = ?", (hand,))
        return self._result(*rows[0]) if rows else None

    def _result(self, hand: int, g: int, dealer: int, winners: Any, drawn: Any, fans: Any, note: Any,
                round_wind: Any, record: object, rules: str) -> dict:
        payments = self.payments_of(hand)
        by_side = [0] * SIDES
        for p in payments:
            if not p["held"]:
                by_side[p["payer"]] -= p["amount"]
                by_side[p["payee"]] += p["amount"]
        return {"hand": hand, "game": g, "dealer": dealer,
                "winners": rec.from_json(rec.SIDES, winners, f"hand {hand} winners"), "drawn": bool(drawn),
                "fans": [i.model_dump() for i in rec.from_json(rec.FANS, fans, f"hand {hand} fans")],
                "note": note, "round_wind": round_wind, "payments": by_side, "money": payments,
                "record": self._record_text(hand, record), "rules": rules}

    @staticmethod
    def _record_text(hand: int, value: object) -> str:
        try:
            return unpack_text(value, f"hand {hand}: its record")
        except RecordError as exc:               # (its result and payments stand; only the record is not shown)
            log.error("%s", exc)
            return ""

    def dealers(self, game: int) -> list[int]:
        """The dealer of each recorded hand of ``game``, in order (how far the deal has gone round)."""
        return [d for d, in self.store.read("SELECT dealer FROM hand_results WHERE game = ? ORDER BY hand", (game,))]

    # -- the hand in play's record ------------------------------------------------------------------------------
    def log_actions(self, hand: int, actions: list[tuple[int, int | None, str]]) -> None:
        """Append ``(event, seq, action line)`` rows of the hand in play's record (in the caller's batch): the
        lines of one call are one row (its first event, the last ``seq`` given, the lines joined by newlines),
        so a hand's record costs the card its bytes, not a b-tree entry per action."""
        if not actions:
            return
        events = [event for event, _seq, _line in actions]
        if events != list(range(events[0], events[0] + len(events))) or any("\n" in a for *_, a in actions):
            raise ValueError(f"hand {hand}: record rows must be consecutive single lines")
        seq = max((s for _e, s, _a in actions if s is not None), default=None)
        self.store.write("INSERT OR IGNORE INTO hand_log (hand, event, seq, action) VALUES (?, ?, ?, ?)",
                         (hand, events[0], seq, pack_text("\n".join(line for *_, line in actions))))

    def logged_actions(self, hand: int) -> list[tuple[int, int | None, str]]:
        """The hand in play's record as written: ``(event, seq, line)`` per action, ``seq`` on the last action
        of each written row (the highest the sender gave in it), None on the others."""
        out: list[tuple[int, int | None, str]] = []
        for first, seq, text in self.store.read(
                "SELECT event, seq, action FROM hand_log WHERE hand = ? ORDER BY event", (hand,)):
            try:
                lines = unpack_text(text, f"hand {hand}: the record's row from action {first}").split("\n")
            except RecordError as exc:            # (the hand goes on from what was read, as after a bad line)
                log.error("%s", exc)
                break
            out.extend((first + i, seq if i == len(lines) - 1 else None, line) for i, line in enumerate(lines))
        return out

    def clear_log(self, keep_hand: int | None = None) -> None:
        """Forget the record rows of every hand but ``keep_hand`` (in the caller's batch)."""
        if keep_hand is None:
            self.store.write("DELETE FROM hand_log")      # (no WHERE: SQLite frees the pages without rewriting rows)
        else:
            self.store.write("DELETE FROM hand_log WHERE hand != ?", (keep_hand,))

    # -- checked at power-on ----------------------------------------------------------------------------------
    def check(self, limit: int) -> None:
        bad = self.store.read(
            "SELECT (SELECT count(*) FROM payments WHERE typeof(amount) != 'integer' OR amount <= 0 "
            "OR payer NOT BETWEEN 0 AND 3 OR payee NOT BETWEEN 0 AND 3 OR payer = payee OR held NOT IN (0, 1))"
            " + (SELECT count(*) FROM chips WHERE typeof(chips) != 'integer' OR side NOT BETWEEN 0 AND 3)"
            " + (SELECT count(*) FROM games WHERE typeof(start_chips) != 'integer')")[0][0]
        if bad:
            raise RecordError(f"scoreboard: {bad} rows with a wrong type")
        for game, in self.store.read("SELECT id FROM games ORDER BY id DESC LIMIT ?", (limit,)):
            start, chips = self.game_start(game), self.chips(game)
            paid = self.paid(game)
            if chips != [start + p for p in paid]:
                raise RecordError(f"scoreboard game {game}: chips {chips} are not the start {start} plus the "
                                  f"payments {paid}")
        self.hand_results(game=None, limit=limit)
