"""The fleet's run-time pieces on a table: its MQTT client from the table model's ``[fleet]`` section, on paho.

:func:`client_settings` turns the section into the client's settings (the
broker, the table id as client id and certificate CN, the TLS files
relative to the table file's folder, the keepalive, the bound on what its
inbound messages may post into the loop).  :func:`table_plug` is
what ``mjtable run`` (and ``run --sim``) hand to
:func:`firmware.root.table.build_table`: a network thread of the table's own,
started here and ended when the link stops, and the wall clock of the
``clock`` it is given (the host's) for the envelopes' times and the
commands' expiry.  :func:`shared_plug` is the
same on a network thread shared by many tables (``sim --fleet N``), on the
loop the caller runs the links on.
"""

from __future__ import annotations

import logging
from typing import Callable

from firmware.config import TableConfig
from firmware.fleet.link_settings import LinkSettings
from firmware.fleet.mqtt.client import ClientSettings, PahoAdapter
from firmware.fleet.mqtt.inbound import InboundLimits
from firmware.fleet.mqtt.network import MqttNetwork
from firmware.fleet.table_link import FleetPlug
from firmware.fleet.update_desk import Installer
from firmware.loop import Loop
from firmware.ports.broker import MqttAdapter, parse_broker_url
from firmware.ports.clock import Clock

log = logging.getLogger(__name__)


def client_settings(cfg: TableConfig) -> ClientSettings:
    """The table's MQTT client settings from its ``[fleet]`` section."""
    section = cfg.fleet
    if section is None:
        raise ValueError("the table model has no [fleet] section")
    files = section.files(cfg.base_dir)
    return ClientSettings(section.table_id, parse_broker_url(section.broker_url),
                          ca_file=str(files["ca_file"]) if files["ca_file"] else None,
                          cert_file=str(files["cert_file"]) if files["cert_file"] else None,
                          key_file=str(files["key_file"]) if files["key_file"] else None,
                          keepalive_s=section.keepalive_s, inbound=InboundLimits())


def table_plug(clock: Clock, installer: Installer | None = None,
               restart: Callable[[], None] | None = None) -> FleetPlug:
    """A table's own telemetry client: one network thread, stopped with the link; with ``installer`` and
    ``restart``, the service's releases for a staged update (:class:`FleetPlug`)."""
    network = MqttNetwork("mqtt", clock=clock).start()

    def adapter(cfg: TableConfig, post) -> MqttAdapter:
        return PahoAdapter(network, post, client_settings(cfg))

    return FleetPlug(adapter, clock.wall_s, close=network.stop, installer=installer, restart=restart)


def shared_plug(network: MqttNetwork, loop: Loop, settings: LinkSettings | None = None,
                made: list[PahoAdapter] | None = None,
                on_refusal: Callable[[str, str], None] | None = None, *, clock: Clock) -> FleetPlug:
    """Many tables' clients on one started ``network``, their links on ``loop`` (``made`` collects the
    adapters, so that the caller can cut one's connection as a power cut would; ``on_refusal(table, why)``
    hears of a table the broker refused, instead of each link's log); ``clock``'s wall seconds time their
    envelopes and commands."""
    def adapter(cfg: TableConfig, post) -> MqttAdapter:
        client = PahoAdapter(network, post, client_settings(cfg))
        if made is not None:
            made.append(client)
        return client

    return FleetPlug(adapter, clock.wall_s, loop=loop, settings=settings, on_refusal=on_refusal)
