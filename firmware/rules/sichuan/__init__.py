"""四川 血战到底 (and 血流成河): 定缺, no chows, winners leave, kong money on the spot, the drawn-end checks."""
