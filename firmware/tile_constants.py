"""Tile-kind constants shared by the tile model and the hand analysis."""

SUITED = 27
PLAYABLE = 34
HONOUR_KINDS = tuple(range(27, 34))
TERMINALS = (0, 8, 9, 17, 18, 26)
TERMINALS_AND_HONOURS = TERMINALS + HONOUR_KINDS
