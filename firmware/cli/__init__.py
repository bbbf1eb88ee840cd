"""The ``mjtable`` command line."""
