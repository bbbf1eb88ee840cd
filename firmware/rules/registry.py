"""The rule sets the table knows: their names (TOML files, command line) and the family that plays each.

A rule set is one object (:class:`firmware.rules.ruleset.RuleSet`) made by
its family from its TOML; this registry is the only place that knows which
name is which family.  Importing it is cheap (``mjtable --help`` lists the
names): a family's module is imported when a rule set of it is loaded.
Adding a rule set is its family's module, its TOML and one line here.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from firmware.rules.config import RuleSetConfig
    from firmware.rules.ruleset import RuleSet

FAMILIES: dict[str, str] = {
    "mcr": "firmware.rules.mcr.family:MCRRules",
    "competition": "firmware.rules.competition.family:CompetitionRules",
    "liaoning": "firmware.rules.northeast.family:NortheastRules",
    "jinzhou": "firmware.rules.northeast.family:NortheastRules",
}
RULE_NAMES: tuple[str, ...] = tuple(FAMILIES)
DEFAULT = "mcr"


def rules_name(text: str) -> str:
    """A rule set's name as typed on a command line (an argparse ``type``): ValueError names the choices."""
    if text not in FAMILIES:
        raise ValueError(f"unknown rule set {text!r}; choose one of {', '.join(RULE_NAMES)}")
    return text


def from_config(config: "RuleSetConfig") -> "RuleSet":
    """The rule set of a validated TOML (its ``[rules] name`` picks the family)."""
    module, _, cls = FAMILIES[config.rules.name].partition(":")
    family = getattr(importlib.import_module(module), cls)
    return family(config)


@lru_cache(maxsize=None)
def load_ruleset(name: str, config_dir: Path | None = None) -> "RuleSet":
    """The rule set ``name`` from its TOML (the table's own copy in ``config_dir`` where there is one)."""
    from firmware.rules.config import load_ruleset_config

    return from_config(load_ruleset_config(name, config_dir))
