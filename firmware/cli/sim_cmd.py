"""``mjtable sim``: run the table on the simulator and report.

A run is the real controller on the simulated table for ``--hands`` hands:
sets poured in, shuffled and stacked with the reader streaming, walls
verified and raised, dice, deals, and the used set stacked underneath while
the next hand is played.  The players are still placeholders (a hand is a
timed wait, see ``sim/placeholder_players.py``) until the game issue lands.
``--one-cycle`` runs a single stacking cycle instead, with times per side.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sim", help="run the table on the simulator",
                            description="Run the controller on the simulated table for a number of hands.")
    parser.add_argument("--table", type=Path, help="table model (TOML); default: the four-port double-set model")
    parser.add_argument("--seed", type=int, default=1, help="seed for everything random (default 1)")
    parser.add_argument("--tiles", type=int, choices=(144, 136, 112, 108), help="override the table's tile set")
    parser.add_argument("--inject", action="append", default=[], metavar="SPEC",
                        help="fault to inject, KIND[:TARGET][@WHEN][=VALUE]; repeatable")
    parser.add_argument("--report", type=Path, help="write the JSON report here")
    parser.add_argument("--hands", type=int, default=16, help="hands to play (default 16)")
    parser.add_argument("--rules", choices=("mcr", "competition", "liaoning", "jinzhou"), default="mcr",
                        help="rule set (dealing; default mcr)")
    parser.add_argument("--state", type=Path, help="the table database; an existing file resumes from it")
    parser.add_argument("--one-cycle", action="store_true", help="just one stacking cycle, with times per side")
    parser.add_argument("--quiet", action="store_true", help="print only the summary line")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.one_cycle:
        return run_game(args)
    from firmware.config import default_table_path, load_table_config
    from sim.faults import parse_fault
    from sim.harness import SimTable

    cfg = load_table_config(args.table or default_table_path())
    if args.tiles:
        cfg = cfg.model_copy(update={"table": cfg.table.model_copy(update={"tile_set": args.tiles})})
    faults = [parse_fault(spec) for spec in args.inject]
    wall_start = time.perf_counter()
    sim = SimTable(cfg, seed=args.seed, faults=faults)
    result, verification = sim.stack_and_read("A")
    wall_s = time.perf_counter() - wall_start
    report = {
        "version": 1, "seed": args.seed, "table": cfg.table.name, "tile_set": cfg.table.tile_set,
        "ok": result.ok, "stack_s": round(result.duration_s, 3),
        "sides": [{"side": s, "tiles": result.tiles[s], "stacks": result.stacks[s],
                   "done_s": None if result.side_done_s[s] is None else round(result.side_done_s[s], 3)}
                  for s in range(4)],
        "pauses": result.pauses,
        "wall": {"may_rise": verification.may_rise, "summary": verification.summary(),
                 "problems": [str(p) for p in verification.problems], "warnings": verification.warnings},
        "rfid": _rfid_report(sim, verification),
        "faults": [{"code": f.code.value, "tier": f.tier.value, "at_s": round(f.at_s, 3), "source": f.source,
                    "detail": f.detail, "text": f.code.text, "hint": f.code.hint} for f in sim.faults()],
        "motors_safe": sim.table.motors_safe(),
        "simulated_s": round(sim.loop.now(), 3), "wall_s": round(wall_s, 3),
    }
    if not args.quiet:
        print(f"table: {cfg.table.name}, {cfg.table.tile_set}-tile set, seed {args.seed}")
        for side in report["sides"]:
            done = "not complete" if side["done_s"] is None else f"done at {side['done_s']:6.2f} s"
            print(f"  side {side['side']}: {side['tiles']:3d} tiles, {side['stacks']:2d} stacks, {done}")
        print(f"  wall: {verification.summary()}")
        for problem in verification.problems[:10]:
            print(f"    {problem}")
        rfid = report["rfid"]
        print(f"  reader: {rfid['tiles_read']} tags, {rfid['frames_ok']} frames ok, {rfid['crc_errors']} CRC errors, "
              f"{rfid['resyncs']} resyncs, {rfid['reconnects']} reconnects, {rfid['events_lost']} events lost")
        for fault in report["faults"]:
            print(f"  fault {fault['code']} ({fault['tier']}) at {fault['at_s']:.2f} s: {fault['text']}"
                  f" [{fault['source']}]\n    hint: {fault['hint']}")
    status = "stacked" if result.ok else f"stopped by {result.fault.code.value}"
    print(f"{status} in {result.duration_s:.2f} simulated s ({wall_s:.2f} s wall), "
          f"{result.pauses} back-pressure pauses; motors {'safe' if report['motors_safe'] else 'RUNNING'}")
    if args.report:
        args.report.write_text(json.dumps(report, indent=2) + "\n")
    latched = result.fault is not None and result.fault.tier.value == "latched"
    return 1 if latched else 0


def _rfid_report(sim, verification) -> dict:
    c = sim.table.reader.counters
    return {"frames_ok": c.frames_ok, "crc_errors": c.crc_errors, "resyncs": c.resyncs, "reconnects": c.reconnects,
            "tiles_read": c.tags, "events_lost": c.events_lost, "drops": c.drops,
            "sets_verified": int(verification.may_rise), "sets_rejected": int(not verification.may_rise)}


def run_game(args: argparse.Namespace) -> int:
    import statistics

    from firmware.config import default_table_path, load_table_config
    from sim.faults import parse_fault
    from sim.table_run import SimRun

    cfg = load_table_config(args.table or default_table_path())
    if args.tiles:
        cfg = cfg.model_copy(update={"table": cfg.table.model_copy(update={"tile_set": args.tiles})})
    if args.hands < 1:
        raise ValueError("--hands must be at least 1")
    faults = [parse_fault(spec) for spec in args.inject]
    wall_start = time.perf_counter()
    run = SimRun(cfg, rules=args.rules, seed=args.seed, faults=faults, hands=args.hands, state_path=args.state,
                 play=True)
    completed = run.run(timeout_s=args.hands * 900.0 + 600.0)
    wall_s = time.perf_counter() - wall_start
    done = [e for e in run.events if e.topic == "stacking.done"]
    stack_s = sorted(e.data["duration_s"] for e in done if e.data["ok"])
    hands = run.store.hands() if run.controller else []
    book = run.controller.book if run.controller else None
    c = run.table.reader.counters
    verified = [e for e in run.events if e.topic == "wall.verified"]
    report = {
        "version": 1, "seed": args.seed, "rules": args.rules, "table": cfg.table.name,
        "hands_requested": args.hands, "hands_played": len(run.game.scoreboard.history),
        "hands_won": len({w["hand"] for w in run.game.wins}), "hands_drawn": run.game.drawn,
        "wins": run.game.wins,
        "chips": {f"side{s}": c for s, c in enumerate(run.game.scoreboard.chips)},
        "chips_conserved": run.game.scoreboard.conserved,
        "cycle": {"sets_stacked": len(stack_s),
                  "stack_s": {"mean": round(statistics.mean(stack_s), 2) if stack_s else None,
                              "p95": round(stack_s[int(0.95 * (len(stack_s) - 1))], 2) if stack_s else None,
                              "max": round(stack_s[-1], 2) if stack_s else None},
                  "wait_for_ready_s": {"total": round(book.players_waited_s, 2) if book else None}},
        "rfid": {"frames_ok": c.frames_ok, "crc_errors": c.crc_errors, "resyncs": c.resyncs,
                 "reconnects": c.reconnects, "tiles_read": c.tags,
                 "sets_verified": sum(1 for e in verified if e.data["may_rise"]),
                 "sets_rejected": sum(1 for e in verified if not e.data["may_rise"])},
        "faults": [{"code": f["code"], "tier": f["tier"], "at_s": round(f["at_s"], 3), "state": f["state"],
                    "detail": f["detail"], "acknowledged_at_s": f["acknowledged_at_s"]}
                   for f in (run.store.faults() if run.controller else [])],
        "final_state": run.state.value if run.state else None,
        "simulated_s": round(run.loop.now(), 3), "wall_s": round(wall_s, 3),
        "speedup": round(run.loop.now() / wall_s, 1) if wall_s else None,
    }
    if not args.quiet:
        print(f"table: {cfg.table.name}, {run.cfg.table.tile_set}-tile set, rules {args.rules}, seed {args.seed}")
        wins_by_hand = {}
        for w in run.game.wins:
            wins_by_hand.setdefault(w["hand"], []).append(w)
        for h in hands:
            result = "; ".join(f"side {w['winner_side']} ({w['winner_seat']}) wins {w['total']}: "
                               + " ".join(f["name"] for f in w["fans"]) for w in wins_by_hand.get(h["hand"], [])) \
                or "drawn"
            print(f"  hand {h['hand']:2d}: set {h['set_id']}, dealer side {h['dealer']}, dice {h['dice']} - {result}")
        fan_counts: dict[str, int] = {}
        for w in run.game.wins:
            for f in w["fans"]:
                fan_counts[f["name"]] = fan_counts.get(f["name"], 0) + 1
        if fan_counts:
            top = sorted(fan_counts.items(), key=lambda kv: -kv[1])[:10]
            print("  fans: " + ", ".join(f"{name} x{n}" for name, n in top))
        print(f"  chips: {report['chips']}  (conserved: {report['chips_conserved']})")
        cyc = report["cycle"]
        print(f"  stacking: {cyc['sets_stacked']} sets, mean {cyc['stack_s']['mean']} s, max {cyc['stack_s']['max']} s;"
              f" players waited {cyc['wait_for_ready_s']['total']} s for walls")
        r = report["rfid"]
        print(f"  reader: {r['tiles_read']} tags, {r['frames_ok']} frames, {r['crc_errors']} CRC errors, "
              f"{r['reconnects']} reconnects; walls verified {r['sets_verified']}, rejected {r['sets_rejected']}")
        from firmware.faults import FaultCode
        for f in report["faults"]:
            code = FaultCode(f["code"])
            print(f"  fault {f['code']} ({f['tier']}) at {f['at_s']:.1f} s in {f['state']}: {code.text}\n"
                  f"    hint: {code.hint}")
    print(f"{len(hands)} of {args.hands} hands in {report['simulated_s']:.0f} simulated s ({wall_s:.2f} s wall, "
          f"x{report['speedup']}); final state {report['final_state']}")
    if args.report:
        args.report.write_text(json.dumps(report, indent=2, default=str) + "\n")
    run.close()
    latched = report["final_state"] == "latched"
    return 1 if latched or not completed else 0
