"""The rule sets the table knows, loaded by name: each made by its family from its TOML.

A rule set is one object (:class:`firmware.rules.ruleset.RuleSet`) made by
its family from its TOML; the names and which family plays each are in
:mod:`firmware.rules.names`, the only place that knows them.  Importing
this is cheap (``mjtable --help`` lists the names): a family's module is
imported when a rule set of it is loaded.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from firmware.rules.names import FAMILIES

if TYPE_CHECKING:
    from firmware.rules.config import RuleSetConfig
    from firmware.rules.ruleset import RuleSet



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
