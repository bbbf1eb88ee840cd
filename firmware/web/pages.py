"""The web page's HTML pages: log in and out, the table, faults, the scoreboard, a hand, service, the card.

Every page needs a session (else it sends the browser to the login page);
with no user set on the table, every page is the one that says how to set a
password there (``mjtable web passwd``), and nobody can log in.  Pages are
drawn on the server from the latest status and the table database; the one
script (``static/mjtable.js``) keeps them live from the event stream and
asks for the history fragments (``/faults/history``, ``/scoreboard/rows``)
again when they change.  A login is throttled per address and per name and
verified off the event loop (Argon2 takes a core for a moment).
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from typing import Any

from firmware.controller.status import lamp_pattern
from firmware.faults import FaultCode, registry
from firmware.web.app import WebState, may_act
from firmware.web.diagram_svg import state_diagram
from firmware.web.records import RecordsUnavailable
from firmware.web.scoreboard import hand_view, items_heading, seat_wind

log = logging.getLogger(__name__)

MAX_FORM_FIELD = 512
_templates: Any = None


def templates() -> Any:
    global _templates
    if _templates is None:
        import jinja2
        from starlette.templating import Jinja2Templates

        env = jinja2.Environment(loader=jinja2.PackageLoader("firmware.web", "templates"), autoescape=True,
                                 trim_blocks=True, lstrip_blocks=True)
        env.globals.update(seat_wind=seat_wind, lamp_pattern=lambda code: lamp_pattern(FaultCode(code)))
        _templates = Jinja2Templates(env=env)
    return _templates


def web(request: Any) -> WebState:
    return request.app.state.web


def render(request: Any, name: str, status_code: int = 200, **context: Any) -> Any:
    state = web(request)
    session = context.pop("session", None)
    return templates().TemplateResponse(request, name, {
        "settings": state.settings, "session": session, "technician": may_act(session),
        "status": state.hub.view(), **context}, status_code=status_code)


def _gate(request: Any) -> tuple[Any, Any]:
    """(session, None) for a logged-in request, else (None, the answer: the password page or a redirect)."""
    from starlette.responses import RedirectResponse

    state = web(request)
    if not state.settings.users:
        return None, render(request, "no_password.html", status_code=503)
    session = state.session(request)
    if session is None:
        target = urllib.parse.quote(request.url.path)
        return None, RedirectResponse(f"/login?next={target}", status_code=303)
    return session, None


def _next_path(value: str | None) -> str:
    """Where to go after the login: a path of this page only (never another site)."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/"


async def login_page(request: Any) -> Any:
    if not web(request).settings.users:
        return render(request, "no_password.html", status_code=503)
    return render(request, "login.html", next=_next_path(request.query_params.get("next")), error=None)


async def login(request: Any) -> Any:
    from starlette.responses import RedirectResponse

    state = web(request)
    if not state.settings.users:
        return render(request, "no_password.html", status_code=503)
    form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=8)
    name = (form.get("user") or [""])[0].strip().lower()[:MAX_FORM_FIELD]
    password = (form.get("password") or [""])[0][:MAX_FORM_FIELD]
    target = _next_path((form.get("next") or ["/"])[0])
    address = request.client.host if request.client else "?"
    keys = [f"ip:{address}", f"user:{name}"]
    wait_s = state.throttle.wait_s(keys, state.now_s())
    if wait_s > 0:
        return _throttled(request, target, wait_s)
    if not state.throttle.begin(keys):
        return render(request, "login.html", status_code=429, next=target,
                      error="A login for this name or from this address is being checked: try again.")
    try:
        async with state.logins:
            wait_s = state.throttle.wait_s(keys, state.now_s())     # (again: the wait for a turn may be long)
            if wait_s > 0:
                return _throttled(request, target, wait_s)
            state.throttle.failed(keys, state.now_s())             # counted before it is checked
            user = await asyncio.to_thread(state.settings.users.verify, name, password)
    finally:
        state.throttle.end(keys)
    if user is None:
        log.warning("failed login for %r from %s", name, address)
        return render(request, "login.html", status_code=401, next=target, error="Wrong name or password.")
    state.throttle.succeeded(keys)
    session = state.sessions.create(user.name, user.role, state.now_s())
    log.info("%s (%s) logged in from %s", user.name, user.role.value, address)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(**state.cookie(session.token))
    return response


def _throttled(request: Any, target: str, wait_s: float) -> Any:
    return render(request, "login.html", status_code=429, next=target,
                  error=f"Too many failed logins: try again in {wait_s:.0f} s.")


async def logout(request: Any) -> Any:
    from starlette.responses import RedirectResponse

    from firmware.web.app import COOKIE

    web(request).sessions.end(request.cookies.get(COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


async def table_page(request: Any) -> Any:
    session, answer = _gate(request)
    return answer or render(request, "table.html", session=session, page="table")


async def _history(request: Any) -> tuple[list[dict[str, Any]], str | None]:
    try:
        rows = await web(request).records.faults()
    except RecordsUnavailable as exc:
        return [], str(exc)
    for row in rows:
        code = FaultCode(row["code"])
        row.update(text=code.text, hint=code.hint, lamps=lamp_pattern(code))
    return rows, None


async def faults_page(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    rows, problem = await _history(request)
    return render(request, "faults.html", session=session, page="faults", history=rows, problem=problem)


async def faults_history(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    rows, problem = await _history(request)
    return render(request, "_fault_rows.html", session=session, history=rows, problem=problem)


async def _hands(request: Any) -> tuple[list[dict[str, Any]], str | None]:
    state = web(request)
    game = ((state.hub.status or {}).get("chips") or {}).get("game")
    try:
        results = await state.records.results(game, limit=100)
    except RecordsUnavailable as exc:
        return [], str(exc)
    return [hand_view(r, deal=state.hub.deals.get(r["hand"])) for r in results], None


async def scoreboard_page(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    hands, problem = await _hands(request)
    rules = ((web(request).hub.status or {}).get("chips") or {}).get("rules")      # (the listed game's)
    return render(request, "scoreboard.html", session=session, page="scoreboard", hands=hands, problem=problem,
                  column=items_heading(hands, rules))


async def scoreboard_rows(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    hands, problem = await _hands(request)
    return render(request, "_hand_rows.html", session=session, hands=hands, problem=problem)


async def hand_page(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    number = request.path_params["number"]
    state = web(request)
    try:
        dealt, result = await state.records.hand(number)
    except RecordsUnavailable as exc:
        return render(request, "hand.html", status_code=503, session=session, page="scoreboard", hand=None,
                      number=number, problem=str(exc))
    if dealt is None and result is None:
        return render(request, "hand.html", status_code=404, session=session, page="scoreboard", hand=None,
                      number=number, problem=f"no hand {number} on this table")
    deal = state.hub.deals.get(number)
    view = hand_view(result or {"hand": number, "dealer": dealt["dealer"] if dealt else 0}, dealt, deal)
    settled = await state.records.settled(result) if result is not None else None
    return render(request, "hand.html", session=session, page="scoreboard", hand=view, number=number,
                  recorded=result is not None, settled=settled, problem=None)


async def service_page(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    mechanisms = [f"stacker{s}" for s in range(4)] + [f"wall_lift{s}" for s in range(4)] + \
        ["center_lift", "turntable", "dice"]
    return render(request, "service.html", session=session, page="service", mechanisms=mechanisms,
                  tests=["stackers", "lifts", "center", "disk", "dice"])


async def card_page(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    card = [{"code": f.code, "tier": f.tier.value, "text": f.text, "hint": f.hint,
             "lamps": lamp_pattern(FaultCode(f.code))} for f in registry()]
    return render(request, "card.html", session=session, page="card", card=card, diagram=state_diagram())


def routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/", table_page), Route("/login", login_page), Route("/login", login, methods=["POST"]),
            Route("/logout", logout, methods=["POST"]), Route("/faults", faults_page),
            Route("/faults/history", faults_history), Route("/scoreboard", scoreboard_page),
            Route("/scoreboard/rows", scoreboard_rows), Route("/hand/{number:int}", hand_page),
            Route("/service", service_page), Route("/card", card_page)]
