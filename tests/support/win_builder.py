"""Test helper: a Win from compact strings, through the case-format parser."""

from __future__ import annotations

from firmware.rules.case_format import parse_case
from firmware.rules.win import Win
from firmware.tiles.tile import parse


def make_win(hand: str, win_tile: str, melds=(), rules: str = "mcr", seat: str = "E", round_wind: str = "E",
             **fields) -> Win:
    """Melds as "123m" (chow), "EEE" (pung), "EEEE" (melded kong), "EEEE*" (concealed kong)."""
    out = []
    for m in melds:
        tiles = m.rstrip("*")
        kinds = parse(tiles)
        kind = "kong" if len(kinds) == 4 else ("pung" if len(set(kinds)) == 1 else "chow")
        meld = {"kind": kind, "tiles": tiles}
        meld.update({"concealed": True} if m.endswith("*") else {"from": "left"})
        out.append(meld)
    return parse_case({"id": "t", "rules": rules, "hand": hand, "melds": out, "win_tile": win_tile,
                       "seat_wind": seat, "round_wind": round_wind, **fields}).win
