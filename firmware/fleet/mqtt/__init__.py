"""The fleet's MQTT client: paho as the broker port's adapter, the network thread it runs on, the inbound bound."""
