"""The controller's diag answers as a technician reads them: one line per movement, fault or sensor.

The words are a :class:`Wording`'s (the command line's language: its
catalogue, a state's and a tier's names); without one, the code's own
English with the identifiers as the controller gives them.  What the
controller reports as data (a status's fields, a record) is shown as it is.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from firmware.i18n import N_


class Wording(Protocol):
    def gettext(self, message: str) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int) -> str: ...

    def state(self, name: str) -> str: ...

    def tier(self, name: str) -> str: ...


class Plain:
    """The code's own English; states and tiers by their identifiers."""

    @staticmethod
    def gettext(message: str) -> str:
        return message

    @staticmethod
    def ngettext(singular: str, plural: str, n: int) -> str:
        return singular if n == 1 else plural

    @staticmethod
    def state(name: str) -> str:
        return name

    @staticmethod
    def tier(name: str) -> str:
        return name


PLAIN = Plain()


def render(answer: dict[str, Any], w: Wording = PLAIN) -> str:
    """Plain text for a diag answer (``--json`` prints the answer itself)."""
    _, ngettext = w.gettext, w.ngettext
    lines: list[str] = []
    if not answer.get("ok"):
        error = (w.refusal(answer) if hasattr(w, "refusal") else None) or answer.get("error")   # (a code: worded)
        lines.append(_("FAILED: %(error)s") % {"error": error} if "error" in answer else _("FAILED"))
    skip = {"ok", "error", "timeout_s", "refusal", "params", "words"}
    if "mechanism" in answer:               # one movement (jog)
        lines.append(_move(answer, w))
        skip |= MOVE_KEYS
    for key, value in answer.items():
        if key in skip:
            continue
        if key in ("moves", "failed") and isinstance(value, list):
            if value:
                lines.append(_("moves:") if key == "moves" else _("failed:"))
                lines += [f"  {_move(m, w)}" for m in value]
        elif key == "lines" and isinstance(value, list):
            lines += [f"{r['level']:8} {r['logger']}: {r['message']}" for r in value]
        elif key == "session" and isinstance(value, dict):
            lines.append(_session(value, w))
        elif key == "sessions" and isinstance(value, list):
            lines.append(_("sessions: %(n)s") % {"n": len(value)})
            lines += [_("  #%(id)s %(minutes)s min by %(opened_by)s: ") % r
                      + (ngettext("%(hands)s hand, ended (%(reason)s) by %(ended_by)s",
                                  "%(hands)s hands, ended (%(reason)s) by %(ended_by)s", r["hands"] or 0)
                         % {**r, "reason": _(SESSION_ENDS.get(r["reason"], "ended"))}
                         if r["ended_s"] is not None else _("open")) for r in value]
        elif key == "faults" and isinstance(value, list):
            lines.append(_("faults: %(n)s") % {"n": len(value)})
            lines += [f"  {_fault(f, w)}" for f in value]
        elif key == "fans" and isinstance(value, list):
            lines.append(_("fans:"))
            lines += [f"  {f['name']} {f['points']}" + (f" x{f['count']}" if f.get("count", 1) > 1 else "")
                      for f in value]
        elif key == "money" and isinstance(value, list):
            lines.append(ngettext("money: %(n)s payment", "money: %(n)s payments", len(value)) % {"n": len(value)})
            lines += ["  " + _("%(name)s (%(reason)s): side %(payer)s pays side %(payee)s %(amount)s") % p
                      + (_(" (held until the game ends)") if p.get("held") else "") for p in value]
        elif key == "breakdown" and isinstance(value, list):
            if value:
                lines.append(_("breakdown (each payer's share):"))
                lines += ["  " + _("side %(payer)s: %(amount)s = ") % b + (" + ".join(
                    f"{i['name']} {i['points']}" + (f" x{i['count']}" if i['count'] > 1 else "") for i in b["items"])
                    or _("base")) for b in value]
        elif key == "record" and isinstance(value, dict):
            context = ", ".join(f"{k} {_compact(v)}" for k, v in value.items() if k != "actions")
            lines.append(_("record: %(context)s") % {"context": context})
            lines += [f"  {i:3d}  {a}" for i, a in enumerate(value.get("actions", []))]
        elif key == "changes" and isinstance(value, list):
            lines.append(_("changes: %(n)s") % {"n": len(value)})
            lines += [f"  +{c['after_s']:7.3f} s  {c['input']:16} {_('ON') if c['active'] else _('off')}"
                      for c in value]
        elif key == "test" and isinstance(value, str):          # a service test, by its name
            lines.append(_("test: %(test)s") % {"test": value})
        elif key == "state" and isinstance(value, str):         # the controller's state, in words
            lines.append(_("state: %(state)s") % {"state": w.state(value)})
        elif key == "status" and isinstance(value, dict):       # the status components, one block each
            for name, fields in value.items():
                lines.append(f"{name}:")
                lines += [f"  {k}: {_compact(w.state(v) if k == 'state' and name == 'table' else v)}"
                          for k, v in fields.items()]
        elif key == "sensors" and isinstance(value, dict):
            lines.append(_("sensors:"))
            on_off = (_("off"), _("ON"))
            lines += [f"  {name:16} {on_off[bool(on)]}" for name, on in value.items()]
        elif isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {k}: {_compact(v)}" for k, v in value.items()]
        else:
            lines.append(f"{key}: {_compact(value)}")
    return "\n".join(lines)


MOVE_KEYS = {"mechanism", "elapsed_s", "ran_s", "revolutions", "faces", "fault", "hint", "aborted"}


def _move(move: dict[str, Any], w: Wording = PLAIN) -> str:
    _, ngettext = w.gettext, w.ngettext
    if move.get("aborted"):
        return f"{move['mechanism']:12} " + _("aborted (the table stopped for another mechanism's fault)")
    took = _("%(s)s s") % {"s": f"{move['elapsed_s']:.2f}"} if move.get("elapsed_s") is not None else ""
    if "ran_s" in move:
        turns = move.get("revolutions", 0)
        took = ngettext("ran %(s)s s, %(n)s revolution", "ran %(s)s s, %(n)s revolutions", turns) % {
            "s": f"{move['ran_s']:g}", "n": turns}
    status = _("ok") if move.get("ok") else _("FAIL")
    text = f"{move.get('mechanism', '?'):12} {status:4} {took}"
    if move.get("faces"):
        text += "  " + _("faces %(first)s+%(second)s") % {"first": move["faces"][0], "second": move["faces"][1]}
    if move.get("fault"):
        text += f"  {move['fault']}: {_(move.get('hint', ''))}"
    return text.rstrip()


def _fault(fault: dict[str, Any], w: Wording = PLAIN) -> str:
    _ = w.gettext
    acked = fault.get("acknowledged_at_s")
    text = (_("%(code)s %(tier)s at %(at)s s in %(state)s") % {
        "code": fault["code"], "tier": w.tier(fault.get("tier", "")), "at": f"{fault.get('at_s', 0):.1f}",
        "state": w.state(fault.get("state", "?"))} + f" [{fault.get('source', '')}]: {_(fault.get('text', ''))}")
    if acked is not None:
        text += _(" (acknowledged at %(at)s s)") % {"at": f"{acked:.1f}"}
    cleared = fault.get("cleared_at_s")
    if cleared is not None:
        text += _(" (cleared at %(at)s s)") % {"at": f"{cleared:.1f}"}
    if fault.get("hint"):
        text += "\n    " + _("hint: %(hint)s") % {"hint": _(fault["hint"])}
    return text


def render_status_line(line: dict[str, Any], w: Wording = PLAIN) -> str:
    """One line of a status subscription (``mjtable diag status --follow``) as text."""
    _ = w.gettext
    at = line.get("at_s")
    when = {"at": f"{at:.1f}" if isinstance(at, (int, float)) else "?"}
    if "snapshot" in line:
        return _("snapshot at %(at)s s:") % when + "\n" + render({"ok": True, **line["snapshot"]}, w)
    if "patch" in line:
        changes = [f"{name}.{key}={_compact(value)}" for name, fields in line["patch"].items()
                   for key, value in fields.items()]
        return _("at %(at)s s: ") % when + " ".join(changes)
    if line.get("heartbeat"):
        age = line.get("status_age_s")
        text = (_("heartbeat at %(at)s s, status %(age)s s old") % {**when, "age": f"{age:g}"} if age is not None
                else _("heartbeat at %(at)s s") % when)
        return f"({text}" + (f": {line['error']}" if line.get("error") else "") + ")"
    return render(line, w)


def _compact(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


SESSION_STATES = {"open": N_("open"), "ending": N_("ending (the last hand)"), "closed": N_("over")}
SESSION_ENDS = {"time_up": N_("time up"), "closed": N_("closed by staff"), "ended": N_("ended")}


def _session(status: dict[str, Any], w: Wording = PLAIN) -> str:
    """A table session (开台) in words."""
    _, ngettext = w.gettext, w.ngettext
    state = status.get("state")
    if state is None:
        return _("session: none opened (the table plays freely)")
    text = _("session #%(id)s: %(state)s, %(minutes)s min") % {
        "id": status["id"], "state": _(SESSION_STATES.get(state, "open")), "minutes": status["minutes"]}
    if status.get("seconds_left") is not None:
        text += _(", %(left)s min left") % {"left": f"{status['seconds_left'] / 60:.1f}"}
    if status.get("warning"):
        text += _(" (warned at %(minutes)s min)") % {"minutes": status["warning"]}
    hands = status.get("hands") or 0
    text += ngettext(", %(n)s hand", ", %(n)s hands", hands) % {"n": hands}
    if status.get("reason"):
        text += _(", ended: %(reason)s") % {"reason": _(SESSION_ENDS.get(status["reason"], "ended"))}
    return text
