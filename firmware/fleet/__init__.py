"""Fleet telemetry: a parlour's tables on one MQTT broker (topics, messages, the outbox, the link, commands).

The protocol (topics, messages, the link, the consumer, commands) is pure
except through an injected adapter, the broker port
(``firmware/ports/broker.py``); its adapter on paho-mqtt is
``firmware/fleet/mqtt/`` (``client.py`` is the only module importing
paho-mqtt), and ``runtime.py`` builds it from a table model's ``[fleet]``
section.  The table plays, stacks and
latches the same whether the broker is up, down, unreachable or slow: the
link only reads the table's status and the outbox, and answers a short
allow-list of commands, none of which moves a motor.  See ``docs/fleet.md``.
"""
