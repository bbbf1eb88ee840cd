"""The rule sets' names and the family that plays each: what the TOML files and the command line may name.

Adding a rule set is its family's module, its TOML and one line here.
"""

from __future__ import annotations

from firmware.i18n import worded

FAMILIES: dict[str, str] = {
    "mcr": "firmware.rules.mcr.family:MCRRules",
    "competition": "firmware.rules.competition.family:CompetitionRules",
    "liaoning": "firmware.rules.northeast.family:NortheastRules",
    "jinzhou": "firmware.rules.northeast.family:NortheastRules",
    "sichuan": "firmware.rules.sichuan.family:SichuanRules",
}
RULE_NAMES: tuple[str, ...] = tuple(FAMILIES)
DEFAULT = "mcr"


def rules_name(text: str) -> str:
    """A rule set's name as typed on a command line (an argparse ``type``): ValueError names the choices."""
    if text not in FAMILIES:
        raise worded(ValueError, "unknown rule set %(name)r; choose one of %(names)s", name=text,
                     names=", ".join(RULE_NAMES))
    return text
