"""The service's start guard as systemd runs it (``/opt/mjtable/bin/mjtable-start``): the launcher, on the host's clock.

``mjtable install`` copies this file there and, beside it, the release
launcher (:mod:`firmware.release.launcher`: the trial's starts, the roll
back) as ``mjtable_launcher.py``.  Both run with the system's Python and
import only the standard library, never the release they guard, so this
script cannot import :mod:`hal.runtime` either: :class:`GuardClock` is the
host's clock (:class:`hal.runtime.HostClock`'s, written out again) that it
hands the launcher for the history's times.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

LAUNCHER = "mjtable_launcher.py"    # the copy of firmware/release/launcher.py beside this script


class GuardClock:
    """The host's clocks (the port ``firmware.ports.clock.Clock``), from the standard library alone."""

    def monotonic_s(self) -> float:
        return time.monotonic()

    def wall_s(self) -> float:
        return time.time()

    def utc_now(self) -> datetime:
        return datetime.now(timezone.utc)


def load_launcher(folder: Path) -> ModuleType:
    """The launcher installed in ``folder`` (not cached as bytecode: the root may be read-only)."""
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location("mjtable_launcher", folder / LAUNCHER)
    if spec is None or spec.loader is None:
        raise ImportError(f"{folder / LAUNCHER}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(load_launcher(Path(__file__).resolve().parent).main(sys.argv[1:], GuardClock()))
