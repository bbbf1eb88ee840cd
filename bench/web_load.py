"""Web benchmark: the controller's loop lag with nobody watching, 20 socket subscribers, and 20 browsers.

The controller runs as ``mjtable run --sim`` runs it: the real-time loop,
the simulated table and its people behind the pins and the reader port (it
homes, stacks, reads, deals), and its technician's socket.  A probe timer
every 10 ms records how late the loop runs it (the lag).  Three windows of
the same length: no client; 20 subscriptions straight on the socket; and the
real web service (``mjtable web``, its own process) with 20 logged-in event
streams, as 20 phones on the parlour's Wi-Fi.  The clients run in a process
of their own at the lowest priority (they stand for phones, other machines
on a table), the web service at its unit's ``Nice=10``.  The page is served only to loopback.  Flat means the p99 and
the maximum lag with 20 watching are within a millisecond or two of the
window with none (what a busy two-core machine adds by itself).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WINDOW_S = 8.0
PROBE_S = 0.01
CLIENTS = int(os.environ.get("BENCH_WEB_CLIENTS", "20"))
NAME, PASSWORD = "bench", "bench-password-1"
WEB_NICE = 10             # as mjtable-web.service
PHONES_NICE = 19


def _nice(increment: int):
    """Lower a child's priority: the web service as its unit runs it (Nice=10); the clients stand for phones,
    which on a table are other machines entirely (the lowest priority here)."""
    return lambda: os.nice(increment)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _lags(loop, seconds: float) -> list[float]:
    """Run the loop for ``seconds`` with the probe: how late each probe timer ran (s)."""
    lags: list[float] = []
    end = loop.now() + seconds

    def probe(handle_box: list) -> None:
        lags.append(loop.now() - handle_box[0].when)
        if loop.now() < end:
            box = [None]
            box[0] = loop.call_later(PROBE_S, probe, box)
    box: list = [None]
    box[0] = loop.call_later(PROBE_S, probe, box)
    loop.call_later(seconds, loop.stop)
    loop.run_forever()
    return lags


def _window(loop, asked: list[int]) -> tuple[list[float], int]:
    """One measuring window: the lags, and the status requests the loop was asked in it."""
    before = asked[0]
    lags = _lags(loop, WINDOW_S)
    return lags, asked[0] - before


def _until(loop, done, timeout_s: float) -> None:
    """Run the loop (the table goes on) until ``done()``: the loop's thread never blocks on a client."""
    deadline = loop.now() + timeout_s

    def check() -> None:
        if done() or loop.now() >= deadline:
            loop.stop()
        else:
            loop.call_later(0.01, check)
    loop.call_later(0.0, check)
    loop.run_forever()
    if not done():
        raise RuntimeError("the web benchmark's clients did not start")


def _summary(lags: list[float], status_requests: int, seconds: float, lines: list[int] | None) -> dict:
    ordered = sorted(lags)
    return {"probes": len(lags), "p50_ms": round(1000 * statistics.median(ordered), 3),
            "p99_ms": round(1000 * ordered[int(0.99 * (len(ordered) - 1))], 3), "max_ms": round(1000 * ordered[-1], 3),
            "status_requests_per_s": round(status_requests / seconds, 2),
            "lines_per_client": None if lines is None else round(statistics.mean(lines), 1)}


def run() -> dict:
    from firmware.cli.run_cmd import service_options
    from firmware.diagnostics.commands import DiagCommands
    from firmware.diagnostics.socket.server import DiagSocketServer
    from firmware.web.users import Role, Users
    from firmware.root.host import HOST_CLOCK, real_loop
    from firmware.root.service import build_service

    results: dict = {"window_s": WINDOW_S, "clients": CLIENTS}
    # the database in RAM: a commit's sync on this machine's disk (a loop pause of its own, measured by the
    # durability benchmark) would land in one window or another by chance and hide what the watchers cost
    ram = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="bench-web-", dir=ram) as tmp:
        folder = Path(tmp)
        args = argparse.Namespace(config_dir=None, table=None, rules="mcr", seed=1, pin_factory=None, sim=True)
        loop = real_loop()
        wired = build_service(service_options(args, folder / "table.db", None), loop)
        asked = [0]
        commands = DiagCommands(wired.session)

        def post(fn, *fn_args) -> None:
            if fn_args and isinstance(fn_args[0], dict) and fn_args[0].get("cmd") == "status":
                asked[0] += 1
            loop.post(fn, *fn_args)
        server = DiagSocketServer(folder / "diag.sock", post, commands.handle, group=None, clock=HOST_CLOCK)
        server.start()
        wired.start()
        _lags(loop, 3.0)                                   # (homing and the first load under way)
        try:
            results["nobody"] = _summary(*_window(loop, asked), WINDOW_S, None)

            clients = subprocess.Popen([sys.executable, "-m", "bench.web_clients", "socket", str(folder / "diag.sock"),
                                        str(CLIENTS), str(WINDOW_S + 3)], stdout=subprocess.PIPE, text=True,
                                       preexec_fn=_nice(PHONES_NICE))
            _until(loop, lambda: server.subscribers == CLIENTS, 30.0)
            lags, status_requests = _window(loop, asked)
            _until(loop, lambda: clients.poll() is not None, 60.0)
            lines = json.loads(clients.communicate()[0])["lines"]
            results["socket_subscribers"] = _summary(lags, status_requests, WINDOW_S, lines)

            users = folder / "users.json"
            Users.load(users).set_password(NAME, PASSWORD, Role.STAFF)
            port = _free_port()
            web = subprocess.Popen([sys.executable, "-m", "firmware.cli.main", "web", "--socket",
                                    str(folder / "diag.sock"), "--state", str(folder / "table.db"), "--users",
                                    str(users), "--host", "127.0.0.1", "--port", str(port)],
                                   stderr=subprocess.DEVNULL, preexec_fn=_nice(WEB_NICE))
            _until(loop, lambda: server.subscribers == 1, 30.0)    # (the page's one subscription under way)
            browsers = subprocess.Popen([sys.executable, "-m", "bench.web_clients", "sse", f"http://127.0.0.1:{port}",
                                         str(CLIENTS), str(WINDOW_S + 3), NAME, PASSWORD], stdout=subprocess.PIPE,
                                        text=True, preexec_fn=_nice(PHONES_NICE))
            _lags(loop, 2.0)                               # (the browsers logged in and connected)
            lags, status_requests = _window(loop, asked)
            _until(loop, lambda: browsers.poll() is not None, 60.0)
            lines = json.loads(browsers.communicate()[0])["lines"]
            results["web_browsers"] = _summary(lags, status_requests, WINDOW_S, lines)
            web.terminate()
            _until(loop, lambda: web.poll() is not None, 30.0)
            results["nobody_after"] = _summary(*_window(loop, asked), WINDOW_S, None)
            results["faults"] = [row["code"] for row in wired.controller.policy.history()]
        finally:
            server.stop()
            wired.close()
    nobody = {k: max(results["nobody"][k], results["nobody_after"][k]) for k in ("p99_ms", "max_ms")}
    results["flat"] = all(results[k]["p99_ms"] <= nobody["p99_ms"] + 2.0 and results[k]["max_ms"] <= nobody["max_ms"]
                          + 5.0 for k in ("socket_subscribers", "web_browsers"))
    return results


def print_table(results: dict) -> None:
    print(f"\nweb: the controller's loop lag (run --sim at real time, a probe every {PROBE_S * 1000:g} ms, "
          f"{results['window_s']:g} s windows)")
    print(f"{'watching':24} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'status/s':>9} {'lines/client':>13}")
    for key, label in (("nobody", "nobody"), ("socket_subscribers", f"{results['clients']} socket subscribers"),
                       ("web_browsers", f"{results['clients']} browsers (mjtable web)"),
                       ("nobody_after", "nobody, again")):
        r = results[key]
        lines = "-" if r["lines_per_client"] is None else f"{r['lines_per_client']:g}"
        print(f"{label:24} {r['p50_ms']:8.3f} {r['p99_ms']:8.3f} {r['max_ms']:8.3f} {r['status_requests_per_s']:9.2f} "
              f"{lines:>13}")
    print(f"loop lag with {results['clients']} watching: {'flat' if results['flat'] else 'GROWS'} "
          f"(p99 within 2 ms and max within 5 ms of nobody); faults during the run: "
          f"{', '.join(results['faults']) or 'none'}")
