"""Games: the hand in play, the referee and the scoreboard."""
