"""Fair play a player can check: a sequential test of the walls and starting hands against a uniform shuffle."""
