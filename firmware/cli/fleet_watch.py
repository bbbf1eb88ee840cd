"""``mjtable fleet watch``: every table of a site, live in the terminal (rich) or as JSON lines.

The console is a :class:`~firmware.fleet.consumer.ConsumerClient` on the
real-time loop: it subscribes to ``mj/v1/<site>/tbl/+/#`` and redraws a
table in place twice a second (online or offline, state, hand, dealer,
chips, outbox depth, seconds since last heard, its release, active faults
with their hints).  The release column is the table's own ``meta``: the
version it runs and, during a staged update (``mjtable fleet release``), the
rollout it is in, its wave and where the table stands: ``pending``
(installing, or restarting into the new release), ``installed``, ``failed``
(with the table's reason), ``rolling back``, ``rolled back``.  A broker
refusing the account stops it at once with what to do; a site with no table
heard says why that may be (the ACL drops silently).
``--json`` prints one object per line for every change instead (a leaf, an
``avail``, a new event; duplicates are dropped).  ``--once`` waits until the
broker has delivered what it holds (no message for half a second), prints
it, and stops.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any

from firmware.cli.words import N_, _, ngettext, state
from firmware.cli.error_words import said
from firmware.faults import TableError
from firmware.ports.broker import parse_broker_url
from firmware.fleet.consumer import Change, ConsumerClient, FleetConsumer, TableView

QUIET_S = 0.5
REFRESH_S = 0.5


def password_from_file(path: Any) -> str:
    """An account's password: the first line of the file, stripped ('' for an empty file)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[0].strip() if lines else ""


def client_settings(args: argparse.Namespace, prefix: str = "watch") -> Any:
    """The broker connection from the command line: --broker, --ca, --cert, --key, --user, --password-file."""
    from firmware.fleet.mqtt.client import ClientSettings

    try:
        broker = parse_broker_url(args.broker)
    except ValueError as exc:
        raise TableError(_("--broker: %(problem)s") % {"problem": said(exc)}) from None
    password = password_from_file(args.password_file) if args.password_file is not None else None
    if broker.tls and args.ca is None:
        raise TableError(_("--ca: the parlour's ca.crt is needed with mqtts://"))
    for option, path in (("--ca", args.ca), ("--cert", args.cert), ("--key", args.key)):
        if path is not None and not path.is_file():
            raise TableError(_("%(option)s %(path)s: no such file") % {"option": option, "path": path})
    return ClientSettings(f"{prefix}-{secrets.token_hex(4)}", broker, ca_file=str(args.ca) if args.ca else None,
                          cert_file=str(args.cert) if args.cert else None,
                          key_file=str(args.key) if args.key else None, username=args.user, password=password)


def refused_advice(args: argparse.Namespace) -> str:
    """What to do when the broker refused who connected (its CONNACK's "Not authorized")."""
    if args.user is None:
        return _("this listener wants an account: give --user (e.g. staff.viewer) and --password-file (its "
                 "password, from the credentials file broker-config wrote)")
    return _("check --user %(user)s and --password-file: the account's password is in the credentials file "
             "broker-config wrote for this broker") % {"user": args.user}


def nothing_heard(args: argparse.Namespace) -> str:
    """Why a site can show no table at all."""
    who = args.user or _("this connection")
    return _("no table of site %(site)s reached %(who)s: none has published, or the broker's ACL does not let "
             "%(who)s read site %(site)s (it drops what an account may not read without a word; a staff account "
             "reads the site broker-config --site made it for)") % {"site": args.site, "who": who}


def _line(change: Change, view: TableView | None) -> dict[str, Any]:
    if change.what == "event":
        m = change.message
        return {"table": change.table, "what": "event", "kind": m.get("kind"), "msg_id": m.get("msg_id"),
                "seq": m.get("seq"), "data": m.get("data")}
    return {"table": change.table, "what": change.what, "view": view.as_dict() if view else None}


def fault_hint(fault: dict) -> str:
    """A fault a table reports, as its code and its hint in this language (the registry's words for a code it
    knows; the table's own English otherwise)."""
    from firmware.faults import FaultCode

    code = fault.get("code")
    if isinstance(code, str) and code in FaultCode.__members__:
        return f"{code} {_(FaultCode(code).hint)}"
    return f"{code or '?'} {fault.get('hint') or fault.get('text') or ''}".strip()


def _faults(view: TableView) -> str:
    out = [fault_hint(fault) for fault in view.faults[:4] if isinstance(fault, dict)]
    more = len(view.faults) - 4
    return "\n".join(out) + ("\n" + _("(+%(more)s more)") % {"more": more} if more > 0 else "")


RELEASE_WORDS = {"installing": N_("pending"), "restarting": N_("pending"), "installed": N_("installed"),
                 "failed": N_("failed"), "rolling back": N_("rolling back"), "rolled back": N_("rolled back"),
                 "rollback failed": N_("rollback failed"), "kept": N_("kept")}


def release_cell(meta: dict) -> str:
    """The release column: the version running, and the staged update the table reports (see the module)."""
    firmware = meta.get("firmware")
    lines = [str(firmware) if isinstance(firmware, str) else "?"]
    release = meta.get("release")
    if isinstance(release, dict) and isinstance(release.get("state"), str):
        state = release["state"]
        word = _(RELEASE_WORDS[state]) if state in RELEASE_WORDS else state[:20]
        target = str(release.get("target", "?"))[:64]
        lines.append(f"{word} {target}" if state not in ("rolled back", "rolling back", "kept")
                     else _("%(word)s from %(target)s") % {"word": word, "target": target})
        if isinstance(release.get("rollout"), str):
            wave = _(", wave %(wave)s") % {"wave": release["wave"]} if isinstance(release.get("wave"), int) else ""
            lines.append(f"{release['rollout'][:64]}{wave}")
        if isinstance(release.get("error"), str) and release["error"]:
            lines.append(release["error"].strip().splitlines()[0][:120])
    return "\n".join(lines)


def state_cell(name: Any) -> str:
    """The state column: a controller state in words; what is not one of its states as the table wrote it."""
    from firmware.web.i18n import STATES

    if not isinstance(name, str) or not name:
        return ""
    return state(name) if name in STATES else name[:32]


COLUMNS = (N_("table"), N_("link"), N_("state"), N_("hand"), N_("dlr"), N_("chips"), N_("outbox"), N_("heard"))
LINKS = {"online": N_("online"), "offline": N_("offline"), "stale": N_("stale")}


def render(consumer: FleetConsumer, now_s: float, empty_hint: str = "") -> Any:
    """The site as a rich table (``empty_hint``: its caption while no table was heard)."""
    from rich.table import Table

    tables = len(consumer.tables)
    title = ngettext("site %(site)s: %(tables)s table, %(online)s online",
                     "site %(site)s: %(tables)s tables, %(online)s online", tables) % {
        "site": consumer.site, "tables": tables, "online": sum(1 for v in consumer.tables.values() if v.online)}
    table = Table(title=title, expand=False, caption=empty_hint if not consumer.tables else None)
    for column in COLUMNS:
        table.add_column(_(column), no_wrap=True)
    table.add_column(_("faults: hint"), overflow="fold", min_width=16)
    table.add_column(_("release"), overflow="fold", min_width=12)
    for name in sorted(consumer.tables):
        v = consumer.tables[name]
        status = v.status(now_s)
        link = _(LINKS[status]) if status in LINKS else "?"
        release = v.meta.get("release") if isinstance(v.meta.get("release"), dict) else {}
        failed = release.get("state") in ("failed", "rollback failed")
        style = "red" if status in ("offline", "stale") else ("yellow" if v.faults or failed else "")
        chips = v.state.get("chips")
        table.add_row(name, link, state_cell(v.state.get("state")), str(v.state.get("hand", "")),
                      str(v.state.get("dealer", "")), " ".join(map(str, chips)) if isinstance(chips, list) else "",
                      "" if v.outbox_depth() is None else str(v.outbox_depth()),
                      _("%(seconds)s s") % {"seconds": f"{max(0.0, now_s - v.last_seen_s):.0f}"}, _faults(v),
                      release_cell(v.meta), style=style)
    return table


def watch(args: argparse.Namespace) -> int:
    from firmware.fleet.mqtt.client import PahoAdapter
    from firmware.fleet.mqtt.network import MqttNetwork
    from firmware.root.host import HOST_CLOCK, real_loop

    settings = client_settings(args)
    loop = real_loop()
    network = MqttNetwork("watch", clock=HOST_CLOCK).start()
    consumer = FleetConsumer(args.site)
    state = {"last_message_s": None, "printed": False}

    def on_change(change: Change) -> None:
        state["last_message_s"] = loop.now()
        if args.json and not args.once and change.what not in ("duplicate", "stale", "bad"):
            print(json.dumps(_line(change, consumer.tables.get(change.table)), ensure_ascii=False), flush=True)

    client = ConsumerClient(loop, PahoAdapter(network, loop.post, settings), consumer,
                            wall_clock_s=HOST_CLOCK.wall_s, on_change=on_change, name=settings.client_id)
    hint = nothing_heard(args)
    limit_s = args.seconds if args.seconds is not None else (5.0 if args.once else None)
    live = None
    try:
        if not args.json and not args.once:
            from rich.live import Live

            live = Live(render(consumer, HOST_CLOCK.wall_s()), refresh_per_second=4, transient=False)
            live.start()

        def tick() -> None:
            if client.refused:
                loop.stop()
                return
            quiet = state["last_message_s"] is not None and loop.now() - state["last_message_s"] >= QUIET_S
            if args.once and client.subscribed and (quiet or (state["last_message_s"] is None
                                                              and loop.now() >= 2 * QUIET_S)):
                loop.stop()
                return
            if limit_s is not None and loop.now() >= limit_s:
                loop.stop()
                return
            if live is not None:
                live.update(render(consumer, HOST_CLOCK.wall_s(), hint if client.subscribed else ""))
            loop.call_later(QUIET_S / 5 if args.once else REFRESH_S, tick)

        loop.call_later(0.0, client.start)
        loop.call_later(0.0, tick)
        loop.run_forever()
    finally:
        if live is not None:
            live.update(render(consumer, HOST_CLOCK.wall_s(), hint if client.subscribed else ""))
            live.stop()
        client.stop()
        network.stop()
    if client.refused:
        print("mjtable: " + _("%(broker)s: the broker refused %(who)s: %(reason)s: %(advice)s") % {
            "broker": args.broker, "who": args.user or _("a connection without an account"),
            "reason": client.refused, "advice": refused_advice(args)}, file=sys.stderr)
        return 1
    if not client.subscribed and not consumer.tables:
        print("mjtable: " + _("%(broker)s: no answer (%(error)s)") % {
            "broker": args.broker, "error": client.last_error or _("not connected")}, file=sys.stderr)
        return 1
    if not consumer.tables:
        print(f"mjtable: {hint}", file=sys.stderr)
    if args.once:
        if args.json:
            for name in sorted(consumer.tables):
                print(json.dumps(consumer.tables[name].as_dict(), ensure_ascii=False))
        else:
            from rich.console import Console

            Console().print(render(consumer, HOST_CLOCK.wall_s()))
    return 0
