"""Hand analysis: winning shapes, decompositions, waits and shanten."""
