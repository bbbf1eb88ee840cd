"""``mjtable fleet send``: a technician's signed command to one table, and the table's answer.

The command is signed with the console's key (``--sign-key``: the parlour's
Ed25519 private key or the table's HMAC secret), published on the table's
``cmd/<verb>`` with an MQTT 5 message expiry, a response topic inside the
table's ``resp/`` and correlation data; the answer is printed as JSON.
Exit 0 when the table carried it out, 1 when it refused (its reason is the
answer's ``error``, said on standard error in the command line's language
too: a refusal's code worded) or did not answer in time.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any

from firmware.cli.words import _
from firmware.faults import TableError
from firmware.fleet.command_auth import MAX_SEQ
from firmware.ports.broker import InboundMessage, PublishProperties
from firmware.fleet.topics import TableTopics, Verb, check_id


def command_args(verb: str, value: str | None) -> dict[str, Any]:
    """The command's arguments from the command line's VALUE."""
    if verb == Verb.ACK.value:
        if not value:
            raise TableError(_("ack: give the fault code, e.g. mjtable fleet send ... ack E41"))
        return {"code": value}
    if verb == Verb.RESEND_SINCE.value:
        if value is None or not (value.isascii() and value.isdigit()):
            raise TableError(_("resend_since: give the seq after which to resend (a whole number)"))
        if len(value) > 19 or int(value) > MAX_SEQ:
            raise TableError(_("resend_since: seq %(seq)s is out of range (from 0 to %(max)s)")
                             % {"seq": value[:24] + ("..." if len(value) > 24 else ""), "max": MAX_SEQ})
        return {"seq": int(value)}
    if verb == Verb.SESSION_OPEN.value:
        if value is None or not (value.isascii() and value.isdigit()) or not 1 <= int(value[:6]) <= 24 * 60:
            raise TableError(_("session_open: give the minutes the table is open, 1 to 1440, e.g. "
                               "mjtable fleet send ... session_open 60"))
        return {"minutes": int(value)}
    if value is not None:
        raise TableError(_("%(verb)s takes no value") % {"verb": verb})
    return {}


class _Asker:
    """Connect, subscribe to the answer, send, wait for the answer (on the loop's thread)."""

    def __init__(self, loop: Any, adapter: Any, topic: str, payload: bytes, reply_topic: str, ttl_s: int) -> None:
        self.loop, self.adapter = loop, adapter
        self.topic, self.payload, self.reply_topic, self.ttl_s = topic, payload, reply_topic, ttl_s
        self.correlation = secrets.token_bytes(8)
        self.answer: dict | None = None
        self.error = ""
        self.said = ""                                   # (the error in this language)
        self._sub = -1

    def on_connected(self, session: int, ok: bool, reason: str) -> None:
        if not ok:
            self.error = f"connect refused: {reason}"         # (English: refused_who reads it)
            self.said = _("connect refused: %(reason)s") % {"reason": reason}
            self.loop.stop()
            return
        self._sub = self.adapter.subscribe(self.reply_topic, 1)

    def on_connection_lost(self, session: int, reason: str) -> None:
        self.error = self.said = _("connection lost: %(reason)s") % {"reason": reason}
        self.loop.stop()

    def on_subscribed(self, session: int, token: int, granted: list[int]) -> None:
        if token != self._sub:
            return
        if any(code >= 0x80 for code in granted):
            self.error = self.said = _("the broker refused the answer's subscription (codes %(codes)s)") % {
                "codes": granted}
            self.loop.stop()
            return
        props = PublishProperties(self.reply_topic, self.correlation, self.ttl_s)
        self.adapter.publish(self.topic, self.payload, 1, False, props)

    def on_published(self, session: int, token: int, ok: bool, reason: str) -> None:
        if not ok:
            self.error = self.said = _("the broker refused the command: %(reason)s") % {"reason": reason}
            self.loop.stop()

    def on_message(self, session: int, message: InboundMessage) -> None:
        if message.topic == self.reply_topic and message.correlation_data == self.correlation:
            try:
                self.answer = json.loads(message.payload)
            except ValueError:
                self.answer = {"ok": False, "error": "an answer that is not JSON"}
            self.loop.stop()


def send(args: argparse.Namespace) -> int:
    from firmware.cli.fleet_watch import client_settings, refused_advice
    from firmware.ports.broker import refused_who
    from firmware.fleet.command_auth import ISSUER_RE, load_signing_key, sign_command
    from firmware.fleet.mqtt.client import PahoAdapter
    from firmware.fleet.mqtt.network import MqttNetwork
    from firmware.root.host import HOST_CLOCK, real_loop

    check_id(args.site, "--site")
    topics = TableTopics(args.site, check_id(args.table, "--table"))
    fields = command_args(args.verb, args.value)
    if not ISSUER_RE.match(args.issuer):
        raise TableError(_("--issuer %(issuer)r: 1 to 64 letters, digits, '_', '.', '@' or '-'")
                         % {"issuer": args.issuer})
    key = load_signing_key(args.sign_key)
    settings = client_settings(args, prefix="console")
    payload = sign_command(key, site=args.site, table=args.table, verb=args.verb, args=fields, issuer=args.issuer,
                           issued_at=HOST_CLOCK.wall_s(), ttl_s=args.ttl_s)
    loop = real_loop()
    network = MqttNetwork("send", clock=HOST_CLOCK).start()
    adapter = PahoAdapter(network, loop.post, settings)
    asker = _Asker(loop, adapter, topics.command(args.verb), payload, topics.response(settings.client_id),
                   int(args.ttl_s))
    try:
        loop.call_later(0.0, adapter.connect, 1, None, asker)
        loop.call_later(args.seconds, loop.stop)
        loop.run_forever()
    finally:
        adapter.disconnect()
        network.stop()
    if asker.answer is None:
        error = asker.said or _("no answer within %(seconds)s s") % {"seconds": f"{args.seconds:g}"}
        if asker.error.startswith("connect refused") and refused_who(asker.error):
            error += f" ({refused_advice(args)})"
        print("mjtable: " + _("table %(table)s: %(error)s") % {"table": args.table, "error": error},
              file=sys.stderr)
        return 1
    print(json.dumps(asker.answer, ensure_ascii=False))        # (the answer is data: as the table gave it)
    if asker.answer.get("ok") is True:
        return 0
    from firmware.cli.words import refusal

    why = refusal(asker.answer) or str(asker.answer.get("error") or _("no reason given"))
    print("mjtable: " + _("table %(table)s refused: %(why)s") % {"table": args.table, "why": why}, file=sys.stderr)
    return 1
