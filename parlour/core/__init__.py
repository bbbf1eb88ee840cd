"""The tournament's pure core: no I/O and no clock."""
