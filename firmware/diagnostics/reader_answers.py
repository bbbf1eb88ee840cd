"""The tile reader's service answers (ping, antenna health, inventory) as the technician reads them.

The same answers come from the running controller over the diag socket (its
reader driver owns the serial port while the service runs) and from
``mjtable diag reader`` talking to a board directly, so both print alike.
"""

from __future__ import annotations

from typing import Any, Callable

from firmware.faults import FaultCode
from firmware.reader.driver import Reply
from firmware.reader.messages import ANTENNAS, InventoryPart
from firmware.reader.registry import TileRegistry
from firmware.refusals import worded_answer
from firmware.tiles.tile import code

READER_ACTIONS = ("ping", "antennas", "inventory", "counters")


def antenna_place(antenna: int) -> str:
    return f"head of side {antenna}" if antenna < 4 else f"seat pad of side {antenna - 4}"


def ping_answer(reply: Reply, board, round_trip_s: float) -> dict[str, Any]:
    if not reply.ok or board is None:
        return {"ok": False, "error": f"ping failed: {reply.error}", "fault": FaultCode.E80.value,
                "hint": FaultCode.E80.hint}
    return {"ok": True, "protocol": board.protocol, "firmware": f"{board.firmware[0]}.{board.firmware[1]}",
            "antennas": board.antennas, "serial": f"{board.serial:08X}", "round_trip_ms": round(round_trip_s * 1000, 1)}


def antennas_answer(reply: Reply) -> dict[str, Any]:
    if not reply.ok or len(reply.payload) < 2:
        return {"ok": False, "error": f"antenna status failed: {reply.error}", "fault": FaultCode.E80.value}
    healthy = reply.payload[1]
    rows = [{"antenna": a, "place": antenna_place(a), "ok": bool(healthy >> a & 1)} for a in range(ANTENNAS)]
    answer: dict[str, Any] = {"ok": all(r["ok"] for r in rows), "antenna_health": rows}
    if not answer["ok"]:
        answer.update(fault=FaultCode.E81.value, hint=FaultCode.E81.hint)
    return answer


def inventory_answer(reply: Reply, antenna: int, registry: TileRegistry | None) -> dict[str, Any]:
    if not reply.ok:
        return {"ok": False, "error": f"inventory of antenna {antenna} failed: {reply.error}"}
    uids = [uid for frame in reply.frames for uid in InventoryPart.unpack(frame.payload).uids]
    tiles = []
    for uid in uids:
        entry = registry.lookup(uid) if registry else None
        tiles.append({"uid": uid.hex(), "tile": code(entry.kind) if entry else None,
                      "set": entry.set_id if entry else None})
    return {"ok": True, "antenna": antenna, "place": antenna_place(antenna), "tiles": tiles}


def ask_reader(reader, registry: TileRegistry | None, now: Callable[[], float], request: dict[str, Any],
               reply: Callable[[dict[str, Any]], None]) -> None:
    """Answer one reader request (``action``: ping, antennas, inventory with ``antenna``, counters)."""
    action = request.get("action")
    if action == "ping":
        start = now()
        reader.ping(lambda r: reply(ping_answer(r, reader.board, now() - start)))
    elif action == "antennas":
        reader.antenna_status(lambda r: reply(antennas_answer(r)))
    elif action == "inventory":
        antenna = request.get("antenna")
        if not isinstance(antenna, int) or not 0 <= antenna < ANTENNAS:
            reply(worded_answer("inventory needs an antenna 0..%(last)s", last=ANTENNAS - 1))
            return
        reader.inventory(antenna, lambda r: reply(inventory_answer(r, antenna, registry)))
    elif action == "counters":
        reply({"ok": True, "counters": reader.counters_dict()})
    else:
        reply(worded_answer("unknown reader action %(action)s; actions: %(all)s", action=repr(action)[:60],
                            all=", ".join(READER_ACTIONS)))


def reader_text(answer: dict[str, Any], where: str, w: Any = None) -> list[str]:
    """Lines for a reader answer; ``where`` names the board (its port, or the running table); in the words of
    ``w`` (a :class:`~firmware.diagnostics.render.Wording`: the command line's language; the code's English
    without one)."""
    from firmware.diagnostics.render import PLAIN

    _, ngettext = (w or PLAIN).gettext, (w or PLAIN).ngettext
    hint = [_("hint: %(hint)s") % {"hint": _(answer["hint"])}] if "hint" in answer else []
    if not answer.get("ok") and "antenna_health" not in answer:
        return [f"{where}: {answer.get('error') or _('failed')}"] + hint
    if "protocol" in answer:
        return [_("%(where)s: protocol %(protocol)s, firmware %(firmware)s, %(antennas)s antennas, serial "
                  "%(serial)s; round trip %(ms)s ms")
                % {"where": where, "protocol": answer["protocol"], "firmware": answer["firmware"],
                   "antennas": answer["antennas"], "serial": answer["serial"],
                   "ms": f"{answer['round_trip_ms']:.1f}"}]
    if "antenna_health" in answer:
        fault = _("FAULT (%(code)s)") % {"code": FaultCode.E81.value}
        lines = ["  " + _("antenna %(antenna)s (%(place)s): %(health)s")
                 % {"antenna": r["antenna"], "place": place_words(r["antenna"], _), "health": _("ok") if r["ok"]
                    else fault} for r in answer["antenna_health"]]
        return lines + hint
    if "tiles" in answer:
        count = len(answer["tiles"])
        lines = [ngettext("antenna %(antenna)s (%(place)s): %(n)s tile", "antenna %(antenna)s (%(place)s): %(n)s tiles",
                          count) % {"antenna": answer["antenna"], "place": place_words(answer["antenna"], _),
                                    "n": count}]
        return lines + [f"  {t['uid']}  " + (_("%(tile)s (set %(set)s)") % {"tile": t["tile"], "set": t["set"]}
                                             if t["tile"] else _("not registered")) for t in answer["tiles"]]
    return [f"  {name:20} {value}" for name, value in answer.get("counters", {}).items()]


def place_words(antenna: int, _: Any) -> str:
    """Where an antenna is, in words (``_``: a catalogue's gettext)."""
    if antenna < 4:
        return _("head of side %(side)s") % {"side": antenna}
    return _("seat pad of side %(side)s") % {"side": antenna - 4}
