"""The technician's records of a table: its recent log (followed live) and a support ticket's parts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from firmware.i18n import worded
from firmware.refusals import worded_answer
from firmware.diagnostics import log_ring
from firmware.diagnostics.request_fields import BadField, Reply

if TYPE_CHECKING:
    from firmware.game.session import TableSession
    from firmware.loop import Loop

LOG_WAIT_MAX_S = 60.0       # a log request waits at most this long for a new line (following live)
LOG_LOOK_S = 0.5


def _versions() -> dict:
    """The firmware's and its main libraries' versions, the Python and the system."""
    import platform
    from importlib import metadata

    import firmware

    out = {"mjtable": firmware.__version__, "python": platform.python_version(), "system": platform.platform()}
    for package in ("starlette", "uvicorn", "pydantic", "paho-mqtt", "transitions", "gpiozero", "pyserial",
                    "cryptography"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    return out


def log_request(loop: "Loop", request: dict, reply: Reply) -> None:
    """The service's recent log (:mod:`firmware.diagnostics.log_ring`): ``level``, ``text``, ``after``,
    ``limit``."""
    ring = log_ring.ring()
    if ring is None:
        reply(worded_answer("this process keeps no log for the page (the journal has it: journalctl -u mjtable)"))
        return
    wait_s = request.get("wait_s", 0)
    if isinstance(wait_s, bool) or not isinstance(wait_s, (int, float)) or not 0 <= wait_s <= LOG_WAIT_MAX_S:
        raise worded(BadField, "log: wait_s is 0 to %(most)s seconds", most=f"{LOG_WAIT_MAX_S:g}")

    def look() -> dict:
        try:
            return ring.lines(request.get("level", "INFO"), request.get("text", ""), request.get("after", 0),
                              request.get("limit", log_ring.MAX_LINES))
        except ValueError as exc:
            raise worded(BadField, "log: %(problem)s", problem=exc) from None

    answer = look()
    if answer["lines"] or not wait_s:
        reply({"ok": True, **answer})
        return
    deadline = loop.now() + wait_s

    def again() -> None:                # (following live: answered when new lines come, or at the deadline)
        found = look()
        if found["lines"] or loop.now() >= deadline:
            reply({"ok": True, **found})
        else:
            loop.call_later(LOG_LOOK_S, again)
    loop.call_later(LOG_LOOK_S, again)


def bundle_request(session: "TableSession", fault_rows: list[dict], request: dict, reply: Reply) -> None:
    """What a support ticket's archive holds, from this table (:mod:`firmware.support_bundle` redacts it and
    writes it; ``integrity``: check the database here too, for a caller that cannot open it)."""
    from firmware.support_bundle import integrity_check, redact

    cfg = session.controller.table.cfg
    files: dict[str, str] = {}
    if cfg.source is not None:
        try:
            files[Path(str(cfg.source)).name] = Path(str(cfg.source)).read_text(encoding="utf-8")[:200_000]
        except OSError as exc:
            files[Path(str(cfg.source)).name] = f"(not readable: {exc})"
    ring = log_ring.ring()
    staff = session.staff
    answer = {"ok": True, "versions": _versions(), "database": str(session.store.path),
              "config": redact({"table": cfg.model_dump(mode="json"), "rules": session.rules.name}),
              "config_files": files, "faults": fault_rows,
              "log": ring.lines("DEBUG", "", 0, log_ring.MAX_LINES)["lines"] if ring is not None else [],
              "sessions": staff.sessions(50) if staff is not None else [], "status": session.get_status()}
    if request.get("integrity") and session.store.path != ":memory:":
        answer["integrity"] = integrity_check(session.store.path)
    reply(answer)
