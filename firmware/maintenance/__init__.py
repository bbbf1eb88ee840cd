"""Jams seen coming: a trend test on every head's and lift's cycle times, warning before the part jams."""
