"""The report of a simulated game (the JSON of ``mjtable sim --report``) and its summary in words.

Fields follow the simulator's CLI design (more may be added, none removed):
the game (hands, wins with fans and payments, draws, chips and whether
they were conserved, the money by reason: 和牌, kongs, 追牌, 跟庄, 黄庄,
penalties ..., the games (局) that ended), the cycle (sets stacked,
stacking times, how long players waited for walls), the reader's line
statistics, every fault with its acknowledge, the final state and the run's
speed.  The money is read from the scoreboard's rows, not from what the
players saw.
"""

from __future__ import annotations

import gettext
from typing import Any, Iterable

from firmware.faults import FaultCode
from firmware.web.i18n import STATES, TIERS

Translations = gettext.NullTranslations
ENGLISH = gettext.NullTranslations()             # (the code's own words: what a caller gets without a catalogue)

VERSION = 1


def build_report(run, rules: str, hands_requested: int, wall_s: float) -> dict[str, Any]:
    """Everything a bench tester asks of a run, from the run's events, game and table database."""
    record = run.record
    counters = run.table.reader.counters
    game = run.game
    scoreboard = run.session.scoreboard if run.session else None
    start_hand = getattr(run, "start_hand", 0)
    # (the hands are read from the database a page at a time: a run of any length is summed, not held)
    played, money = (_history(scoreboard.each_hand(since=start_hand, all_games=True)) if scoreboard is not None
                     else (0, {}))
    wins = game.wins if game is not None else []
    faults = run.controller.policy.history(after_id=run.faults_before) if run.controller else []
    return {
        "version": VERSION, "seed": run.seed, "rules": rules, "table": run.cfg.table.name,
        "tile_set": run.cfg.table.tile_set, "hands_requested": hands_requested,
        "resumed_after_hand": start_hand,
        "hands_played": played,
        "hands_won": game.hands_won if game is not None else 0,
        "hands_drawn": game.drawn if game is not None else 0,
        "false_wins": game.false_wins if game is not None else 0,
        # actions the table's referee refused (a bug: the players stopped at the first, named here)
        "refused_actions": game.refused if game is not None else 0,
        "refusal": game.refusal if game is not None else None,
        # hands by how many sides won them: 0 to 3 where the rest play on after a win (四川)
        "winners_per_hand": {str(n): c for n, c in sorted(game.winners_per_hand.items())} if game is not None else {},
        "wins": list(wins),                                 # (the most recent ones, at most sim.game_runner.WINS_KEPT)
        "fan_counts": dict(game.fans.most_common()) if game is not None else {},
        "money": money,
        "games_ended": [g for g in (scoreboard.games() if scoreboard is not None else [])
                        if g["ended_hand"] is not None and g["ended_hand"] > start_hand],
        "chips": {f"side{s}": c for s, c in enumerate(scoreboard.chips if scoreboard is not None else [])},
        # checked on the stored rows, independently of how they were recorded: every hand's payments sum to
        # zero and each side's chips are its start plus its payments
        "chips_conserved": scoreboard.conserved() if scoreboard is not None else False,
        "cycle": {"sets_stacked": record.stack_s.count, "stack_s": record.stack_s.stats(),
                  "wait_for_ready_s": record.waits_s.stats(p95=False)},
        "rfid": {"frames_ok": counters.frames_ok, "crc_errors": counters.crc_errors, "resyncs": counters.resyncs,
                 "reconnects": counters.reconnects, "tiles_read": counters.tags, "drops": counters.drops,
                 "events_lost": counters.events_lost,
                 "sets_verified": record.walls_verified, "sets_counted": record.walls_counted,
                 "sets_rejected": record.walls_rejected},
        "faults": [{"code": f["code"], "tier": f["tier"], "at_s": round(f["at_s"], 3), "state": f["state"],
                    "detail": f["detail"], "written": f.get("written", True),
                    "acknowledged_at_s": None if f["acknowledged_at_s"] is None else round(f["acknowledged_at_s"], 3)}
                   for f in faults],
        "power_cuts": record.power_cuts,
        "fairness": {"warnings": list(record.warnings["fairness"]), **_injected(run, "shuffle_bias")},
        "maintenance": {"warnings": list(record.warnings["maintenance"]), **_injected(run, "wear")},
        "motor_s_under_interlock": run.interlocks.finish(),
        "final_state": run.state.value if run.state else None,
        "simulated_s": round(run.loop.now(), 3), "wall_s": round(wall_s, 3),
        "speedup": round(run.loop.now() / wall_s, 1) if wall_s > 0 else None,
    }


def _injected(run, what: str) -> dict[str, Any]:
    """What the run injected into the table model (``shuffle_bias``: the bias and the extra pairs the rig dealt;
    ``wear``: each wearing part's cycles and whether it jammed), for comparing with the warnings."""
    injected = getattr(run, what, None)
    if not injected:
        return {}
    if what == "shuffle_bias":
        rig = run.world.dice.rig.rig if run.world.dice.rig is not None else None
        return {"injected": {**injected.to_dict(), "favour_hands": rig.hands if rig else 0,
                             "favour_extra_pairs": round(rig.gain / rig.hands, 3) if rig and rig.hands else None}}
    return {"injected": [w.to_dict() for w in run.world.wear]}


def money_by_reason(hands: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Every payment of ``hands`` (scoreboard records) by reason: its names, how many, how much."""
    return _history(hands)[1]


def _history(hands: Iterable[Any]) -> tuple[int, dict[str, dict[str, Any]]]:
    """(how many hands, :func:`money_by_reason`) in one pass over ``hands`` (which may be a stream)."""
    out: dict[str, dict[str, Any]] = {}
    count = 0
    for h in hands:
        count += 1
        for p in h.payments:
            r = out.setdefault(p.reason.key, {"name": p.reason.name, "en": p.reason.en, "count": 0, "amount": 0})
            r["count"] += 1
            r["amount"] += p.amount
    return count, dict(sorted(out.items(), key=lambda kv: -kv[1]["amount"]))


def hand_money(recorded: Any) -> str:
    """A hand's money in words, by reason: ``和牌 side 2 -> side 0 56; 明杠 side 3 -> side 1 12``."""
    if recorded is None or not recorded.payments:
        return ""
    parts: dict[str, list[str]] = {}
    for p in recorded.payments:
        parts.setdefault(p.reason.name, []).append(f"side {p.payer} -> side {p.payee} {p.amount}"
                                                   + (" (held)" if p.held else ""))
    return "; ".join(f"{name} {', '.join(items)}" for name, items in parts.items())


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:g} s"


def hand_outcome(wins: list[dict[str, Any]], recorded: Any | None) -> str:
    """What became of one hand, in words: its legal wins (``wins``, from the report), a false win, a drawn hand.

    ``recorded`` is the scoreboard's record of the hand (None: not recorded).  A false win is recorded with
    the declarer among the winners (or none, when a technician's judgement recorded it) but no fan and not
    drawn; its note says why.  It is never "drawn": the hand ended on a declaration, not on an empty wall."""
    false_win = _false_win(recorded)
    texts = [_win_text(w) for w in wins]
    if false_win:
        texts.append(false_win)                         # (several winners: a false one beside a legal one)
    if texts:
        return "; ".join(texts)
    if recorded is None:
        return "not scored (its result was not recorded)"
    if recorded.drawn:
        return "drawn" + (f" ({recorded.note})" if recorded.note else "")
    return "won (see the scoreboard)"


def _win_text(w: dict[str, Any]) -> str:
    """One legal win in words: ``side 1 (S) wins 12: 平和 断幺``; a northeastern one counts its doublings
    (``wins +2 doublings: 自摸 一口听``; none: 平胡)."""
    names = " ".join(f["name"] + (f" x{f['count']}" if f.get("count", 1) > 1 else "") for f in w["fans"])
    if w.get("unit") == "doubling":
        amount, names = f"+{w['total']} doublings", names or "平胡 (no item)"
    else:
        amount = str(w["total"])
    return f"side {w['winner_side']} ({w['winner_seat']}) wins {amount}{' self-drawn' if w['self_drawn'] else ''}: " \
           + names


def _false_win(recorded: Any | None) -> str:
    """The false win of a recorded hand in words, or "" when it has none."""
    if recorded is None:
        return ""
    note = recorded.note or ""
    at = note.find("false win")
    if at >= 0:
        return note[at:]
    if recorded.drawn or recorded.items or recorded.record:
        return ""                       # (a hand recorded with its record says a false win in its note)
    # no fan and not drawn: the declaration was refused (a record from before notes named it)
    return f"false win by side {recorded.winners[0]}" if recorded.winners else "false win"


def state_words(state: str, tr: Translations = ENGLISH) -> str:
    """A controller state in words (the page's names), never its identifier."""
    return tr.gettext(STATES[state]) if state in STATES else tr.gettext("an unknown state")


def hands_line(report: dict[str, Any], tr: Translations = ENGLISH) -> str:
    """The hand count: played of requested, won, drawn and false wins."""
    _, ngettext = tr.gettext, tr.ngettext
    line = ngettext("hands: %(played)s of %(requested)s played", "hands: %(played)s of %(requested)s played",
                    report["hands_requested"]) % {"played": report["hands_played"],
                                                  "requested": report["hands_requested"]}
    line += _(", %(won)s won, %(drawn)s drawn") % {"won": report["hands_won"], "drawn": report["hands_drawn"]}
    if report["false_wins"]:
        line += ngettext(", %(n)s false win", ", %(n)s false wins", report["false_wins"]) % {"n": report["false_wins"]}
    if report.get("refused_actions"):
        line += ngettext(", %(n)s action refused by the table's referee", ", %(n)s actions refused by the table's "
                         "referee", report["refused_actions"]) % {"n": report["refused_actions"]}
    return line


def winners_line(per_hand: dict[str, int], tr: Translations = ENGLISH) -> str:
    """Hands by their number of winners (a hand may have several: 一炮多响, or 四川's hands that play on)."""
    _ = tr.gettext
    total = sum(per_hand.values())
    three = per_hand.get("3", 0)
    words = {"0": _("no winner"), "1": _("one"), "2": _("two"), "3": _("three")}
    return (_("winners per hand: ") + ", ".join(f"{words.get(n, n)} {c}" for n, c in sorted(per_hand.items()))
            + (_("; %(three)s of %(total)s hands (%(percent)s%%) reached three winners")
               % {"three": three, "total": total, "percent": f"{100 * three / total:.0f}"} if total else ""))


def final_line(report: dict[str, Any], with_hands: bool = False, tr: Translations = ENGLISH) -> str:
    """The last line of the summary: the final state (in words) and the run's speed (``with_hands``: the hand
    count too, for ``--quiet``, which prints this line only)."""
    _ = tr.gettext
    state = report["final_state"]
    words = {"state": state_words(state, tr)}
    if state == "in_play" and report["hands_played"] == report["hands_requested"]:
        line = _("final state %(state)s (the last hand is scored; its walls are still up); ") % words
    else:
        line = _("final state %(state)s; ") % words
    return (line + (hands_line(report, tr) + "; " if with_hands else "")
            + _("%(simulated)s simulated s in %(wall)s s wall (x%(speedup)s)")
            % {"simulated": f"{report['simulated_s']:.0f}", "wall": f"{report['wall_s']:.2f}",
               "speedup": report["speedup"]})


def summary_lines(report: dict[str, Any], hands: list[dict[str, Any]], verbose: bool = False,
                  results: dict[int, Any] | None = None, tr: Translations = ENGLISH) -> list[str]:
    """The end-of-run summary a bench tester reads; ``verbose`` adds every hand of this run (``hands``, with
    the scoreboard's ``results`` by hand number).  ``tr``: the catalogue its words come from (the command line's
    language; English by default)."""
    _, ngettext = tr.gettext, tr.ngettext
    lines = [_("table %(table)s, %(tiles)s-tile set, rules %(rules)s, seed %(seed)s")
             % {"table": report["table"], "tiles": report["tile_set"], "rules": report["rules"],
                "seed": report["seed"]}]
    if verbose:
        by_hand: dict[int, list[dict]] = {}
        for win in report["wins"]:
            by_hand.setdefault(win["hand"], []).append(win)
        for h in hands:
            recorded = (results or {}).get(h["hand"])
            result = hand_outcome(by_hand.get(h["hand"], []), recorded)
            money = hand_money(recorded)
            lines.append(f"  hand {h['hand']:2d}: set {h['set_id']}, dealer side {h['dealer']}, dice {h['dice']} - "
                         f"{result}" + (f"\n           money: {money}" if money else ""))
    if report.get("resumed_after_hand"):
        lines.append(_("resumed from the table database after hand %(hand)s") % {"hand": report["resumed_after_hand"]})
    lines.append(hands_line(report, tr))
    several = report.get("winners_per_hand") or {}
    if any(int(n) > 1 for n in several):
        lines.append(winners_line(several, tr))
    fans = sorted(report["fan_counts"].items(), key=lambda kv: (-kv[1], kv[0]))
    if fans:
        lines.append(_("wins by fan: ") + ", ".join(f"{name} x{n}" for name, n in fans))
    money = report.get("money") or {}
    if money:
        lines.append(_("money by reason: ") + ", ".join(
            ngettext("%(name)s %(count)s payment (%(amount)s)", "%(name)s %(count)s payments (%(amount)s)",
                     m["count"]) % m for m in money.values()))
    side = _("side %(side)s %(chips)s")
    for g in report.get("games_ended", []):
        final = ", ".join(side % {"side": s, "chips": c} for s, c in enumerate(g["final"] or g["chips"]))
        lines.append(_("game %(game)s ended after hand %(hand)s (%(reason)s): %(final)s; the next game starts with "
                       "%(chips)s each at its first deal")
                     % {"game": g["game"], "hand": g["ended_hand"], "reason": g["end_reason"], "final": final,
                        "chips": g["start_chips"]})
    chips = report["chips"]
    lines.append(_("chips: ") + ", ".join(side % {"side": k[4:], "chips": v} for k, v in chips.items())
                 + (_(" (conserved)") if report["chips_conserved"] else _(" (NOT CONSERVED)")))
    cyc = report["cycle"]
    st, wait = cyc["stack_s"], cyc["wait_for_ready_s"]
    lines.append(ngettext("stacking: %(sets)s set, mean %(mean)s, p95 %(p95)s, max %(max)s; players waited for walls "
                          "after a hand: mean %(wait_mean)s, max %(wait_max)s",
                          "stacking: %(sets)s sets, mean %(mean)s, p95 %(p95)s, max %(max)s; players waited for "
                          "walls after a hand: mean %(wait_mean)s, max %(wait_max)s", cyc["sets_stacked"])
                 % {"sets": cyc["sets_stacked"], "mean": _s(st["mean"]), "p95": _s(st["p95"]), "max": _s(st["max"]),
                    "wait_mean": _s(wait["mean"]), "wait_max": _s(wait["max"])})
    r = report["rfid"]
    lines.append(_("reader: %(tiles_read)s tags, %(frames_ok)s frames ok, %(crc_errors)s CRC errors, %(resyncs)s "
                   "resyncs, %(drops)s drops, %(events_lost)s events lost, %(reconnects)s reconnects; walls verified "
                   "%(sets_verified)s, ") % r
                 + (_("counted only %(sets_counted)s (sets not enrolled), ") % r if r.get("sets_counted") else "")
                 + _("rejected %(sets_rejected)s") % r)
    under = {k: v for k, v in report["motor_s_under_interlock"].items() if v}
    if under:
        lines.append(_("SAFETY: motors ran while an interlock was active: ")
                     + ", ".join(f"{k} {v:g} s" for k, v in under.items()))
    if report["power_cuts"]:
        lines.append(_("power cuts: %(n)s (the controller restarted from its database)") % {"n": report["power_cuts"]})
    for f in report["faults"]:
        code = FaultCode(f["code"])
        acked = f["acknowledged_at_s"]
        facts = {"code": f["code"], "tier": _(TIERS.get(f["tier"], "fault")), "at": f"{f['at_s']:.1f}",
                 "state": state_words(f["state"], tr),
                 "text": _(code.text)}
        lines.append(_("fault %(code)s (%(tier)s) at %(at)s s in %(state)s: %(text)s") % facts
                     + (_("; acknowledged at %(at)s s") % {"at": f"{acked:.1f}"} if acked is not None else "")
                     + "\n  " + _("hint: %(hint)s") % {"hint": _(code.hint)})
    lines.append(final_line(report, tr=tr))
    return lines
