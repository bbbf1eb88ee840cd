"""Tiles, tile sets, walls, dice and dealing: pure logic, no I/O, no clock."""
