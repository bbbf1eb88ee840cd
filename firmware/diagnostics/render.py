"""The controller's diag answers as a technician reads them: one line per movement, fault or sensor."""

from __future__ import annotations

import json
from typing import Any


def render(answer: dict[str, Any]) -> str:
    """Plain text for a diag answer (``--json`` prints the answer itself)."""
    lines: list[str] = []
    if not answer.get("ok"):
        lines.append(f"FAILED: {answer['error']}" if "error" in answer else "FAILED")
    skip = {"ok", "error", "timeout_s"}
    if "mechanism" in answer:               # one movement (jog)
        lines.append(_move(answer))
        skip |= MOVE_KEYS
    for key, value in answer.items():
        if key in skip:
            continue
        if key in ("moves", "failed") and isinstance(value, list):
            if value:
                lines.append(f"{key}:")
                lines += [f"  {_move(m)}" for m in value]
        elif key == "lines" and isinstance(value, list):
            lines += [f"{r['level']:8} {r['logger']}: {r['message']}" for r in value]
        elif key == "session" and isinstance(value, dict):
            lines.append(_session(value))
        elif key == "sessions" and isinstance(value, list):
            lines.append(f"sessions: {len(value)}")
            lines += [f"  #{r['id']} {r['minutes']} min by {r['opened_by']}: "
                      + (f"{r['hands']} hands, ended ({r['reason']}) by {r['ended_by']}" if r["ended_s"] is not None
                         else "open") for r in value]
        elif key == "faults" and isinstance(value, list):
            lines.append(f"faults: {len(value)}")
            lines += [f"  {_fault(f)}" for f in value]
        elif key == "fans" and isinstance(value, list):
            lines.append("fans:")
            lines += [f"  {f['name']} {f['points']}" + (f" x{f['count']}" if f.get("count", 1) > 1 else "")
                      for f in value]
        elif key == "money" and isinstance(value, list):
            lines.append(f"money: {len(value)} payments")
            lines += [f"  {p['name']} ({p['reason']}): side {p['payer']} pays side {p['payee']} {p['amount']}"
                      + (" (held until the game ends)" if p.get("held") else "") for p in value]
        elif key == "breakdown" and isinstance(value, list):
            if value:
                lines.append("breakdown (each payer's share):")
                lines += [f"  side {b['payer']}: {b['amount']} = " + (" + ".join(
                    f"{i['name']} {i['points']}" + (f" x{i['count']}" if i['count'] > 1 else "") for i in b["items"])
                    or "base") for b in value]
        elif key == "record" and isinstance(value, dict):
            context = ", ".join(f"{k} {_compact(v)}" for k, v in value.items() if k != "actions")
            lines.append(f"record: {context}")
            lines += [f"  {i:3d}  {a}" for i, a in enumerate(value.get("actions", []))]
        elif key == "changes" and isinstance(value, list):
            lines.append(f"changes: {len(value)}")
            lines += [f"  +{c['after_s']:7.3f} s  {c['input']:16} {'ON' if c['active'] else 'off'}" for c in value]
        elif key == "status" and isinstance(value, dict):       # the status components, one block each
            for name, fields in value.items():
                lines.append(f"{name}:")
                lines += [f"  {k}: {_compact(v)}" for k, v in fields.items()]
        elif key == "sensors" and isinstance(value, dict):
            lines.append("sensors:")
            lines += [f"  {name:16} {'ON' if on else 'off'}" for name, on in value.items()]
        elif isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {k}: {_compact(v)}" for k, v in value.items()]
        else:
            lines.append(f"{key}: {_compact(value)}")
    return "\n".join(lines)


MOVE_KEYS = {"mechanism", "elapsed_s", "ran_s", "revolutions", "faces", "fault", "hint", "aborted"}


def _move(move: dict[str, Any]) -> str:
    if move.get("aborted"):
        return f"{move['mechanism']:12} aborted (the table stopped for another mechanism's fault)"
    took = f"{move['elapsed_s']:.2f} s" if move.get("elapsed_s") is not None else ""
    if "ran_s" in move:
        took = f"ran {move['ran_s']:g} s, {move.get('revolutions', 0)} revolutions"
    status = "ok" if move.get("ok") else "FAIL"
    text = f"{move.get('mechanism', '?'):12} {status:4} {took}"
    if move.get("faces"):
        text += f"  faces {move['faces'][0]}+{move['faces'][1]}"
    if move.get("fault"):
        text += f"  {move['fault']}: {move.get('hint', '')}"
    return text.rstrip()


def _fault(fault: dict[str, Any]) -> str:
    acked = fault.get("acknowledged_at_s")
    text = (f"{fault['code']} {fault.get('tier', '')} at {fault.get('at_s', 0):.1f} s in {fault.get('state', '?')}"
            f" [{fault.get('source', '')}]: {fault.get('text', '')}")
    if acked is not None:
        text += f" (acknowledged at {acked:.1f} s)"
    cleared = fault.get("cleared_at_s")
    if cleared is not None:
        text += f" (cleared at {cleared:.1f} s)"
    if fault.get("hint"):
        text += f"\n    hint: {fault['hint']}"
    return text


def render_status_line(line: dict[str, Any]) -> str:
    """One line of a status subscription (``mjtable diag status --follow``) as text."""
    at = line.get("at_s")
    when = f"{at:.1f} s" if isinstance(at, (int, float)) else "?"
    if "snapshot" in line:
        return f"snapshot at {when}:\n" + render({"ok": True, **line["snapshot"]})
    if "patch" in line:
        changes = [f"{name}.{key}={_compact(value)}" for name, fields in line["patch"].items()
                   for key, value in fields.items()]
        return f"at {when}: " + " ".join(changes)
    if line.get("heartbeat"):
        age = line.get("status_age_s")
        return f"(heartbeat at {when}" + (f", status {age:g} s old" if age is not None else "") + \
            (f": {line['error']}" if line.get("error") else "") + ")"
    return render(line)


def _compact(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _session(status: dict[str, Any]) -> str:
    """A table session (开台) in words."""
    state = status.get("state")
    if state is None:
        return "session: none opened (the table plays freely)"
    text = f"session #{status['id']}: {state}, {status['minutes']} min"
    if status.get("seconds_left") is not None:
        text += f", {status['seconds_left'] / 60:.1f} min left"
    if status.get("warning"):
        text += f" (warned at {status['warning']} min)"
    text += f", {status.get('hands') or 0} hands"
    if status.get("reason"):
        text += f", ended: {status['reason']}"
    return text
