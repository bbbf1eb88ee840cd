"""One object per mechanism of the table, each supervising its own movements."""
