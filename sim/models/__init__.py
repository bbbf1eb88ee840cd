"""Mechanics models of the simulated table: each behaves, none teleports."""
