"""The fleet link wired to one table: built from its ``[fleet]`` section, told of changes by the bus, answering ack.

The composition root (:func:`firmware.root.table.build_table`) builds a
:class:`TableLink` when the table model has a ``[fleet]`` section and the
entry point hands in a :class:`FleetPlug` (the MQTT client to use, the wall
clock, and the loop the link runs on: the table's own on a table, the
fleet simulator's real-time one in ``sim --fleet``).

The link is an observer.  It subscribes to the bus (state changes, deals,
faults, their acknowledges, results, the scoreboard) and, for each burst of
events, only *posts* a call to itself on its loop: nothing the table does
waits for it or can be changed by it, and the fault path never reaches it
(the controller writes a fault and its ``evt/fault`` row in one transaction
of the table database; the link later reads the row).  What it reads:
:func:`~firmware.fleet.table_status.table_status` and the outbox.  What it
does to the table: marks outbox rows sent, and carries out an authenticated
``ack`` of a *recoverable* fault through
:meth:`~firmware.controller.fault_policy.FaultPolicy.acknowledge_recoverable`
(rows and event in one batch; nothing moves).  A plug with an installer
(the service's: ``mjtable run``) also takes ``update`` and ``rollback`` of a
staged update (:mod:`firmware.fleet.update_desk`), whose outcome it carries in
the ``meta`` leaf, from the first ``meta`` after the restart into a new release.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from firmware.faults import ConfigError
from firmware.ports.broker import MqttAdapter
from firmware.fleet.assignment_auth import AssignmentRefused, AssignmentVerifier
from firmware.game.staff import StaffError
from firmware.game.assignment import AssignmentError
from firmware.fleet.command_auth import CommandRefused, CommandVerifier, NonceStore, load_verify_keys
from firmware.fleet.link import FleetLink
from firmware.fleet.link_settings import LinkSettings
from firmware.fleet.table_files import problem_lines
from firmware.fleet.table_status import table_meta, table_status
from firmware.fleet.update_desk import Installer, UpdateDesk
from firmware.loop import Loop

if TYPE_CHECKING:
    from firmware.config import FleetSection, TableConfig
    from firmware.game.session import TableSession

log = logging.getLogger(__name__)

AdapterFactory = Callable[["TableConfig", Callable[..., None]], MqttAdapter]   # (table model, post) -> client
WATCHED = ("controller.state", "deal", "fault", "controller.acknowledged", "controller.fault_acknowledged",
           "hand.settled", "hand.money", "scoreboard", "assignment", "warning")


@dataclass(frozen=True)
class FleetPlug:
    """What an entry point hands in for telemetry: ``adapter(cfg, post)`` makes the table's MQTT client (its
    reports go through ``post``), ``wall_clock_s`` gives Unix seconds, ``loop`` is the link's loop (None: the
    table's own), ``settings`` override the section's (tests, the simulator); ``close`` ends what the adapter
    needs (a table's network thread) once the link has stopped; ``on_refusal(table, why)`` is told when the
    broker refuses the table (None: the link logs it); ``installer`` carries out a staged update's ``update`` and
    ``rollback`` (None: the table takes neither), and ``restart()`` ends the service so that systemd starts it
    again into the release then current."""

    adapter: AdapterFactory
    wall_clock_s: Callable[[], float]
    loop: Loop | None = None
    settings: LinkSettings | None = None
    close: Callable[[], None] | None = None
    on_refusal: Callable[[str, str], None] | None = None
    installer: Installer | None = None
    restart: Callable[[], None] | None = None


def settings_of(section: "FleetSection") -> LinkSettings:
    """The link's settings from the table model's ``[fleet]`` section."""
    return LinkSettings(state_min_interval_s=section.state_min_interval_s,
                        counters_period_s=section.counters_period_s,
                        first_connect_spread_s=section.first_connect_spread_s,
                        backoff_max_s=section.backoff_max_s)


def verifier_of(cfg: "TableConfig", wall_clock_s: Callable[[], float],
                store: NonceStore | None = None) -> CommandVerifier | None:
    """The command verifier from ``command_key_file`` (None: the table takes no commands), keeping the accepted
    commands' nonces in ``store`` (the table database); ConfigError names the file when its keys cannot be
    read."""
    section = cfg.fleet
    assert section is not None
    if section.command_key_file is None:
        return None
    path = cfg.base_dir / section.command_key_file
    try:
        keys = load_verify_keys(path)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{cfg.source or 'the table model'}: table [fleet] key 'command_key_file': {exc}") from None
    return CommandVerifier(section.site, section.table_id, keys, wall_clock_s, boot_wall_s=wall_clock_s(),
                           store=store)


class TableLink:
    """One table's telemetry (see the module's docstring); :meth:`start` after the controller started."""

    def __init__(self, session: "TableSession", cfg: "TableConfig", plug: FleetPlug) -> None:
        section = cfg.fleet
        if section is None:
            raise ValueError("a table link needs the table model's [fleet] section")
        self.session = session
        self.c = session.controller
        self.cfg = cfg
        self.plug = plug
        self.loop = plug.loop or self.c.table.loop
        events = session.store.event_outbox()
        verifier = verifier_of(cfg, plug.wall_clock_s, events)
        self.assignments = AssignmentVerifier(section.site, section.table_id, verifier.keys, plug.wall_clock_s) \
            if verifier is not None else None
        self.adapter = plug.adapter(cfg, self.loop.post)
        meta = table_meta(cfg, session.rules)
        self.updates: UpdateDesk | None = None
        if plug.installer is not None:
            self.updates = UpdateDesk(plug.installer, self.loop.post, self._report_release, restart=plug.restart)
            outcome = plug.installer.outcome()
            if outcome is not None:
                meta["release"] = outcome
                log.warning("fleet: the last %s %s: %s%s", "rollback from" if "roll" in outcome["state"] else
                            "update to", outcome["target"], outcome["state"],
                            f" ({outcome['error']})" if outcome.get("error") else "")
        self.link = FleetLink(self.loop, self.adapter, events, self._status,
                              self._command, site=section.site, table=section.table_id,
                              meta=meta, wall_clock_s=plug.wall_clock_s,
                              verifier=verifier, settings=plug.settings or settings_of(section),
                              count_boot=False,      # (build_table counts every power-on, link or not)
                              on_refusal=self._refused if plug.on_refusal is not None else None,
                              on_assignment=self._assignment)
        self._posted = False
        self._subscriptions = [self.c.table.bus.subscribe(topic, self._changed) for topic in WATCHED]

    @property
    def table_id(self) -> str:
        return self.link.topics.table

    def start(self) -> None:
        """Start the link, unless a file of the ``[fleet]`` section is missing or wrong: then one error names it
        (the table plays on; its events wait in its database until the file is mended and the service
        restarted), rather than a bare errno or the broker's refusal at every retry."""
        log.info("fleet: table %s of site %s, broker %s", self.table_id, self.link.topics.site,
                 self.cfg.fleet.broker_url if self.cfg.fleet else "?")
        problems = problem_lines(self.cfg)
        if problems:
            self.link.last_error = problems[0]
            log.error("fleet link %s not started (the table plays on, its events wait in its database; mend the "
                      "file, check it with mjtable config check, restart): %s", self.table_id, "; ".join(problems))
            return
        self.link.start()

    def stop(self) -> None:
        """A clean end (the service stops): the link disconnects and the broker says offline."""
        self.detach()
        self.link.stop()
        log.info("%s", self.link.status_line())
        if self.plug.close is not None:
            self.plug.close()

    def _refused(self, why: str) -> None:
        assert self.plug.on_refusal is not None
        self.plug.on_refusal(self.table_id, why)

    def detach(self) -> None:
        """Hear nothing more from the table (its bus goes with this boot)."""
        for subscription in self._subscriptions:
            subscription.cancel()
        self._subscriptions = []

    def status(self) -> dict[str, Any]:
        return self.link.status()

    # -- observing ------------------------------------------------------------------------------------------
    def _changed(self, _event: Any) -> None:
        """(a bus subscriber, on the table's loop) Only a post: one call per burst of events, never a wait."""
        if not self._posted:
            self._posted = True
            self.loop.post(self._tell)

    def _tell(self) -> None:
        self._posted = False
        self.link.notify()
        self.link.outbox_changed()

    def _status(self) -> dict[str, Any]:
        return table_status(self.session)

    # -- the hall's assignment for a tournament round -------------------------------------------------------------
    def _assignment(self, payload: bytes) -> None:
        """(the link's loop) The retained assignment arrived: checked and handed to the table on the table's loop."""
        self.c.table.loop.post(self._take_assignment, payload)

    def _take_assignment(self, payload: bytes) -> None:
        rounds = self.session.rounds
        if rounds is None:
            return
        if not payload:
            rounds.withdraw()
            return
        if self.assignments is None:
            rounds.refused("this table has no command key ([fleet] command_key_file): it takes no assignment")
            return
        try:
            rounds.offer(self.assignments.verify(payload, rounds.knows))
        except (AssignmentRefused, AssignmentError) as exc:
            rounds.refused(str(exc))

    # -- commands ---------------------------------------------------------------------------------------------
    def _command(self, verb: str, args: dict, issuer: str) -> Any:
        """An authenticated ``ack`` (the verifier has refused latched and hold codes): a recoverable fault."""
        if verb in ("session_open", "session_close"):
            return self._session(verb, args, issuer)
        if verb in ("update", "rollback"):
            if self.updates is None:
                raise CommandRefused(f"this table does not take {verb} over the fleet (its service was started "
                                     f"without its releases)")
            return self.updates.handle(verb, args, issuer)
        if verb != "ack":
            raise CommandRefused(f"{verb}: not a command for the table's handler")
        code = str(args.get("code", ""))
        why = self.c.policy.acknowledge_recoverable(code, f"fleet:{issuer}")
        if why is not None:
            raise CommandRefused(why)
        log.warning("fleet: %s acknowledged by %s", code, issuer)
        return {"acknowledged": code, "by": issuer}

    def _report_release(self, _current: str | None, release: dict) -> None:
        """(the link's loop) A staged update's progress in the ``meta`` leaf; its ``firmware`` stays the running
        code's (a new release runs only after the restart)."""
        self.link.set_meta(dict(self.link.meta, release=release))

    def _session(self, verb: str, args: dict, issuer: str) -> Any:
        """An authenticated ``session_open`` / ``session_close`` (a parlour's booking system): the table session."""
        staff = self.session.staff
        if staff is None:
            raise CommandRefused(f"{verb}: this table has no table sessions")
        try:
            status = staff.open(args["minutes"], f"fleet:{issuer}") if verb == "session_open" \
                else staff.close(f"fleet:{issuer}")
        except StaffError as exc:
            raise CommandRefused(f"{verb}: {exc}") from None
        return {"session": status}
