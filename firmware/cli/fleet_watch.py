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
        raise TableError(f"--broker: {exc}") from None
    password = password_from_file(args.password_file) if args.password_file is not None else None
    if broker.tls and args.ca is None:
        raise TableError("--ca: the parlour's ca.crt is needed with mqtts://")
    for option, path in (("--ca", args.ca), ("--cert", args.cert), ("--key", args.key)):
        if path is not None and not path.is_file():
            raise TableError(f"{option} {path}: no such file")
    return ClientSettings(f"{prefix}-{secrets.token_hex(4)}", broker, ca_file=str(args.ca) if args.ca else None,
                          cert_file=str(args.cert) if args.cert else None,
                          key_file=str(args.key) if args.key else None, username=args.user, password=password)


def refused_advice(args: argparse.Namespace) -> str:
    """What to do when the broker refused who connected (its CONNACK's "Not authorized")."""
    if args.user is None:
        return ("this listener wants an account: give --user (e.g. staff.viewer) and --password-file (its "
                "password, from the credentials file broker-config wrote)")
    return (f"check --user {args.user} and --password-file: the account's password is in the credentials file "
            f"broker-config wrote for this broker")


def nothing_heard(args: argparse.Namespace) -> str:
    """Why a site can show no table at all."""
    who = args.user or "this connection"
    return (f"no table of site {args.site} reached {who}: none has published, or the broker's ACL does not let {who} "
            f"read site {args.site} (it drops what an account may not read without a word; a staff account reads "
            f"the site broker-config --site made it for)")


def _line(change: Change, view: TableView | None) -> dict[str, Any]:
    if change.what == "event":
        m = change.message
        return {"table": change.table, "what": "event", "kind": m.get("kind"), "msg_id": m.get("msg_id"),
                "seq": m.get("seq"), "data": m.get("data")}
    return {"table": change.table, "what": change.what, "view": view.as_dict() if view else None}


def _faults(view: TableView) -> str:
    out = []
    for fault in view.faults[:4]:
        if isinstance(fault, dict):
            out.append(f"{fault.get('code', '?')} {fault.get('hint') or fault.get('text') or ''}".strip())
    return "\n".join(out) + (f"\n(+{len(view.faults) - 4} more)" if len(view.faults) > 4 else "")


RELEASE_WORDS = {"installing": "pending", "restarting": "pending", "installed": "installed", "failed": "failed",
                 "rolling back": "rolling back", "rolled back": "rolled back", "rollback failed": "rollback failed",
                 "kept": "kept"}


def release_cell(meta: dict) -> str:
    """The release column: the version running, and the staged update the table reports (see the module)."""
    firmware = meta.get("firmware")
    lines = [str(firmware) if isinstance(firmware, str) else "?"]
    release = meta.get("release")
    if isinstance(release, dict) and isinstance(release.get("state"), str):
        word = RELEASE_WORDS.get(release["state"], release["state"][:20])
        target = str(release.get("target", "?"))[:64]
        lines.append(f"{word} {target}" if release["state"] not in ("rolled back", "rolling back", "kept")
                     else f"{word} from {target}")
        if isinstance(release.get("rollout"), str):
            wave = f", wave {release['wave']}" if isinstance(release.get("wave"), int) else ""
            lines.append(f"{release['rollout'][:64]}{wave}")
        if isinstance(release.get("error"), str) and release["error"]:
            lines.append(release["error"].strip().splitlines()[0][:120])
    return "\n".join(lines)


def render(consumer: FleetConsumer, now_s: float, empty_hint: str = "") -> Any:
    """The site as a rich table (``empty_hint``: its caption while no table was heard)."""
    from rich.table import Table

    table = Table(title=f"site {consumer.site}: {len(consumer.tables)} tables, "
                        f"{sum(1 for v in consumer.tables.values() if v.online)} online", expand=False,
                  caption=empty_hint if not consumer.tables else None)
    for column in ("table", "link", "state", "hand", "dlr", "chips", "outbox", "heard"):
        table.add_column(column, no_wrap=True)
    table.add_column("faults: hint", overflow="fold", min_width=16)
    table.add_column("release", overflow="fold", min_width=12)
    for name in sorted(consumer.tables):
        v = consumer.tables[name]
        link = v.status(now_s)
        link = "?" if link == "unknown" else link
        release = v.meta.get("release") if isinstance(v.meta.get("release"), dict) else {}
        failed = release.get("state") in ("failed", "rollback failed")
        style = "red" if link in ("offline", "stale") else ("yellow" if v.faults or failed else "")
        chips = v.state.get("chips")
        table.add_row(name, link, str(v.state.get("state", "")), str(v.state.get("hand", "")),
                      str(v.state.get("dealer", "")), " ".join(map(str, chips)) if isinstance(chips, list) else "",
                      "" if v.outbox_depth() is None else str(v.outbox_depth()),
                      f"{max(0.0, now_s - v.last_seen_s):.0f}s", _faults(v), release_cell(v.meta), style=style)
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
        print(f"mjtable: {args.broker}: the broker refused {args.user or 'a connection without an account'}: "
              f"{client.refused}: {refused_advice(args)}", file=sys.stderr)
        return 1
    if not client.subscribed and not consumer.tables:
        print(f"mjtable: {args.broker}: no answer ({client.last_error or 'not connected'})", file=sys.stderr)
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
