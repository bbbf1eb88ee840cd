"""``mjtable tourney serve``: the hall's tournament service on a broker: seat rounds, collect results, standings.

Connects to the site's broker with a persistent session (the broker keeps
the tables' events for it while it is away, for a day), subscribes to the
site, and hands every change to :class:`~parlour.service.HallService`.
``--round N`` opens round N (repeatable: each opens when the one before it
has all its results, since a table's retained assignment is one message and
a new round's would replace the one it has not taken yet): its assignments
are published when the subscription is in place, and again after every
reconnect (the same ids: the tables take each once).  A round with all its
results has its seats withdrawn from the tables (an empty retained
assignment), so that no table plays a finished round's seats again.  ``--until-complete`` stops once every round
named has all its results (the standings published last); otherwise it runs
until SIGINT or SIGTERM.  Signatures use the parlour's command key
(``mjtable fleet certs command-key``): the tables check assignments with it.
"""

from __future__ import annotations

import argparse
import logging
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from firmware.cli.words import _

log = logging.getLogger(__name__)

TICK_S = 1.0
FLUSH_S = 1.0


def register(action: Callable[..., argparse.ArgumentParser], run: Callable[[argparse.Namespace], int]) -> None:
    serve = action("serve", _("the hall's service: seat rounds on the fleet's tables, collect results, publish "
                     "standings"), run)
    serve.add_argument("--broker", required=True, help=_("the site's broker, mqtt://HOST:PORT or mqtts://HOST:PORT"))
    serve.add_argument("--site", required=True, help=_("the site id the tables publish under"))
    serve.add_argument("--tables", required=True,
                       help=_("the site's table ids for the event's tables T1, T2, ... in order (t001,t002,...)"))
    serve.add_argument("--command-key", required=True, type=Path, metavar="FILE",
                       help=_("the parlour's command signing key (the tables check assignments with its public half)"))
    serve.add_argument("--round", type=int, action="append", default=[], metavar="N",
                       help=_("open round N: seat its tables (repeatable: the next when the one before is complete)"))
    serve.add_argument("--until-complete", action="store_true",
                       help=_("stop when every --round has all its results"))
    serve.add_argument("--seconds", type=float, help=_("stop after this long (default: until stopped)"))
    serve.add_argument("--ca", type=Path, help=_("the parlour's ca.crt (mqtts://)"))
    serve.add_argument("--cert", type=Path, help=_("this service's client certificate"))
    serve.add_argument("--key", type=Path, help=_("its private key"))
    serve.add_argument("--user", help=_("the broker account (e.g. service.tourney)"))
    serve.add_argument("--password-file", type=Path, help=_("a file whose first line is the account's password"))


def serve(args: argparse.Namespace) -> int:
    """Run the service (see the module); 0 when stopped or complete, 2 when the broker refused it."""
    from firmware.cli.fleet_watch import client_settings
    from firmware.fleet.assignment_auth import sign_assignment
    from firmware.fleet.command_auth import load_signing_key, sign_command
    from firmware.fleet.consumer import ConsumerClient
    from firmware.fleet.mqtt.client import PahoAdapter
    from firmware.fleet.mqtt.network import MqttNetwork
    from firmware.ports.broker import PublishProperties
    from firmware.root.host import HOST_CLOCK, real_loop
    from parlour.service import HallService

    key = load_signing_key(args.command_key)
    event_id = args.store.event_id(args.event)
    settings = client_settings(args, prefix="tourney")
    state = args.store.state(event_id)
    for round_no in args.round:
        if round_no not in state.seatings:
            raise ValueError(_("--round %(round)s: the event has rounds 1 to %(rounds)s")
                             % {"round": round_no, "rounds": state.fmt.rounds})
    settings = replace(settings, client_id=f"tourney-{args.site}-{state.fmt.name}"[:64],
                       session_expiry_s=24 * 3600)
    loop = real_loop()
    network = MqttNetwork("tourney", clock=HOST_CLOCK).start()
    adapter = PahoAdapter(network, loop.post, settings)

    def publish(topic: str, payload: bytes, retain: bool, response: str | None) -> None:
        props = PublishProperties(response, None, 60) if response else None
        adapter.publish(topic, payload, 1, retain, props)

    service = HallService(
        args.store, event_id, args.site, [t.strip() for t in args.tables.split(",") if t.strip()],
        sign_assignment=lambda site, table, data, at, until: sign_assignment(
            key, site=site, table=table, assignment=data, issued_at=at, expires_at=until),
        sign_resend=lambda site, table, seq, at: sign_command(
            key, site=site, table=table, verb="resend_since", args={"seq": max(0, seq)}, issuer="tourney",
            issued_at=at),
        publish=publish, wall_s=HOST_CLOCK.wall_s, requester="tourney")
    for round_no in args.round:                     # every table named before anything is published
        for table in state.seatings[round_no]["tables"]:
            service.fleet_table(table["table"])
    client = ConsumerClient(loop, adapter, service.consumer, wall_clock_s=HOST_CLOCK.wall_s,
                            on_change=service.on_change, name=settings.client_id)
    seen: dict[str, Any] = {"session": None, "round": None, "cleared": set()}
    outcome: dict[str, Any] = {"code": 0}

    def tick() -> None:
        if client.refused:
            outcome["code"] = 2
            outcome["why"] = client.refused
            loop.stop()
            return
        if client.subscribed:
            for round_no in args.round:                 # a round complete: its seats withdrawn from the tables
                if round_no not in seen["cleared"] and service.round_complete(round_no):
                    service.clear_assignments()
                    seen["cleared"].add(round_no)
            current = next((r for r in args.round if not service.round_complete(r)), None)
            fresh = seen["session"] != client.session
            if current is not None and (fresh or seen["round"] != current):
                service.open_round(current)             # (again on a fresh subscription: the same ids)
                seen["round"] = current
            if fresh:
                seen["session"] = client.session
                service.publish_standings()
        if client.subscribed:
            service.ask_for_gaps()
        if args.until_complete and args.round and all(r in seen["cleared"] for r in args.round):
            log.info("every round named is complete")
            loop.call_later(FLUSH_S, loop.stop)         # (the withdrawals reach the broker first)
            return
        if args.seconds is not None and loop.now() >= args.seconds:
            loop.stop()
            return
        loop.call_later(TICK_S, tick)

    def stop(*_: object) -> None:
        loop.post(loop.stop)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        loop.call_later(0.0, client.start)
        loop.call_later(0.1, tick)
        loop.run_forever()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        client.stop()
        network.stop()
    counters = service.counters
    print(_("%(event)s: %(results)s results and %(hands)s hands taken (%(results_again)s results and "
            "%(hands_again)s hands told again, dropped); %(resends)s resends asked")
          % {"event": state.fmt.name, "results": counters.results, "hands": counters.hands,
             "results_again": counters.results_repeated, "hands_again": counters.hands_repeated,
             "resends": counters.resend_asked})
    if outcome["code"]:
        print("mjtable: " + _("the broker refused the service: %(why)s") % {"why": outcome["why"]})
    return outcome["code"]
