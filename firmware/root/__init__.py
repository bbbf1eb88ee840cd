"""The composition root: the one place that picks the concrete parts and wires a table from them.

Every entry point builds its table here: the service on a table (``mjtable
run``), a technician's own process (``mjtable diag --direct``), the
simulator (``mjtable sim``, ``diag --sim``, the fleet's simulated tables, the
test harness), the service against the simulated table at real time
(``mjtable run --sim``, the release self-test) and the mechanisms alone on
the bench.  They differ only in their :class:`~firmware.root.table.Profile`.
This package is the only part of ``firmware/`` that imports ``hal`` (the
Raspberry Pi's pins, serial ports, clock and systemd) or ``sim`` (the
simulated table); the CLI reaches both through it:

* :mod:`.table`: the profiles, :func:`~.table.build_table` and the one
  lifecycle of a wired table (start, run, close);
* :mod:`.host`: the host's clock, loop and service manager for the CLI;
* :mod:`.simulator`: the simulator's runs, reports and tools for the CLI.
"""
