"""A chain's pieces without brokers: the parlour's bridge block, several nodes, the chain consumer's sites."""

from __future__ import annotations

import pytest

from firmware.fleet import messages, topics
from firmware.fleet.broker_config import Bridge, bridge_text
from firmware.fleet.chain import ChainConsumer
from firmware.ports.broker import parse_broker_urls

NOW = 1_750_000_000.0


def test_the_bridge_sends_the_tables_topics_up_and_only_commands_down():
    nodes = tuple(parse_broker_urls("mqtt://10.0.0.1:1883, mqtt://10.0.0.2:1883,mqtt://10.0.0.3:1883"))
    text = bridge_text("hall1", Bridge(nodes, "bridge-hall1", "hall1", "s3cret"))
    lines = text.splitlines()
    assert "address 10.0.0.1:1883 10.0.0.2:1883 10.0.0.3:1883" in lines
    assert "cleansession false" in lines and "bridge_protocol_version mqttv311" in lines
    assert "try_private false" in lines          # (NATS refuses the bridge bit in the protocol version)
    ups = [line for line in lines if line.endswith(" out 1")]
    downs = [line for line in lines if line.endswith(" in 1")]
    assert downs == ["topic mj/v1/hall1/tbl/+/cmd/# in 1"]
    assert "topic mj/v1/hall1/tbl/+/evt/# out 1" in ups and "topic mj/v1/hall1/tbl/+/avail out 1" in ups
    assert not any("cmd" in line or "assign" in line for line in ups)          # nothing that came down goes up
    assert "remote_password s3cret" in lines
    with pytest.raises(ValueError, match="--bridge-ca"):
        bridge_text("hall1", Bridge(tuple(parse_broker_urls("mqtts://c1:8883")), "b"))
    with pytest.raises(ValueError, match="all mqtt:// or all mqtts://"):
        bridge_text("hall1", Bridge(tuple(parse_broker_urls("mqtt://a:1,mqtts://b:2")), "b"))
    with pytest.raises(ValueError, match="not a broker URL"):
        parse_broker_urls("mqtt://a:1,b")


def _event(site: str, table: str, seq: int, db: str = "d1") -> tuple[str, bytes]:
    source = messages.Source(site, table, messages.boot_id(db, 1))
    return topics.TableTopics(site, table).event("hand"), messages.event(source, "hand", seq, db, 1,
                                                                         f'{{"hand": {seq}}}', NOW)


def test_the_chain_consumer_keeps_each_site_apart_and_finds_what_it_lacks():
    chain = ChainConsumer()
    assert chain.subscriptions() == [("mj/v1/+/tbl/+/+", 0), ("mj/v1/+/tbl/+/evt/+", 1)]
    for seq in (1, 2, 4):
        chain.feed(*_event("p1", "t001", seq), NOW)
    chain.feed(*_event("p2", "t001", 1), NOW)                 # the same table id in another parlour
    assert chain.feed(*_event("p1", "t001", 2), NOW).what == "duplicate"
    assert set(chain.sites) == {"p1", "p2"} and chain.stats()["total"]["events"] == 4
    assert chain.missing() == {("p1", "t001"): 3}
    birth = messages.avail(messages.Source("p2", "t001", messages.boot_id("d1", 1)), True, 1, 1, NOW,
                           {"seq": 6, "db_id": "d1", "oldest": 1})
    chain.feed(topics.TableTopics("p2", "t001").avail, birth, NOW)
    assert chain.missing() == {("p1", "t001"): 3, ("p2", "t001"): 2}   # its birth says 6 were written
    assert chain.feed("mj/v1/p1/nothing", b"{}", NOW) is None and chain.bad == 1
