"""The table's side of ``cmd/<verb>``: refuse or carry out one command and answer it on its response topic.

A command is carried out only if it carries an MQTT 5 message expiry (the
broker drops it once expired; an expired one that still arrives is refused
by its signed ``expires_at``) and passes the table's
:class:`~firmware.fleet.command_auth.CommandVerifier`.  ``rebirth`` publishes
the retained leaves again and ``resend_since`` publishes again up to
``resend_batch`` events after a ``seq`` (sent or not, as long as the outbox
keeps them); ``ack`` goes to the table's handler, which acknowledges a
recoverable fault (the verifier has already refused latched and hold codes,
and the handler checks again).  Nothing here moves a motor.

The answer (``{"ok": ..., "error": ..., "result": ...}``) is published at
QoS 1 to the requester's MQTT 5 response topic with its correlation data,
only if that topic lies inside the table's own ``resp/`` subtree (the only
place the broker's ACL lets a table answer); a command without a response
topic is carried out unanswered.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from firmware.fleet import messages
from firmware.ports.broker import InboundMessage, MqttAdapter, PublishProperties
from firmware.fleet.log_limit import LogLimiter, Schedule
from firmware.fleet.command_auth import MAX_SEQ, Command, CommandRefused, CommandVerifier
from firmware.store.outbox import OutboxRow
from firmware.fleet.topics import TableTopics, Verb

log = logging.getLogger(__name__)

RESPONSE_EXPIRY_S = 120
CommandHandler = Callable[[str, dict, str], Any]   # (verb, args, issuer) -> JSON-able result; CommandRefused: no


class CommandDesk:
    """Commands for one table (see the module's docstring).

    ``rebirth()`` publishes the retained leaves; ``publish_event(row)``
    publishes one outbox row; ``outbox`` answers ``since``, ``oldest_kept``
    and ``meta`` (the link's outbox); ``clock_s`` (the loop's ``now``) paces the log lines of refusals, and
    ``call_later`` (the loop's) sums up those left out when the window ends."""

    def __init__(self, topics: TableTopics, adapter: MqttAdapter, outbox: Any, verifier: CommandVerifier | None,
                 on_command: CommandHandler | None, rebirth: Callable[[], None],
                 publish_event: Callable[[OutboxRow], None], resend_batch: int = 100,
                 clock_s: Callable[[], float] | None = None, call_later: Schedule | None = None) -> None:
        self.topics = topics
        self.adapter = adapter
        self.outbox = outbox
        self.verifier = verifier
        self.on_command = on_command
        self.rebirth = rebirth
        self.publish_event = publish_event
        self.resend_batch = resend_batch
        self.done = 0
        self.refused = 0
        self.resent = 0
        self.refusal_log = LogLimiter(log, clock_s or (lambda: 0.0), "refused commands", call_later=call_later)

    def handle(self, verb: str, message: InboundMessage) -> None:
        try:
            bridged = message.response_topic is None and message.message_expiry_s is None
            if not bridged and (message.message_expiry_s is None or message.message_expiry_s <= 0):
                raise CommandRefused("a command must carry an MQTT 5 message expiry")
            # (a command with no MQTT 5 properties at all crossed an MQTT 3.1.1 bridge from a chain's cluster:
            # its signed expires_at bounds it alone, and it is carried out without an answer)
            if self.verifier is None:
                raise CommandRefused("this table takes no commands (no command key in its [fleet] section)")
            command = self.verifier.verify(verb, message.payload)
            result = self._carry_out(command)
        except CommandRefused as exc:
            self.refused += 1
            self.refusal_log.warning("fleet %s: cmd/%s refused: %s", self.topics.table, verb[:32], exc)
            self._respond(verb, message, False, str(exc), None)
            return
        self.done += 1
        log.info("fleet %s: cmd/%s by %s done", self.topics.table, verb, command.issuer)
        self._respond(verb, message, True, None, result)

    def _carry_out(self, command: Command) -> Any:
        if command.verb is Verb.REBIRTH:
            self.rebirth()
            return {}
        if command.verb is Verb.RESEND_SINCE:
            return self._resend(command.args["seq"])
        if self.on_command is None:
            raise CommandRefused(f"this table does not take {command.verb.value} over the fleet")
        try:
            return self.on_command(command.verb.value, dict(command.args), command.issuer)
        except CommandRefused:
            raise
        except Exception as exc:                       # noqa: BLE001 (answered, logged with its traceback)
            log.exception("fleet %s: the command handler failed", self.topics.table)
            raise CommandRefused(f"failed at the table: {exc}") from None

    def _resend(self, after: int) -> dict[str, Any]:
        if not isinstance(after, int) or not 0 <= after <= MAX_SEQ:    # (the verifier refuses it first)
            raise CommandRefused(f"resend_since: seq out of range (a bad argument: from 0 to {MAX_SEQ})")
        try:
            rows = self.outbox.since(after, self.resend_batch)
            oldest, last = self.outbox.oldest_kept(), self.outbox.meta().last_seq
        except (OverflowError, TypeError) as exc:      # (a value SQLite cannot bind: the argument, not the card)
            raise CommandRefused(f"resend_since: a bad argument ({exc})") from None
        except Exception as exc:                       # noqa: BLE001 (a failing card)
            raise CommandRefused(f"the outbox cannot be read: {exc}") from None
        for row in rows:
            self.publish_event(row)
        self.resent += len(rows)
        through = rows[-1].seq if rows else max(after, last)
        return {"after": after, "published": len(rows), "through": through, "oldest_kept": oldest,
                "last_seq": last, "more": through < last}

    def _respond(self, verb: str, message: InboundMessage, ok: bool, error: str | None, result: Any) -> None:
        if not message.response_topic:
            return
        if not self.topics.owns_response_topic(message.response_topic):
            self.refusal_log.warning("fleet %s: cmd/%s not answered: the response topic %r is outside %s",
                                   self.topics.table,
                        verb[:32], message.response_topic[:128], self.topics.response_prefix)
            return
        props = PublishProperties(correlation_data=message.correlation_data, message_expiry_s=RESPONSE_EXPIRY_S)
        self.adapter.publish(message.response_topic, messages.response(verb[:32], ok, error, result), 1, False, props)
