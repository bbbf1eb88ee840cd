"""The shipped default configuration (table models, rule sets, tile registries, scenarios, the unit), installed as the package data ``firmware.defaults``."""
