"""The table's link to the parlour's broker: birth, retained state, the outbox drained in order, commands.

:class:`FleetLink` is protocol logic only, driven by the injected loop
(``now``, ``call_later``, ``post``) and an :class:`~firmware.ports.broker.MqttAdapter`;
it never sleeps, never reads a clock of its own, and never raises into the
loop (a failure of the link, of ``status()`` or of the outbox is logged and
kept as ``last_error``: the table plays on).  What it does:

* **Connect.** The first connect after boot waits a random share of
  ``first_connect_spread_s`` (seeded from the table id); a failed or lost
  connection is tried again after a jittered exponential backoff, reset
  once a connection has stayed up ``stable_s``.  Each connection is a new
  *session* of this boot; its Will is ``avail`` offline naming it.  A failure
  is logged once while its reason stays the same; the broker refusing the
  table itself (its CONNACK's "Not authorized", or its ACL refusing
  messages) is an error saying what to do, kept as ``refusal``.
* **Birth.** On each connection: ``avail`` online, ``meta``, ``state``,
  ``faults`` and ``counters``, all retained, then the subscriptions (the
  table's ``cmd/+`` and its own ``avail``: should a late Will of an older
  session overwrite the retained ``avail``, the link publishes online again).
* **State.** :meth:`notify` says the status changed: ``faults`` is published
  at once when it differs, ``state`` at most once per ``state_min_interval_s``
  (the last change always goes out), ``counters`` every ``counters_period_s``;
  :meth:`stop` publishes all three as they are before it disconnects.
* **Events.** Outbox rows are published at QoS 1 in ``seq`` order, at most
  ``max_in_flight`` unacknowledged; each PUBACK marks its row sent (gathered
  into one write per ``mark_delay_s``).  After a reconnect every unsent row
  is published again, so nothing is lost; a consumer drops repeats by
  ``msg_id``.  :meth:`outbox_changed` says rows were added (the link also
  looks every ``poll_s`` while connected).
* **Commands.** ``cmd/<verb>`` must carry an MQTT 5 message expiry and pass
  the :class:`~firmware.fleet.command_auth.CommandVerifier`; ``rebirth`` and
  ``resend_since`` are the link's own, ``ack`` goes to ``on_command``.  The
  answer goes to the requester's response topic (inside the table's
  ``resp/``) with its correlation data.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable

from firmware.fleet import messages, topics
from firmware.ports.broker import InboundMessage, MqttAdapter, WillMessage, refused_who
from firmware.fleet.backoff import Backoff, seeded_rng
from firmware.fleet.command_auth import CommandVerifier
from firmware.fleet.command_desk import CommandDesk, CommandHandler
from firmware.fleet.link_settings import DEFAULT_SETTINGS, LinkSettings, LinkState
from firmware.store.outbox import Outbox, OutboxMeta, OutboxRow
from firmware.fleet.topics import Leaf, TableTopics
from firmware.loop import Handle, Loop

log = logging.getLogger(__name__)


def _guarded(method: Callable) -> Callable:
    """Nothing the link does may raise into the loop (the controller would latch E99 for telemetry)."""
    @functools.wraps(method)
    def run(self: "FleetLink", *args: Any) -> Any:
        try:
            return method(self, *args)
        except Exception as exc:                      # noqa: BLE001 (logged with its traceback, kept for status)
            self.errors += 1
            self.last_error = f"{method.__name__}: {exc}"
            log.exception("fleet link %s: %s failed", self.topics.table, method.__name__)
            return None
    return run


class FleetLink:
    """One table's telemetry link (see the module's docstring).

    ``status()`` returns the table's status as a dict: ``faults`` (the active
    faults, a list) goes to the ``faults`` leaf, ``counters`` (a dict) into the
    ``counters`` leaf, everything else (``state``, ``hand``, ``dealer``,
    ``chips``, ...) is the ``state`` leaf.  ``meta`` is the ``meta`` leaf
    (firmware version, table model, rule set, tile sets).  ``on_command(verb,
    args, issuer)`` carries out an authenticated ``ack`` and returns a
    JSON-able result, or raises :class:`CommandRefused` with the reason.
    ``wall_clock_s`` gives Unix seconds (timestamps and command expiry).
    ``count_boot`` False: the table's wiring counted this boot already.
    ``on_refusal(why)`` is told, instead of the log, when the broker refuses
    the table itself (``sim --fleet`` says it once for the whole fleet)."""

    def __init__(self, loop: Loop, adapter: MqttAdapter, outbox: Outbox, status: Callable[[], dict],
                 on_command: CommandHandler | None, *, site: str, table: str, meta: dict,
                 wall_clock_s: Callable[[], float], verifier: CommandVerifier | None = None,
                 settings: LinkSettings = DEFAULT_SETTINGS, count_boot: bool = True,
                 on_refusal: Callable[[str], None] | None = None,
                 on_assignment: Callable[[bytes], None] | None = None) -> None:
        self.loop = loop
        self.on_assignment = on_assignment    # the hall's retained assignment (its payload; b"": withdrawn)
        self.on_refusal = on_refusal
        self.adapter = adapter
        self.outbox = outbox
        self.status_source = status
        self.on_command = on_command
        self.topics = TableTopics(site, table)
        self.meta = dict(meta)
        self.wall_clock_s = wall_clock_s
        self.verifier = verifier
        self.settings = settings
        self.count_boot = count_boot
        self.backoff = Backoff(seeded_rng(site, table), settings.backoff_min_s, settings.backoff_max_s)
        self.state = LinkState.STOPPED
        self.boot = OutboxMeta("unknown", 0, 0, 0)
        self.source = messages.Source(site, table, messages.boot_id("unknown", 0))
        self.session = 0                       # connections tried this boot
        self._live: int | None = None          # the session whose reports count
        self._timers: dict[str, Handle] = {}
        self._in_flight: dict[int, int] = {}   # token -> seq
        self._cursor = 0                       # the last seq published on this connection
        self._to_mark: list[int] = []
        self._last_state: Any = None
        self._last_state_at = -1e9
        self._last_faults: Any = None
        self._last_warnings: Any = None
        self._counted_depth = 0                # the outbox depth the last counters leaf said
        self.last_error = ""
        self.refusal = ""                      # the broker refused this table (its connection, or a message): why
        self._said = ""                        # the last failure logged (the same one again is not repeated)
        self.errors = 0
        self.counts = {"published": 0, "acked": 0, "refused_by_broker": 0, "reconnects": 0, "reasserted": 0}
        self.desk = CommandDesk(self.topics, adapter, outbox, verifier, on_command, self.rebirth, self._publish_row,
                                settings.resend_batch, clock_s=loop.now, call_later=self._later)
        if verifier is not None and verifier.refusal_log.call_later is None:
            verifier.refusal_log.call_later = self._later      # (its summary too comes when its window ends)

    # -- the owner's calls ----------------------------------------------------------------------------------
    @_guarded
    def start(self) -> None:
        """Count this boot (unless the table counted it: ``count_boot`` False) and connect after the spread
        delay."""
        try:
            self.boot = self.outbox.begin_boot() if self.count_boot else self.outbox.meta()
        except Exception as exc:                       # noqa: BLE001 (the store reports its own failure)
            self.last_error = f"outbox: {exc}"
            log.error("fleet link %s: the outbox cannot count this boot: %s", self.topics.table, exc)
        self.source = messages.Source(self.topics.site, self.topics.table, messages.boot_id(self.boot.db_id,
                                                                                            self.boot.boot))
        self.state = LinkState.WAITING
        self._timer("connect", self.backoff.first_delay_s(self.settings.first_connect_spread_s), self._connect)

    @_guarded
    def stop(self) -> None:
        """End the link: what the table says now goes out first (``faults``, the ``state`` its rate limit held
        back, the last ``counters``), ahead of the clean disconnect on the same connection; then the broker
        publishes this session's offline ``avail`` (the Will)."""
        self._flush_marks()
        if self._connected():
            self._publish_faults()
            self._publish_state()
            self._publish_counters()
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        if self._live is not None:
            self.adapter.disconnect(send_will=True)
        self._live = None
        self.state = LinkState.STOPPED

    def abandon(self) -> None:
        """The power went: every timer cancelled and nothing said (no flush, no disconnect, no Will asked for);
        the caller drops the connection.  What was not acknowledged is in the outbox for the next boot."""
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        self._live = None
        self.state = LinkState.STOPPED

    @_guarded
    def notify(self) -> None:
        """The table's status changed: faults go out at once, state within its rate limit."""
        if self._connected():
            self._publish_faults()
            self._schedule_state()

    @_guarded
    def outbox_changed(self) -> None:
        """Rows were added to the outbox (after their transaction committed)."""
        if self._connected():
            self._drain()

    @_guarded
    def set_meta(self, meta: dict) -> None:
        if meta != self.meta:
            self.meta = dict(meta)
            if self._connected():
                self._retain(Leaf.META, self.meta)

    def _later(self, delay_s: float, fn: Callable[[], None]) -> Handle:
        """A timer on the link's loop for its log limits (a failure in it is logged, never raised into the loop)."""
        return self.loop.call_later(delay_s, self._guarded_call, fn)

    @_guarded
    def _guarded_call(self, fn: Callable[[], None]) -> None:
        fn()

    def log_lines_dropped(self) -> int:
        """Log lines the link's rate limits left out (refused commands and their answers), since start: each
        window's are also summed up in the log when it ends."""
        limits = [self.desk.refusal_log] + ([self.verifier.refusal_log] if self.verifier is not None else [])
        return sum(limit.suppressed_total for limit in limits)

    def status(self) -> dict[str, Any]:
        """The link for a status line: state, outbox depth, events in flight, session, last error, counters."""
        try:
            depth = self.outbox.depth()
        except Exception:                             # noqa: BLE001
            depth = -1
        return {"state": self.state.value, "outbox_depth": depth, "in_flight": len(self._in_flight),
                "session": self.session, "boot_id": self.source.boot_id, "last_error": self.last_error,
                "refusal": self.refusal, "errors": self.errors,
                "inbound_dropped": int(getattr(self.adapter, "inbound_dropped", 0)),   # (the adapter's bound)
                "log_lines_dropped": self.log_lines_dropped(),
                **self.counts, "commands_done": self.desk.done,
                "commands_refused": self.desk.refused, "resent": self.desk.resent}

    def status_line(self) -> str:
        s = self.status()
        line = f"fleet {s['state']}, outbox {s['outbox_depth']}"
        return line + (f", last error: {s['last_error']}" if s["last_error"] else "")

    # -- connecting ------------------------------------------------------------------------------------------------
    def _timer(self, name: str, delay_s: float, fn: Callable[..., Any], *args: Any) -> None:
        old = self._timers.pop(name, None)
        if old is not None:
            old.cancel()
        self._timers[name] = self.loop.call_later(delay_s, self._fire, name, fn, args)

    def _cancel(self, name: str) -> None:
        handle = self._timers.pop(name, None)
        if handle is not None:
            handle.cancel()

    @_guarded
    def _fire(self, name: str, fn: Callable[..., Any], args: tuple) -> None:
        self._timers.pop(name, None)
        fn(*args)

    def _connected(self) -> bool:
        return self.state in (LinkState.CONNECTED, LinkState.DRAINING)

    def _connect(self) -> None:
        self.session += 1
        self._live = self.session
        self.state = LinkState.CONNECTING
        will = WillMessage(self.topics.avail, self._avail(False), qos=1, retain=True)
        self._timer("connect_timeout", self.settings.connect_timeout_s, self._connect_timed_out, self.session)
        self.adapter.connect(self.session, will, self)

    def _connect_timed_out(self, session: int) -> None:
        if session == self._live and self.state is LinkState.CONNECTING:
            self.adapter.disconnect()
            self._lost(f"no answer from the broker within {self.settings.connect_timeout_s:g} s")

    def _refused(self, why: str, said: str, hint: str) -> None:
        """The broker refused the table itself: kept as ``refusal`` and said once (until a connection is
        accepted) to ``on_refusal``, or logged as an error with what to do."""
        if why == self.refusal:
            log.debug("fleet link %s: %s", self.topics.table, said)
            return
        self.refusal = why
        if self.on_refusal is not None:
            self.on_refusal(why)
        else:
            log.error("fleet link %s: %s (%s)", self.topics.table, said, hint)

    def _lost(self, reason: str) -> None:
        """Back off and try again; a failure is logged (a warning) when it differs from the last one logged, not
        again at every retry, and not when the broker refused the table (:meth:`_refused` said it)."""
        self._flush_marks()
        for name in ("connect_timeout", "counters", "poll", "stable", "state"):
            self._cancel(name)
        self._live = None
        self._in_flight.clear()
        self.last_error = reason
        self.counts["reconnects"] += 1
        self.state = LinkState.BACKING_OFF
        delay_s = self.backoff.next_delay_s()
        if reason == self._said or reason == self.refusal:
            log.debug("fleet link %s: %s; trying again in %.1f s", self.topics.table, reason, delay_s)
        else:
            self._said = reason
            log.warning("fleet link %s: %s; trying again in %.1f s (and on, not logged again while the reason stays "
                        "the same)", self.topics.table, reason, delay_s)
        self._timer("connect", delay_s, self._connect)

    def _avail(self, online: bool) -> bytes:
        return messages.avail(self.source, online, self.boot.boot, self.session, self.wall_clock_s(),
                              self._birth() if online else None)

    def _birth(self) -> dict[str, Any]:
        """What a birth says besides online (Sparkplug's NBIRTH, without its payloads): the table's versions and
        rule set (from ``meta``), the last event ``seq`` written and the oldest still kept for ``resend_since``, so
        that a consumer knows at once what it is missing and what it can still ask for."""
        meta = self.outbox.meta()
        return {"seq": meta.last_seq, "oldest": self.outbox.oldest_kept(), "db_id": meta.db_id,
                **{key: self.meta[key] for key in ("firmware", "model", "rules", "tile_sets") if key in self.meta}}

    # -- the adapter's reports (on the loop's thread) ----------------------------------------------------------
    @_guarded
    def on_connected(self, session: int, ok: bool, reason: str) -> None:
        if session != self._live or self.state is not LinkState.CONNECTING:
            return
        if not ok:
            if refused_who(reason):
                why = f"connect refused: {reason}"
                self._refused(why, f"{why}; trying again every {self.settings.backoff_max_s:g} s at most",
                              f"the broker does not take this table: a table is known by its certificate, CN = its "
                              f"table_id {self.topics.table}, on the tables' TLS listener (mqtts://HOST:8883 with "
                              f"[fleet] ca_file, cert_file, key_file); a listener for accounts refuses it")
            self._lost(f"connect refused: {reason}")
            return
        self._cancel("connect_timeout")
        self.state = LinkState.CONNECTED
        self.last_error = self.refusal = self._said = ""
        self._cursor = 0
        self._in_flight.clear()
        log.info("fleet link %s: connected (boot %s, session %d)", self.topics.table, self.source.boot_id, session)
        self._last_state_at = -1e9
        self.rebirth()
        self.adapter.subscribe(self.topics.commands_filter, 1)
        self.adapter.subscribe(self.topics.avail, 1)
        if self.on_assignment is not None:
            self.adapter.subscribe(self.topics.assign, 1)
        self._timer("stable", self.settings.stable_s, self.backoff.reset)
        self._timer("poll", self.settings.poll_s, self._poll)
        self._drain()

    @_guarded
    def on_connection_lost(self, session: int, reason: str) -> None:
        if session == self._live and self.state is not LinkState.STOPPED:
            self._lost(f"connection lost: {reason}")

    @_guarded
    def on_published(self, session: int, token: int, ok: bool, reason: str) -> None:
        if session != self._live:
            return
        seq = self._in_flight.pop(token, None)
        if not ok:
            self.counts["refused_by_broker"] += 1
            self.last_error = why = f"the broker refused a message: {reason}"
            self._refused(why, f"the broker refused {f'event {seq}' if seq is not None else 'a message'}: {reason}",
                          f"its ACL lets a table write only under {topics.PREFIX}/<site>/tbl/<its certificate's "
                          f"CN>/: is {self.topics.table} the certificate's CN and {self.topics.site} the broker's "
                          f"site? further refusals on this connection are counted, not logged")
        elif seq is not None:
            self.counts["acked"] += 1
            self._to_mark.append(seq)
            if "mark" not in self._timers:
                self._timer("mark", self.settings.mark_delay_s, self._flush_marks)
        if seq is not None:
            self._drain()

    @_guarded
    def on_subscribed(self, session: int, token: int, granted: list[int]) -> None:
        if session == self._live and any(code >= 0x80 for code in granted):
            self.last_error = f"the broker refused a subscription (codes {granted})"
            log.error("fleet link %s: %s", self.topics.table, self.last_error)

    @_guarded
    def on_message(self, session: int, message: InboundMessage) -> None:
        if session != self._live or not self._connected():
            return
        parsed = topics.parse(message.topic)
        if parsed is None or parsed.table != self.topics.table or parsed.site != self.topics.site:
            return
        if parsed.section == Leaf.AVAIL.value:
            self._own_avail(message)
        elif parsed.section == "cmd":
            self.desk.handle(parsed.name, message)
        elif parsed.section == topics.ASSIGN and self.on_assignment is not None:
            self.on_assignment(bytes(message.payload))

    # -- publishing ----------------------------------------------------------------------------------------------
    def _retain(self, leaf: Leaf, data: Any) -> None:
        self.adapter.publish(self.topics.leaf(leaf), messages.retained(self.source, leaf.value, data,
                                                                       self.wall_clock_s()), 1, True)

    def _read_status(self) -> dict:
        try:
            status = self.status_source()
            return status if isinstance(status, dict) else {"state": "unknown", "error": "status is not a dict"}
        except Exception as exc:                       # noqa: BLE001
            self.errors += 1
            self.last_error = f"status(): {exc}"
            log.exception("fleet link %s: status() failed", self.topics.table)
            return {"state": "unknown", "error": str(exc)}

    def _publish_faults(self) -> None:
        faults = self._read_status().get("faults") or []
        if faults != self._last_faults:
            self._last_faults = faults
            self._retain(Leaf.FAULTS, faults)
        warnings = self._read_status().get("warnings")
        if warnings is not None and warnings != self._last_warnings:
            self._last_warnings = warnings
            self._retain(Leaf.WARNINGS, warnings)

    def _schedule_state(self) -> None:
        if "state" in self._timers:
            return
        due = self._last_state_at + self.settings.state_min_interval_s
        if self.loop.now() >= due:
            self._publish_state()
        else:
            self._timer("state", due - self.loop.now(), self._publish_state)

    def _publish_state(self) -> None:
        body = {k: v for k, v in self._read_status().items() if k not in ("faults", "counters", "warnings")}
        if body != self._last_state:
            self._last_state = body
            self._last_state_at = self.loop.now()
            self._retain(Leaf.STATE, body)

    def _publish_counters(self) -> None:
        link = self.status()
        link.pop("state")
        try:
            link["dropped"] = self.outbox.meta().dropped
        except Exception:                             # noqa: BLE001
            link["dropped"] = self.boot.dropped
        self._counted_depth = link["outbox_depth"]
        self._retain(Leaf.COUNTERS, {"table": self._read_status().get("counters") or {}, "link": link})
        self._timer("counters", self.settings.counters_period_s, self._publish_counters)

    def _poll(self) -> None:
        self._drain()
        self._timer("poll", self.settings.poll_s, self._poll)

    def _publish_row(self, row: OutboxRow) -> int:
        payload = messages.event(self.source, row.kind, row.seq, self.boot.db_id, row.boot, row.payload,
                                 self.wall_clock_s())
        return self.adapter.publish(self.topics.event(row.kind), payload, 1, False)

    def _drain(self) -> None:
        room = self.settings.max_in_flight - len(self._in_flight)
        if self._connected() and room > 0:
            try:
                rows = self.outbox.pending(self._cursor, room)
            except Exception as exc:                   # noqa: BLE001 (a failing card: tried again at the next poll)
                self.last_error = f"outbox: {exc}"
                log.error("fleet link %s: reading the outbox failed: %s", self.topics.table, exc)
                rows = []
            for row in rows:
                token = self._publish_row(row)
                self._in_flight[token] = row.seq
                self._cursor = row.seq
                self.counts["published"] += 1
        if self._connected():
            self.state = LinkState.DRAINING if self._in_flight else LinkState.CONNECTED

    def _flush_marks(self) -> None:
        self._cancel("mark")
        seqs, self._to_mark = self._to_mark, []
        if seqs:
            try:
                self.outbox.mark_sent(seqs)
                if self._counted_depth and self._connected() and self.outbox.depth() == 0:
                    self._publish_counters()       # (the console's outbox column: drained, not 60 s stale)
            except Exception as exc:                   # noqa: BLE001 (they are sent again later: a consumer de-dups)
                self.last_error = f"outbox: {exc}"
                log.error("fleet link %s: marking %d events sent failed: %s", self.topics.table, len(seqs), exc)

    # -- the table's own avail -----------------------------------------------------------------------------------
    def _own_avail(self, message: InboundMessage) -> None:
        """A retained offline of another session (a late Will) while this one is connected: say online again."""
        try:
            data = messages.decode(message.payload).get("data") or {}
        except messages.MessageError:
            return
        if data.get("online") is False and (data.get("boot"), data.get("session")) != (self.boot.boot, self._live):
            self.counts["reasserted"] += 1
            log.warning("fleet link %s: a late Will (boot %s, session %s) marked the table offline: online again",
                        self.topics.table, data.get("boot"), data.get("session"))
            self.adapter.publish(self.topics.avail, self._avail(True), 1, True)

    def rebirth(self) -> None:
        """Publish every retained leaf (at each connection, and for the ``rebirth`` command): ``avail`` online first,
        so that a subscriber to ``avail`` sees this session before anything else of it."""
        self.adapter.publish(self.topics.avail, self._avail(True), 1, True)
        self._retain(Leaf.META, self.meta)
        self._last_state = self._last_faults = self._last_warnings = None
        self._publish_faults()
        self._publish_state()
        self._publish_counters()
