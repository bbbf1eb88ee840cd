"""The RFID tile reader: protocol codec, driver, tile registry, wall map and verification."""
