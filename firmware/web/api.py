"""The web page's API: the live event stream, the status, and the actions a technician may take.

``GET /events`` is the Server-Sent Events stream of :class:`~firmware.web.hub.Hub`
(a snapshot, coalesced patches, heartbeats); ``GET /api/status`` the same
snapshot once.  Actions (POST, JSON, Origin checked by the guards, a
technician's session): ``/api/ack`` acknowledges a latched fault,
``/api/hold`` starts a held jog or service test (``{"kind": "jog",
"name": "stacker0"}``, ``{"kind": "test", "name": "lifts"}``),
``/api/hold/ID/alive`` keeps it going, ``/api/hold/ID/release`` lets go,
``/api/stop`` stops whatever test runs.  Staff may look but not act: an
action from a staff session is refused with 403 and the reason.  Every
body is validated first (:mod:`firmware.web.bodies`: a body that is not
what the route takes is 400 with the problems, and nothing is sent to the
controller).  The
controller decides the rest (service mode, the lid, a running test) and its
answer is passed back as it is, but for a refusal: the controller answers a
code (:mod:`firmware.refusals`), the page's own refusals are phrases, and
both are worded here in the request's language (:meth:`i18n.Words.answer`).
"""

from __future__ import annotations

import logging
from typing import Any

from firmware.i18n import N_
from firmware.web import bodies, i18n
from firmware.web.i18n import said
from firmware.web.state import COOKIE, WebState, may_act
from firmware.web.bodies import BadBody

log = logging.getLogger(__name__)

RUN_TESTS = N_("run service tests or jogs")          # (what a role may not do, in the refusal's words)
ROLES = {"staff": N_("staff"), "technician": N_("technician")}


def web(request: Any) -> WebState:
    return request.app.state.web


def _json(answer: dict[str, Any], status_code: int = 200) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(answer, status_code=status_code)


def _words(request: Any) -> i18n.Words:
    return i18n.words(i18n.choose(request))


def _said(request: Any, answer: dict[str, Any], status_code: int = 200) -> Any:
    """The controller's answer in the request's language (a refusal's code worded: :meth:`i18n.Words.answer`)."""
    return _json(_words(request).answer(answer), status_code)


def _refused(request: Any, message: str, status_code: int, **values: Any) -> Any:
    """The page's own refusal, in the request's language."""
    text = _words(request).gettext(message)
    return _json({"ok": False, "error": text % values if values else text}, status_code)


def _session_or_refusal(request: Any, act: str | None) -> tuple[Any, Any]:
    """The request's session, or the refusal: 503 with no user set, 401 without a session, 403 when the
    session's role may not ``act``."""
    state = web(request)
    if not state.settings.users:
        return None, _refused(request, N_("no password is set on this table (mjtable web passwd)"), 503)
    session = state.session(request)
    if session is None:
        return None, _refused(request, N_("log in first"), 401)
    if act is not None and not may_act(session):
        return None, _refused(request, N_("your role (%(role)s) may not %(act)s"), 403,
                              role=_words(request).gettext(ROLES.get(session.role.value, session.role.value)),
                              act=_words(request).gettext(act))
    return session, None


async def _body(request: Any, adapter: Any, empty: bool = False) -> tuple[Any, Any]:
    """The request's body as ``adapter``'s model, or the refusal (400, the problems; a client gone before its
    body ended is answered 400 too, for nobody, rather than an error logged for each)."""
    from starlette.requests import ClientDisconnect

    try:
        return bodies.parse(adapter, await request.body(), empty), None
    except ClientDisconnect:
        return None, _refused(request, N_("bad request body: the client left before its end"), 400)
    except BadBody as exc:
        return None, _refused(request, N_("bad request body: %(problem)s"), 400, problem=exc)


async def _session_and_nothing(request: Any, act: str) -> tuple[Any, Any]:
    """The session of a request whose body is nothing (or ``{}``), or the refusal."""
    session, refusal = _session_or_refusal(request, act)
    if refusal:
        return None, refusal
    _, refusal = await _body(request, bodies.NOTHING, empty=True)
    return (None, refusal) if refusal else (session, None)


async def events(request: Any) -> Any:
    from starlette.responses import StreamingResponse

    session, refusal = _session_or_refusal(request, None)
    if refusal:
        return refusal
    state = web(request)
    token = request.cookies.get(COOKIE)
    refused = state.hub.refusal(token, session.role)
    stream = state.hub.open(token, session.role) if refused is None else None
    if stream is None:
        return _said(request, refused or said(N_("too many pages are open: close one")), 503)

    async def lines() -> Any:
        try:
            while not stream.given_up:
                out = await stream.take()
                if state.sessions.get(token, state.now_s()) is None:
                    yield "event: logged_out\ndata: {}\n\n"
                    return
                for line in out:
                    yield line
        finally:
            state.hub.close(stream)
    return StreamingResponse(lines(), media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})


async def status(request: Any) -> Any:
    session, refusal = _session_or_refusal(request, None)
    return refusal or _json({"ok": True, "status": web(request).hub.view(),
                             "role": session.role.value, "user": session.user})


async def ack(request: Any) -> Any:
    session, refusal = await _session_and_nothing(request, N_("acknowledge faults"))
    if refusal:
        return refusal
    answer = await web(request).control.ask({"cmd": "ack"})
    log.info("acknowledge by %s: %s", session.user, answer.get("error") or "done")
    return _said(request, answer)


async def stop(request: Any) -> Any:
    session, refusal = await _session_and_nothing(request, N_("stop service tests"))
    if refusal:
        return refusal
    return _said(request, await web(request).control.ask({"cmd": "stop"}))


async def hold(request: Any) -> Any:
    session, refusal = _session_or_refusal(request, RUN_TESTS)
    if refusal:
        return refusal
    body, refusal = await _body(request, bodies.HOLD)
    if refusal:
        return refusal
    state = web(request)
    return _said(request, await state.holds.start(request.cookies.get(COOKIE), session.user, body.action(),
                                                  state.now_s()))


async def hold_alive(request: Any) -> Any:
    session, refusal = await _session_and_nothing(request, RUN_TESTS)
    if refusal:
        return refusal
    state = web(request)
    answer = state.holds.keepalive(request.path_params["hold"], request.cookies.get(COOKIE), state.now_s())
    return _said(request, answer, 200 if answer.get("ok") else 404)


async def hold_release(request: Any) -> Any:
    session, refusal = await _session_and_nothing(request, RUN_TESTS)
    if refusal:
        return refusal
    answer = web(request).holds.release(request.path_params["hold"], request.cookies.get(COOKIE))
    return _said(request, answer, 200 if answer.get("ok") else 404)


# -- staff: names at the seats, games, the table session (开台); staff and technicians -------------------------------
def _staff_or_refusal(request: Any) -> tuple[Any, Any]:
    """A logged-in staff member's or technician's session (both may run the table's games), or the refusal."""
    return _session_or_refusal(request, None)


async def _staff_action(request: Any, adapter: Any, to_request: Any) -> Any:
    session, refusal = _staff_or_refusal(request)
    if refusal:
        return refusal
    body, refusal = await _body(request, adapter)
    if refusal:
        return refusal
    ask = {**to_request(body), "by": f"web:{session.user}"}
    answer = await web(request).control.ask(ask)
    log.info("%s by %s: %s", ask["cmd"], session.user, answer.get("error") or "done")
    return _said(request, answer, 200 if answer.get("ok") else 409)


async def staff_players(request: Any) -> Any:
    return await _staff_action(request, bodies.PLAYERS, lambda b: {
        "cmd": "players", "players": b.players.model_dump() if b.players is not None else None})


async def staff_session(request: Any) -> Any:
    if request.method == "GET":
        session, refusal = _staff_or_refusal(request)
        return refusal or _said(request, await web(request).control.ask({"cmd": "session", "action": "status"}))
    return await _staff_action(request, bodies.SESSION, lambda b: {
        "cmd": "session", "action": b.action, **({"minutes": b.minutes} if b.minutes is not None else {})})


async def staff_game(request: Any) -> Any:
    return await _staff_action(request, bodies.GAME, lambda b: {
        "cmd": "game", "action": b.action, **({"rules": b.rules} if b.rules else {}),
        **({"chips": b.chips} if b.chips is not None else {})})


# -- technicians: the log, the fault history, the support archive -----------------------------------------------------
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FOLLOW_S = 15.0             # a following request is answered when new lines come, or after this with none
MAX_LOG_TEXT = 100


async def tech_log(request: Any) -> Any:
    """``GET /api/tech/log?level=WARNING&text=E33&after=N&follow=1``: the service's recent log (at most 500 lines);
    ``after``: only newer lines; ``follow``: wait for one (following live: ask again with the answer's ``last``)."""
    session, refusal = _session_or_refusal(request, "read the table's log")
    if refusal:
        return refusal
    q = request.query_params
    level, text, after = q.get("level", "INFO").upper(), q.get("text", ""), q.get("after", "0")
    if level not in LOG_LEVELS or len(text) > MAX_LOG_TEXT or not (after.isascii() and after.isdigit()) \
            or len(after) > 18:
        return _json({"ok": False, "error": f"bad query: level one of {', '.join(LOG_LEVELS)}, text at most "
                                            f"{MAX_LOG_TEXT} characters, after a whole number"}, 400)
    ask = {"cmd": "log", "level": level, "text": text, "after": int(after)}
    if q.get("follow") == "1" and int(after) > 0:
        ask["wait_s"] = LOG_FOLLOW_S
    return _json(await web(request).control.ask(ask, timeout_s=LOG_FOLLOW_S + 10.0))


async def tech_faults(request: Any) -> Any:
    """``GET /api/tech/faults``: the fault history, newest first: code, tier, text, hint, when raised,
    acknowledged and cleared."""
    from firmware.faults import FaultCode

    session, refusal = _session_or_refusal(request, "read the fault history")
    if refusal:
        return refusal
    try:
        rows = await web(request).records.faults(limit=500)
    except Exception as exc:  # noqa: BLE001 - the database unreadable: said, not a 500
        return _json({"ok": False, "error": f"the fault history cannot be read: {exc}"}, 503)
    out = []
    for row in rows:
        code = FaultCode(row["code"])
        out.append({k: row[k] for k in ("id", "code", "tier", "at_s", "state", "source", "acknowledged_at_s",
                                        "cleared_at_s")} | {"text": code.text, "hint": code.hint})
    return _json({"ok": True, "faults": out})


async def tech_bundle(request: Any) -> Any:
    """``GET /api/tech/bundle``: the support archive (tar.gz): the table's parts (secrets redacted), the database's
    integrity check (read-only, in a thread)."""
    import asyncio

    from starlette.responses import Response

    from firmware.support_bundle import archive, integrity_check, parts_of

    session, refusal = _session_or_refusal(request, "download diagnostics")
    if refusal:
        return refusal
    state = web(request)
    answer = await state.control.ask({"cmd": "bundle"})
    if not answer.get("ok"):
        return _json(answer, 503)
    integrity = await asyncio.to_thread(integrity_check, state.records.path)
    data = await asyncio.to_thread(lambda: archive(parts_of(answer, integrity), state.now_s()))
    log.info("diagnostics downloaded by %s (%d bytes)", session.user, len(data))
    return Response(data, media_type="application/gzip", headers={
        "content-disposition": 'attachment; filename="mjtable-diagnostics.tar.gz"', "cache-control": "no-store"})


def routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/api/staff/players", staff_players, methods=["POST"]),
            Route("/api/staff/session", staff_session, methods=["GET", "POST"]),
            Route("/api/staff/game", staff_game, methods=["POST"]),
            Route("/api/tech/log", tech_log), Route("/api/tech/faults", tech_faults),
            Route("/api/tech/bundle", tech_bundle),
            Route("/events", events), Route("/api/status", status), Route("/api/ack", ack, methods=["POST"]),
            Route("/api/stop", stop, methods=["POST"]), Route("/api/hold", hold, methods=["POST"]),
            Route("/api/hold/{hold}/alive", hold_alive, methods=["POST"]),
            Route("/api/hold/{hold}/release", hold_release, methods=["POST"])]
