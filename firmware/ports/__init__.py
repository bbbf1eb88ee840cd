"""The ports: what the firmware needs from the world outside it, declared here and implemented elsewhere.

``hal/`` implements the hardware ports on a Raspberry Pi (gpiozero pins,
pyserial ports, the host clock, systemd); ``sim/`` implements them for the
simulated table; the composition root (:mod:`firmware.root`) picks one.

* :mod:`firmware.ports.hardware`: pins and their devices, the serial line
* :mod:`firmware.ports.clock`: the controller's loop, the host's clock
* :mod:`firmware.ports.storage`: opening the table database
* :mod:`firmware.ports.broker`: the MQTT client the fleet link talks through
* :mod:`firmware.ports.service`: the OS service manager
"""
