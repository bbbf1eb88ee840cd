"""``mjtable sim``: run the table on the simulator and report.

Until the controller lands, a run is one stacking cycle of the configured
set on the simulated table, with the tile reader streaming and the wall
verified afterwards, with any injected faults; it prints times and tiles per
side, the wall check, the reader's line counters and the faults raised, and
can write them as JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sim", help="run the table on the simulator",
                            description="Run one stacking cycle on the simulated table.")
    parser.add_argument("--table", type=Path, help="table model (TOML); default: the four-port double-set model")
    parser.add_argument("--seed", type=int, default=1, help="seed for everything random (default 1)")
    parser.add_argument("--tiles", type=int, choices=(144, 136, 112, 108), help="override the table's tile set")
    parser.add_argument("--inject", action="append", default=[], metavar="SPEC",
                        help="fault to inject, KIND[:TARGET][@WHEN][=VALUE]; repeatable")
    parser.add_argument("--report", type=Path, help="write the JSON report here")
    parser.add_argument("--quiet", action="store_true", help="print only the summary line")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
