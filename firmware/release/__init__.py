"""Putting the firmware on a table: release bundles, releases side by side with rollback, the self-test, OS checks."""
