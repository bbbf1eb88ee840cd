"""Rule-set configuration (``config/rules/*.toml``): tile set, shapes, dealing, values, switches, penalties.

Loaded strictly like the table model: unknown keys (a misspelt doubling item
included), wrong types and missing keys are errors naming the file, the
table and the key.  Each rule set's TOML holds its variants as switches and
values; the family's code (see :mod:`firmware.rules.registry`) reads them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, ValidationError, field_validator

from firmware.config_files import PATTERN_HINTS, Section, Text, read_toml, validation_error, whole_number_of
from firmware.config_paths import rules_file
from firmware.faults import ConfigError
from firmware.i18n import N_, worded
from firmware.hands.analysis import Shape
from firmware.rules.names import RULE_NAMES
from firmware.tiles.dealing import DealRules

if TYPE_CHECKING:
    from firmware.rules.ruleset import RuleSet

Points = Annotated[int, Field(ge=0, le=1000)]          # an amount or a value: 0 scores or pays nothing
Factor = Annotated[int, Field(ge=1, le=1000)]          # a multiplier, a base or a doubling factor: 0 would wipe out
#                                                        a win (a payment of 0 is none), so at least 1


class RulesSection(Section):
    name: str
    title: Text
    tile_set: whole_number_of(144, 136, 112, 108)
    shapes: list[Literal["standard", "seven_pairs", "thirteen_orphans", "honours_and_knitted",
                         "knitted_straight", "fourteen_unrelated"]]

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in RULE_NAMES:
            raise ValueError(f"unknown rule set {name!r}; the registry knows {', '.join(RULE_NAMES)}")
        return name


class DealSection(Section):
    throws: whole_number_of(1, 2)
    kept_tail: Annotated[int, Field(ge=0, le=40)] = 0
    kept_per_kong: Annotated[int, Field(ge=0, le=4)] = 0
    stack_by: Literal["total", "smaller_die"] = "total"     # one throw: which count picks the stack (四川: the smaller)


CompetitionFan = Literal["mixed_straight", "pure_straight", "seven_pairs", "all_pungs", "half_flush", "full_flush",
                         "fourteen_unrelated", "melded_single_wait", "upper_chows", "middle_chows", "lower_chows"]


class CompetitionSettlement(Section):
    """The multipliers and the 倍打 factor are at least 1; an amount of 0 (kong money, 追牌 ...) pays nothing."""

    discard_multiplier: Factor = 2          # the discarder pays 2S
    self_drawn_multiplier: Factor = 1       # each other seat pays S
    robbed_kong_multiplier: Factor = 3      # the robbed kong's owner pays 3S
    liable_multiplier: Factor = 3           # 包付: the liable seat pays 3S alone
    double_factor: Factor = 2               # 倍打 during a dealer streak
    melded_kong_from_discard: Points = 12   # 点杠: the feeder pays
    added_kong_each: Points = 4             # 加杠: each other seat
    concealed_kong_each: Points = 6
    flower_kong_each: Points = 8
    chase_each: Points = 4                  # 追牌: the first of the four pays each other
    false_win_each: Points = 10             # 诈和: the declarer pays each other seat
    refused_win_each: Points = 10           # a win off a player with no points: 10 to each, and S to that player


class CompetitionExtras(Section):
    """附加分: every one must be given (0: not scored)."""

    flower: Points                     # per flower
    single_wait: Points
    flower_replacement_win: Points     # 补花和
    kong_replacement_win: Points       # 杠上开花
    last_claim: Points                 # 海底捞月
    last_draw: Points                  # 妙手回春
    concealed: Points                  # 门清


class CompetitionSection(Section):
    """竞技麻将's fan values (only 混一色 20 is in the rules; the rest are the documented defaults),
    extra points and settlement, all overridable."""

    fans: dict[CompetitionFan, Points]
    extras: CompetitionExtras
    settlement: CompetitionSettlement = Field(default_factory=CompetitionSettlement)


NortheastItem = Literal[
    "discard", "self_drawn", "dealer", "winner_closed", "payer_closed", "three_closed", "four_closed", "single_wait",
    "all_pungs", "all_pungs_single", "last_single", "seven_pairs", "kong_replacement", "kong_discard", "robbed_kong",
    "last_tile", "tile_hog", "melded_kong", "concealed_kong", "dragon_pung", "dragon_melded_kong",
    "dragon_concealed_kong", "long_hair", "no_wild"]


class DoublingSection(Section):
    """The northeastern doubling model (辽宁 §C.3, 锦州 §D.3): each payer pays base x 2^N, where N sums the
    winner's items and the items that concern that payer; ``items`` gives each item's +N (0 or absent: not
    scored, which is how a variant switches an item off)."""

    base: Factor = 1
    cap: Annotated[int, Field(ge=1, le=20)] | None = None      # most N counted per payer (封顶)
    who_pays: Literal["discarder", "all", "discarder_for_all"] = "discarder"
    items: dict[NortheastItem, Annotated[int, Field(ge=0, le=10)]]
    kong_each: dict[Literal["melded", "concealed"], Points] = Field(default_factory=dict)   # on the spot, each other
    red_dragon_kong_factor: Factor = 1        # 锦州: 红中 kongs pay double, and 红中杠开 / 红中杠流泪 count +1 more
    draw_dealer_pays_each: Points = 0         # 黄庄: the dealer pays each other seat
    follow_dealer_pays_each: Points = 0       # 跟庄: the dealer pays each other seat
    follow_long_hair: bool = False            # 跟庄: 长毛 +1 for the next hand (辽宁)
    names: dict[NortheastItem, str] = Field(default_factory=dict)     # an item's name in this rule set (锦州 洞)
    dealer_stays_on_draw: bool = False        # 黄庄: does the dealer keep the seat (with 长毛 +1)?
    robbed_kong_paid: bool = True             # a 加杠 robbed by a win (抢杠) keeps its kong money (锦州: no)
    false_win_each: Points = 10               # 诈和: the declarer pays each other seat (not in the sources)


class ConditionsSection(Section):
    """Winning conditions of the northeastern rules (each a switch, defaults from rules.md)."""

    must_open: bool = False                   # 辽宁: a chow, pung or melded kong (a concealed kong does not open)
    must_have_pung: bool = True
    pung_stand_ins: list[Literal["C", "F", "P"]] = Field(default_factory=list)   # a pair of these may replace it
    must_have_terminal: bool = True           # 幺九: a 1 or 9, or an honour
    all_three_suits: bool = True              # 三门齐
    seven_pairs: bool = True
    seven_pairs_free: bool = False            # 锦州: seven pairs win without the other conditions


class SichuanSection(Section):
    """四川 血战到底's values and switches: the defaults of the reference (docs/rules.md), every common variant a key.
    Amounts are in units of ``base``; a win is worth base x 2^min(F, cap), F its doublings."""

    base: Factor = 1
    cap: Annotated[int, Field(ge=1, le=10)] = 3                   # 封顶: most doublings counted (3: x8)
    self_drawn: Literal["add_base", "add_doubling", "none"] = "add_base"   # 自摸加底 / 自摸加番 / nothing more
    several_winners: bool = True            # 一炮多响 (off: only the first counter-clockwise from the discarder)
    blood_river: bool = False               # 血流成河: winners stay in (hand locked), only the wall ends the hand
    dealer_on_draw: Literal["stays", "next"] = "stays"     # nobody won: the dealer stays, or 下家 deals
    swap_tiles: Literal[0, 3] = 3           # 换三张: three tiles of one suit passed after the deal (0: off)
    void_first: bool = True                 # tiles of the void suit are discarded before any other
    dragon_seven_pairs_extra: Literal[0, 1] = 0   # 龙七对 x16 (1: one more doubling, that 根 not counted again)
    pungs_258: bool = False                 # 将对 (and 将金钩钓): all pungs of 2, 5 and 8, +2
    seven_pairs_258: bool = False           # 将七对: seven pairs of 2, 5 and 8, +2
    terminals_in_all: bool = False          # 带幺九 (清幺九): every set and the pair hold a 1 or 9, +2
    concealed_and_simples: bool = False     # 门清 +1 (no pung or melded kong), 中张 +1 (no 1 or 9)
    heavenly_earthly: bool = False          # 天胡 / 地胡: worth the cap (off in 血流成河)
    last_discard: bool = True               # 海底炮: a win on the discard after the last tile, +1
    concealed_kong_each: Points = 2         # 下雨: 暗杠, from each player still in
    added_kong_each: Points = 1             # 刮风: 补杠 of a tile just drawn, from each still in (转手杠: nothing)
    melded_kong: Points = 2                 # 刮风: 直杠, from the discarder
    melded_kong_others: Points = 0          # 擦挂: more for a 直杠 from each other player still in (off: 0)
    kong_discard_transfer: Literal["kong", "all", "cancel", "off"] = "kong"   # 杠上炮: 呼叫转移 of that kong's
    #                                         money to the winner; all of the player's kong money; returned; kept
    fed_kong_bloom: Literal["self_drawn", "discard"] = "self_drawn"   # 点杠花: as 自摸, or the kong's feeder pays
    pig_penalty: Literal["cap"] | Annotated[int, Field(ge=1, le=1000)] = "cap"   # 查花猪: each pig pays each
    #                                         non-pig still in the cap value, or this many base
    ready_winners_collect: bool = False     # 查大叫: winners collect too (血流成河: always)
    dead_wait_not_ready: bool = False       # 死叫不算叫: a wait whose tiles are all in view is not ready


class Penalty(Section):
    """A penalty a referee gives (``mjtable diag penalty SEAT KIND``): ``each`` to every other seat (or
    ``each`` x 3 to the one harmed seat), more for a repeat in the same hand (``repeat_each``), with
    ``first_is_warning`` the first in a hand only a warning, and with ``dead_hand`` the offender may not win
    that hand."""

    name: Text
    en: Text
    each: Annotated[int, Field(ge=1, le=1000)]
    repeat_each: list[Annotated[int, Field(ge=1, le=1000)]] = Field(default_factory=list)
    dead_hand: bool = False
    first_is_warning: bool = False          # the first in a hand is a warning (no points), then ``each`` ...


class MatchSection(Section):
    """竞技麻将's 局: its chips start at ``[scoreboard] chips``; it ends (局结) when ``broke_players`` players
    have no points, or when ``rounds`` 圈 have been dealt (0: no limit); ``no_losing_end`` forbids a win
    that ends it with another player first, and holds kong money or a penalty that would (挂于盘外)."""

    broke_players: Annotated[int, Field(ge=0, le=3)] = 2
    rounds: Annotated[int, Field(ge=0, le=64)] = 4
    no_losing_end: bool = True


class ScoreboardSection(Section):
    chips: Annotated[int, Field(ge=1, le=1_000_000)] = 500     # each seat's chips at the start of a game
    floor: bool = False                                         # nobody pays more chips than they hold


PENALTY_KIND = r"^[a-z][a-z0-9_]{0,39}$"
PATTERN_HINTS[PENALTY_KIND] = N_("a penalty's kind: lower-case letters, digits and '_', starting with a letter")


class RuleSetConfig(Section):
    rules: RulesSection
    scoreboard: ScoreboardSection = Field(default_factory=ScoreboardSection)
    deal: DealSection
    competition: CompetitionSection | None = None
    doubling: DoublingSection | None = None
    conditions: ConditionsSection | None = None
    penalties: dict[Annotated[str, Field(pattern=PENALTY_KIND)], Penalty] = Field(default_factory=dict)
    match: MatchSection | None = None
    sichuan: SichuanSection | None = None

    @property
    def shape_set(self) -> frozenset[Shape]:
        return frozenset(Shape(s) for s in self.rules.shapes)

    @property
    def deal_rules(self) -> DealRules:
        return DealRules(self.deal.throws, self.deal.kept_tail, self.deal.kept_per_kong, self.deal.stack_by)


def parse_ruleset_config(data: dict, path: Path) -> RuleSetConfig:
    """A rule set's TOML (already read) validated; ConfigError names ``path``, the table and the key."""
    try:
        return RuleSetConfig.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc.errors()) from None


def load_ruleset_file(path: Path) -> RuleSetConfig:
    return parse_ruleset_config(read_toml(path), path)


@lru_cache(maxsize=None)
def load_ruleset_config(name: str, config_dir: Path | None = None) -> RuleSetConfig:
    """The validated TOML of the rule set ``name`` (the table's own copy in ``config_dir`` where there is one)."""
    if name not in RULE_NAMES:
        raise worded(ConfigError, "unknown rule set %(name)r; choose one of %(names)s", name=name,
                     names=", ".join(RULE_NAMES))
    return load_ruleset_file(rules_file(name, config_dir))


def table_conflicts(rules: "RuleSet", table_tile_set: int, table_source: str) -> list[str]:
    """What a table model and a rule set disagree on, each valid on its own (checked at power-on: E03).

    The rule set decides which tiles are played (辽宁 136, 锦州 112, with
    flowers 144); the table model says which set is loaded and how many tiles
    a side stacks.  A mismatch would stack short walls every cycle (E62) or
    deal from a set the rules do not know."""
    problems = []
    if rules.tile_set != table_tile_set:
        problems.append(f"{table_source}: table [table] key 'tile_set' is {table_tile_set} but rule set "
                        f"{rules.name} plays {rules.tile_set} tiles: load that set and set tile_set = "
                        f"{rules.tile_set}, or run a rule set for {table_tile_set} tiles")
    return problems
