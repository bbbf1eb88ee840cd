"""One module per migration of the tournament database, oldest first."""
