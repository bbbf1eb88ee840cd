"""Rule sets: which shapes win, how the wall is dealt, how hands score."""
