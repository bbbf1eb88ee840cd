"""The table controller: its state machine, the cycle of a double-set table, persistence."""
