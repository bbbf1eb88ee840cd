"""The web page's API: the live event stream, the status, and the actions a technician may take.

``GET /events`` is the Server-Sent Events stream of :class:`~firmware.web.hub.Hub`
(a snapshot, coalesced patches, heartbeats); ``GET /api/status`` the same
snapshot once.  Actions (POST, JSON, Origin checked by the guards, a
technician's session): ``/api/ack`` acknowledges a latched fault,
``/api/hold`` starts a held jog or service test (``{"kind": "jog",
"name": "stacker0"}``, ``{"kind": "test", "name": "lifts"}``),
``/api/hold/ID/alive`` keeps it going, ``/api/hold/ID/release`` lets go,
``/api/stop`` stops whatever test runs.  Staff may look but not act: an
action from a staff session is refused with 403 and the reason.  The
controller decides the rest (service mode, the lid, a running test) and its
answer is passed back as it is.
"""

from __future__ import annotations

import logging
from typing import Any

from firmware.diagnostics.service_limits import GROUP_TESTS
from firmware.web.app import COOKIE, WebState, may_act
from firmware.web.hub import MAX_STREAMS_PER_SESSION

log = logging.getLogger(__name__)

MECHANISMS = frozenset([f"stacker{s}" for s in range(4)] + [f"wall_lift{s}" for s in range(4)]
                       + ["center_lift", "turntable", "dice"])


def web(request: Any) -> WebState:
    return request.app.state.web


def _json(answer: dict[str, Any], status_code: int = 200) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(answer, status_code=status_code)


def _session_or_refusal(request: Any, act: str | None) -> tuple[Any, Any]:
    """The request's session, or the refusal: 503 with no user set, 401 without a session, 403 when the
    session's role may not ``act``."""
    state = web(request)
    if not state.settings.users:
        return None, _json({"ok": False, "error": "no password is set on this table (mjtable web passwd)"}, 503)
    session = state.session(request)
    if session is None:
        return None, _json({"ok": False, "error": "log in first"}, 401)
    if act is not None and not may_act(session):
        return None, _json({"ok": False, "error": f"your role ({session.role.value}) may not {act}"}, 403)
    return session, None


async def _body(request: Any) -> dict[str, Any] | None:
    try:
        body = await request.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


async def events(request: Any) -> Any:
    from starlette.responses import StreamingResponse

    session, refusal = _session_or_refusal(request, None)
    if refusal:
        return refusal
    state = web(request)
    token = request.cookies.get(COOKIE)
    stream = state.hub.open(token)
    if stream is None:
        return _json({"ok": False, "error": "too many pages are open on this table, or for this login (at most "
                                            f"{MAX_STREAMS_PER_SESSION}): close one"}, 503)

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
    session, refusal = _session_or_refusal(request, "acknowledge faults")
    if refusal:
        return refusal
    answer = await web(request).control.ask({"cmd": "ack"})
    log.info("acknowledge by %s: %s", session.user, answer.get("error") or "done")
    return _json(answer)


async def stop(request: Any) -> Any:
    session, refusal = _session_or_refusal(request, "stop service tests")
    if refusal:
        return refusal
    return _json(await web(request).control.ask({"cmd": "stop"}))


async def hold(request: Any) -> Any:
    session, refusal = _session_or_refusal(request, "run service tests or jogs")
    if refusal:
        return refusal
    body = await _body(request)
    kind, name = (body or {}).get("kind"), (body or {}).get("name")
    if kind == "jog" and name in MECHANISMS:
        action: dict[str, Any] = {"cmd": "jog", "mechanism": name, "hold": True}
        if name == "center_lift" and body.get("to") in ("up", "down"):
            action["to"] = body["to"]
    elif kind == "test" and name in GROUP_TESTS:
        action = {"cmd": "test", "name": name}
    else:
        return _json({"ok": False, "error": f"a hold is a jog of {', '.join(sorted(MECHANISMS))} or a test "
                                            f"of {', '.join(GROUP_TESTS)}"}, 400)
    state = web(request)
    return _json(await state.holds.start(request.cookies.get(COOKIE), session.user, action, state.now_s()))


async def hold_alive(request: Any) -> Any:
    session, refusal = _session_or_refusal(request, "run service tests or jogs")
    if refusal:
        return refusal
    state = web(request)
    answer = state.holds.keepalive(request.path_params["hold"], request.cookies.get(COOKIE), state.now_s())
    return _json(answer, 200 if answer.get("ok") else 404)


async def hold_release(request: Any) -> Any:
    session, refusal = _session_or_refusal(request, "run service tests or jogs")
    if refusal:
        return refusal
    answer = web(request).holds.release(request.path_params["hold"], request.cookies.get(COOKIE))
    return _json(answer, 200 if answer.get("ok") else 404)


def routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/events", events), Route("/api/status", status), Route("/api/ack", ack, methods=["POST"]),
            Route("/api/stop", stop, methods=["POST"]), Route("/api/hold", hold, methods=["POST"]),
            Route("/api/hold/{hold}/alive", hold_alive, methods=["POST"]),
            Route("/api/hold/{hold}/release", hold_release, methods=["POST"])]
