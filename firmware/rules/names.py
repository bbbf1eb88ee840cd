"""The rule sets the table knows, by the names used in its configuration files and on the command line."""

RULE_NAMES = ("mcr", "competition", "liaoning", "jinzhou")
