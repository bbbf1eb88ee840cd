"""Fleet telemetry: a parlour's tables on one MQTT broker (topics, messages, the outbox, the link, commands).

Everything here is pure except through an injected adapter: the only module
importing paho-mqtt is ``hal/mqtt_paho.py``.  The table plays, stacks and
latches the same whether the broker is up, down, unreachable or slow: the
link only reads the table's status and the outbox, and answers a short
allow-list of commands, none of which moves a motor.  See ``docs/fleet.md``.
"""
