"""The web page's HTML pages: the player's view, log in and out, the table, faults, the scoreboard, a hand, service,
the card, and the language switch.

The player's view (``/``, :mod:`firmware.web.player`) is for anyone at the
table, read only, no login: it polls its two fragments (``/view/live``,
``/view/hands``); so is ``/verify``, where a player checks a hand's revealed
walls against the commitment they kept (:mod:`firmware.web.fairplay`; its
own scripts, ``static/verify*.js``, hash the reveal and replay the deal and the
draws in the browser, from ``/verify/data``: the hand's seal and record, no verdict).
Every other page needs a session (else it sends the browser to the login
page); with no user set on the table, every page is the one that says how to
set a password there (``mjtable web passwd``), and nobody can log in.  Pages are
drawn on the server from the latest status and the table database; the one
script (``static/mjtable.js``) keeps them live from the event stream and
asks for the history fragments (``/faults/history``, ``/scoreboard/rows``)
and the warnings (``/faults/warnings``) again when they change.  A login is throttled by address, by name from
that address and by name from everywhere (:mod:`firmware.web.sessions`) and
verified off the event loop (Argon2 takes a core for a moment).  A hand's
number in a path is a whole number of at most ``MAX_HAND_DIGITS`` digits
(anything else: no such hand, 404).
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from typing import Any

from firmware.controller.lamps import lamp_pattern
from firmware.faults import FaultCode, registry
from firmware.web import i18n, player
from firmware.web.state import WebState, may_act
from firmware.web.bodies import MECHANISM_BUTTONS, TEST_BUTTONS
from firmware.web.diagram_svg import state_diagram
from firmware.web.guards import address_key
from firmware.web.records import RecordsUnavailable
from firmware.web.scoreboard import hand_view, items_unit, reason_words, seat_wind

log = logging.getLogger(__name__)

MAX_FORM_FIELD = 512
MAX_HAND_DIGITS = 9                # a hand's number in a path (a table plays far fewer hands)
MAX_FORM_FIELDS = 8                # user, password, next (a form with more is refused, 400)
LANG_COOKIE_S = 365 * 24 * 3600    # the language chosen on this phone is kept a year
_templates: dict[str, Any] = {}


def templates(locale: str = i18n.DEFAULT) -> Any:
    """The templates in ``locale``'s language (one Jinja environment per language, its catalogue installed)."""
    if locale not in _templates:
        import jinja2
        from starlette.templating import Jinja2Templates

        env = jinja2.Environment(loader=jinja2.PackageLoader("firmware.web", "templates"), autoescape=True,
                                 trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.i18n"])
        words = i18n.words(locale)
        env.install_gettext_translations(words.tr, newstyle=True)     # type: ignore[attr-defined]
        env.globals.update(seat_wind=seat_wind, lamp_pattern=lambda code: lamp_pattern(FaultCode(code)), w=words,
                           side_number=i18n.side_number, reason_words=lambda line: reason_words(line, locale),
                           fan_name=lambda item: (item.get("en") if locale == "en" else None) or item["name"],
                           unit_title=lambda unit, total: unit_title(words, unit, total))
        _templates[locale] = Jinja2Templates(env=env)
    return _templates[locale]


def unit_title(words: i18n.Words, unit: Any, total: int) -> str:
    """The heading of a win's items with their total, in the page's language: Fans (26), Points (S = 48) ..."""
    if unit.key == "point":
        return words.gettext("Points (S = %(total)s)") % {"total": total}
    return f"{words.unit(unit.key)} ({unit.value(total)})"


def _g(request: Any, message: str) -> str:
    """``message`` in the request's language."""
    return i18n.words(i18n.choose(request)).gettext(message)


def web(request: Any) -> WebState:
    return request.app.state.web


def render(request: Any, name: str, status_code: int = 200, **context: Any) -> Any:
    state = web(request)
    session = context.pop("session", None)
    locale = i18n.choose(request)
    words = i18n.words(locale)
    status = state.hub.view()
    names = [name or words.position(side) for side, name in enumerate(player.names(status))]
    return templates(locale).TemplateResponse(request, name, {
        "settings": state.settings, "session": session, "technician": may_act(session),
        "status": status, "names": names, "locale": locale, "html_lang": i18n.HTML_LANG[locale],
        "languages": i18n.LANGUAGE_NAMES, "theme": i18n.theme(request), "here": request.url.path,
        "script_words": words.script_json(),
        **context}, status_code=status_code)


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
    from starlette.requests import ClientDisconnect
    from starlette.responses import PlainTextResponse

    try:
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=MAX_FORM_FIELDS)
    except ClientDisconnect:
        return PlainTextResponse("The login form ended early.\n", status_code=400)     # (nobody reads it)
    except ValueError:
        return render(request, "login.html", status_code=400, next="/",
                      error=_g(request, "A login form has at most %(n)s fields.") % {"n": MAX_FORM_FIELDS})
    name = (form.get("user") or [""])[0].strip().lower()[:MAX_FORM_FIELD]
    password = (form.get("password") or [""])[0][:MAX_FORM_FIELD]
    target = _next_path((form.get("next") or ["/"])[0])
    address = address_key(request.client.host if request.client else None)
    wait_s = state.throttle.wait_s(address, name, state.now_s())
    if wait_s > 0:
        return _throttled(request, target, wait_s)
    if not state.throttle.begin(address, name):
        return render(request, "login.html", status_code=429, next=target,
                      error=_g(request, "A login for this name or from this address is being checked: try again."))
    try:
        async with state.logins:
            wait_s = state.throttle.wait_s(address, name, state.now_s())     # (again: the wait for a turn may be long)
            if wait_s > 0:
                return _throttled(request, target, wait_s)
            state.throttle.failed(address, name, state.now_s())             # counted before it is checked
            user = await asyncio.to_thread(state.settings.users.verify, name, password)
    finally:
        state.throttle.end(address, name)
    if user is None:
        log.warning("failed login for %r from %s", name, address)
        return render(request, "login.html", status_code=401, next=target, error=_g(request, "Wrong name or password."))
    state.throttle.succeeded(address, name)
    session = state.sessions.create(user.name, user.role, state.now_s())
    log.info("%s (%s) logged in from %s", user.name, user.role.value, address)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(**state.cookie(session.token))
    return response


def _throttled(request: Any, target: str, wait_s: float) -> Any:
    return render(request, "login.html", status_code=429, next=target,
                  error=_g(request, "Too many failed logins: try again in %(s)s s.") % {"s": f"{wait_s:.0f}"})


async def logout(request: Any) -> Any:
    from starlette.responses import RedirectResponse

    from firmware.web.state import COOKIE

    web(request).sessions.end(request.cookies.get(COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


async def table_page(request: Any) -> Any:
    session, answer = _gate(request)
    return answer or render(request, "table.html", session=session, page="table")


def _visitor(request: Any) -> tuple[Any, Any]:
    """(the session or None, None) for the player's view, which needs no login; (None, the password page) while
    no user is set on the table (until then every page only says how to set one)."""
    state = web(request)
    if not state.settings.users:
        return None, render(request, "no_password.html", status_code=503)
    return state.session(request), None


async def player_page(request: Any) -> Any:
    session, answer = _visitor(request)
    if answer:
        return answer
    words = i18n.words(i18n.choose(request))
    status = web(request).hub.view()
    hands_html = await _player_hands(request, status, words)
    return render(request, "player.html", session=session, page="player", view=player.live(status, words),
                  hands_html=hands_html)


async def player_live(request: Any) -> Any:
    session, answer = _visitor(request)
    if answer:
        return answer
    words = i18n.words(i18n.choose(request))
    return render(request, "_player_live.html", session=session, view=player.live(web(request).hub.view(), words))


async def player_hands(request: Any) -> Any:
    from starlette.responses import HTMLResponse

    _, answer = _visitor(request)
    if answer:
        return answer
    words = i18n.words(i18n.choose(request))
    return HTMLResponse(await _player_hands(request, web(request).hub.view(), words))


async def _player_hands(request: Any, status: dict[str, Any], words: i18n.Words) -> str:
    """This game's hands as the player's view lists them (rendered once per change of the game and language)."""
    state = web(request)
    key = (player.hands_key(status), words.locale)
    cached = state.player_hands.get(key)
    if cached is not None:
        return cached
    hands, problem = await _hands(request)
    lines = [player.hand_line(h, status, words) for h in hands]          # (the latest first, as read)
    html = templates(words.locale).get_template("_player_hands.html").render(
        lines=lines[:player.LATEST_HANDS], earlier=lines[player.LATEST_HANDS:], problem=problem,
        reason_words=lambda line: reason_words(line, words.locale))
    if problem is None:
        state.player_hands.put(key, html)
    return html


async def language(request: Any) -> Any:
    """The page's language switch (a form: ``to`` the language, ``next`` the page to go back to): a cookie
    remembers it on this phone."""
    from starlette.requests import ClientDisconnect
    from starlette.responses import PlainTextResponse, RedirectResponse

    try:
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"), max_num_fields=MAX_FORM_FIELDS)
    except (ClientDisconnect, ValueError):
        return PlainTextResponse("A language form has a language and a page.\n", status_code=400)
    chosen = (form.get("to") or [""])[0]
    if chosen not in i18n.LOCALES:
        return PlainTextResponse(f"No such language: the page speaks {', '.join(i18n.LOCALES)}.\n", status_code=400)
    response = RedirectResponse(_next_path((form.get("next") or ["/"])[0]), status_code=303)
    response.set_cookie(i18n.LANG_COOKIE, chosen, max_age=LANG_COOKIE_S, path="/", samesite="lax",
                        secure=web(request).settings.tls)
    return response


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


async def faults_warnings(request: Any) -> Any:
    """The faults page's warnings (shuffle bias, parts wearing) as the table says them now: the page fetches them
    again whenever its event stream brings a change of the ``warnings`` component."""
    session, answer = _gate(request)
    if answer:
        return answer
    return render(request, "_warnings.html", session=session)


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
    words = i18n.words(i18n.choose(request))
    return render(request, "scoreboard.html", session=session, page="scoreboard", hands=hands, problem=problem,
                  column=words.unit(items_unit(hands, rules)), rules_title=player.ruleset_title(rules))


async def scoreboard_rows(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    hands, problem = await _hands(request)
    return render(request, "_hand_rows.html", session=session, hands=hands, problem=problem)


def hand_number(text: str) -> int | None:
    """A hand's number from a path (``/hand/12``); None for anything but at most ``MAX_HAND_DIGITS`` digits (a
    number past SQLite's integers, or past Python's digits for ``int``, would otherwise fail the page)."""
    if not (0 < len(text) <= MAX_HAND_DIGITS and text.isascii() and text.isdigit()):
        return None
    return int(text)


async def hand_page(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    number = hand_number(request.path_params["number"])
    state = web(request)
    if number is None:
        shown = request.path_params["number"][:MAX_HAND_DIGITS + 1]
        return render(request, "hand.html", status_code=404, session=session, page="scoreboard", hand=None,
                      number=shown, problem=_g(request, "No hand %(n)s on this table (a hand is a number of at most "
                                                           "%(digits)s digits).") % {"n": shown,
                                                                                     "digits": MAX_HAND_DIGITS})
    try:
        dealt, result = await state.records.hand(number)
    except RecordsUnavailable as exc:
        return render(request, "hand.html", status_code=503, session=session, page="scoreboard", hand=None,
                      number=number, problem=_g(request, "The table's records cannot be read now.") + f" ({exc})")
    if dealt is None and result is None:
        return render(request, "hand.html", status_code=404, session=session, page="scoreboard", hand=None,
                      number=number, problem=_g(request, "No hand %(n)s on this table.") % {"n": number})
    deal = state.hub.deals.get(number)
    view = hand_view(result or {"hand": number, "dealer": dealt["dealer"] if dealt else 0}, dealt, deal)
    settled = await state.records.settled(result) if result is not None else None
    seal = await _seal(request, number)
    return render(request, "hand.html", session=session, page="scoreboard", hand=view, number=number,
                  recorded=result is not None, settled=settled, seal=seal, problem=None)


async def _seal(request: Any, number: int) -> dict[str, Any] | None:
    try:
        return await web(request).records.seal(number)
    except RecordsUnavailable as exc:
        log.warning("hand %d: its committed walls cannot be read: %s", number, exc)
        return None


async def verify_page(request: Any) -> Any:
    """``/verify[?hand=N][&c=COMMITMENT]``: check a reveal against a commitment in this browser (anyone at the
    table, no login): the hand's commitment (or the one kept, ``c``) and, once it is over, its reveal filled in."""
    session, answer = _visitor(request)
    if answer:
        return answer
    number = hand_number(request.query_params.get("hand", ""))
    seal = await _seal(request, number) if number is not None else None
    kept = request.query_params.get("c", "")[:64].lower()
    kept = kept if len(kept) == 64 and all(c in "0123456789abcdef" for c in kept) else None
    return render(request, "verify.html", session=session, page="verify", number=number, seal=seal, kept=kept)


async def verify_data(request: Any) -> Any:
    """``/verify/data?hand=N``: what the verify page's script checks by itself (:func:`~firmware.web.fairplay.
    seal_data`), as JSON; 404 for no such sealed hand, 503 when the records cannot be read."""
    from starlette.responses import JSONResponse

    _session, answer = _visitor(request)
    if answer:
        return answer
    number = hand_number(request.query_params.get("hand", ""))
    try:
        data = await web(request).records.seal_data(number) if number is not None else None
    except RecordsUnavailable as exc:
        return JSONResponse({"ok": False, "error": str(exc)}, status_code=503)
    if data is None:
        return JSONResponse({"ok": False, "error": "no committed walls for this hand"}, status_code=404)
    return JSONResponse({"ok": True, "hand": data}, headers={"cache-control": "no-store"})


async def service_page(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    return render(request, "service.html", session=session, page="service", mechanisms=list(MECHANISM_BUTTONS),
                  tests=list(TEST_BUTTONS))


async def card_page(request: Any) -> Any:
    session, answer = _gate(request)
    if answer:
        return answer
    card = [{"code": f.code, "tier": f.tier.value, "text": f.text, "hint": f.hint,
             "lamps": lamp_pattern(FaultCode(f.code))} for f in registry()]
    words = i18n.words(i18n.choose(request))
    diagram = state_diagram(words.state, words.trigger, words.gettext("%s: from any active state") % "{trigger}",
                            words.gettext("the controller's states"))
    return render(request, "card.html", session=session, page="card", card=card, diagram=diagram)


def routes() -> list[Any]:
    from starlette.routing import Route

    return [Route("/", player_page), Route("/view/live", player_live), Route("/view/hands", player_hands),
            Route("/lang", language, methods=["POST"]), Route("/table", table_page),
            Route("/login", login_page), Route("/login", login, methods=["POST"]),
            Route("/logout", logout, methods=["POST"]), Route("/faults", faults_page),
            Route("/faults/history", faults_history),
            Route("/faults/warnings", faults_warnings), Route("/scoreboard", scoreboard_page),
            Route("/scoreboard/rows", scoreboard_rows), Route("/hand/{number}", hand_page),
            Route("/service", service_page), Route("/card", card_page), Route("/verify", verify_page),
            Route("/verify/data", verify_data)]
