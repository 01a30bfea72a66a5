"""The page handlers: each reads through `views` (in a worker thread) and renders a template.

The only changes a person can make here are the two the page asks them to confirm, closing a
record and running a routine, each a POST carrying the form's CSRF proof (`auth`). Anything a
visitor names that is not there gets a page that says so (404), never a traceback.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from prixfixe.errors import PrixfixeError
from prixfixe.store.faults import MAX_SQLITE_INT
from prixfixe.web import views
from prixfixe.web.auth import Session, Sessions, cookie_header, safe_next
from prixfixe.web.live import Changes

if TYPE_CHECKING:
    from prixfixe.app import App

log = logging.getLogger(__name__)

T = TypeVar("T")
NAV = (
    ("/", "Today"),
    ("/reports", "Reports"),
    ("/records", "Records"),
    ("/routines", "Routines"),
    ("/capabilities", "Capabilities"),
    ("/plugins", "Plugins"),
    ("/budget", "Budget"),
    ("/activity", "Activity"),
)
#: The most a form field may hold (a close reason, a filter).
MAX_FIELD = 2000
#: The most a sort parameter may hold (a field name, `-` for descending).
MAX_SORT = 200
_DIGITS = re.compile(r"[1-9][0-9]{0,18}")


class PageError(Exception):
    """A page that answers with an error status and a message a person reads."""

    def __init__(self, status: int, heading: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.heading = heading
        self.message = message


def not_found(message: str) -> PageError:
    return PageError(404, "Not found", message)


def parse_id(text: str, what: str) -> int:
    """A path's positive integer (a generation, a record id); 404 for anything else."""
    if not _DIGITS.fullmatch(text) or int(text) > MAX_SQLITE_INT:
        raise not_found(f"{what} {text!r} is not a number this server could have given.")
    return int(text)


class Pages:
    """The handlers, bound to one app, its sessions, its live changes and the templates."""

    def __init__(
        self, app: App, sessions: Sessions, changes: Changes, templates: jinja2.Environment
    ) -> None:
        self.app = app
        self.sessions = sessions
        self.changes = changes
        self.templates = templates
        #: Computing the /budget page's figures and plots ahead of a visit (`warm_budget`).
        self.warming: threading.Thread | None = None

    def warm_budget(self) -> None:
        """Count the budget's tokens and draw its plots in the background, once, when a person
        first opens a page: the first count loads the tokenizer and the first plot imports
        matplotlib and draws (seconds, measured 3-4 s on a loaded laptop), which a first visit
        to /budget would otherwise wait for. Not at start-up: a server nobody browses spends
        nothing on it. The thread is not a daemon: one killed at interpreter exit inside
        matplotlib's C++ aborts the process, so an exit waits for it instead."""
        if self.warming is not None:
            return
        self.warming = threading.Thread(target=_warm, args=(self.app,), name="prixfixe-budget-warm")
        self.warming.start()

    # -- plumbing -----------------------------------------------------------------------------

    async def read(self, func: Callable[..., T], *args: Any) -> T:
        """A view, in a worker thread (the store blocks); its `NotFound` is a 404 page."""
        try:
            return await anyio.to_thread.run_sync(func, self.app, *args)
        except views.NotFound as exc:
            raise not_found(str(exc)) from None

    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> Response:
        self.warm_budget()  # a person is browsing: /budget may be next
        session: Session = request.state.session
        csrf = self.sessions.csrf(session.value) if session.value is not None else ""
        html = self.templates.get_template(name).render(
            nav=NAV,
            path=request.url.path,
            csrf=csrf,
            logged_in=self.sessions.token is not None and session.kind == "user",
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def error(self, request: Request, problem: PageError) -> Response:
        context = {"heading": problem.heading, "message": problem.message}
        return self.render(request, "error.html", problem.status, **context)

    async def form(self, request: Request) -> dict[str, str]:
        """The posted form's text fields; 403 unless it carries this session's CSRF proof."""
        form = await request.form(max_files=0, max_fields=20)
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        if not self.sessions.csrf_ok(request.state.session, fields.get("csrf")):
            log.warning("refused a page form without a valid CSRF proof: %s", request.url.path)
            raise PageError(
                403,
                "Forbidden",
                "This form's security check failed: it expired or was sent from elsewhere. "
                "Nothing was changed; open the page again and resend it.",
            )
        return fields

    # -- reading ------------------------------------------------------------------------------

    async def today(self, request: Request) -> Response:
        attention = await self.read(views.attention)
        report = await self.read(views.latest_report)
        kinds = await self.read(views.open_records)
        generation = await self.read(views.generation)
        return self.render(
            request,
            "today.html",
            attention=attention,
            report=report,
            kinds=kinds,
            generation=generation,
        )

    async def attention_fragment(self, request: Request) -> Response:
        attention = await self.read(views.attention)
        return self.render(request, "_attention.html", attention=attention)

    async def report_fragment(self, request: Request) -> Response:
        report = await self.read(views.latest_report)
        response = self.render(request, "_report.html", report=report)
        response.headers["X-Generation"] = str(report.generation if report else 0)
        return response

    async def records_fragment(self, request: Request) -> Response:
        kinds, _ = await self.records_shown(request)
        generation = await self.read(views.generation)
        response = self.render(request, "_records.html", kinds=kinds)
        response.headers["X-Generation"] = str(generation)
        return response

    async def reports(self, request: Request) -> Response:
        rows = await self.read(views.kept_reports)
        return self.render(request, "reports.html", rows=rows)

    async def report(self, request: Request) -> Response:
        generation = parse_id(request.path_params["generation"], "Generation")
        report = await self.read(views.report_at, generation)
        return self.render(request, "report.html", report=report)

    async def records_shown(self, request: Request) -> tuple[list[views.KindRecords], str | None]:
        """The open records the query asks for (`kind`, `cursor`, `sort`, `q`), and the kind."""
        params = request.query_params
        kind = params.get("kind") or None
        cursor = params.get("cursor") or None
        sort = (params.get("sort") or "").strip()[:MAX_SORT] or None
        query = (params.get("q") or "")[:MAX_FIELD]
        if cursor is not None and kind is None:
            raise PageError(400, "Bad request", "A cursor pages one kind: give kind= too.")
        try:
            kinds = await self.read(views.open_records, kind, cursor, views.PAGE_SIZE, sort, query)
        except PrixfixeError as exc:  # a cursor from elsewhere, a field the kind lacks
            raise PageError(400, "Bad request", exc.for_people) from None
        return kinds, kind

    async def records(self, request: Request) -> Response:
        kinds, kind = await self.records_shown(request)
        generation = await self.read(views.generation)
        paged = kind is not None
        return self.render(
            request,
            "records.html",
            kinds=kinds,
            generation=generation,
            paged=paged,
            kind=kind or "",
            sort=(request.query_params.get("sort") or "").strip()[:MAX_SORT],
            query=(request.query_params.get("q") or "").strip()[:MAX_FIELD],
        )

    async def capabilities(self, request: Request) -> Response:
        index = await self.read(views.capabilities)
        return self.render(request, "capabilities.html", index=index)

    async def plugins(self, request: Request) -> Response:
        plugins = await self.read(views.plugins)
        servers = await self.read(views.servers)
        return self.render(request, "plugins.html", plugins=plugins, servers=servers)

    async def budget(self, request: Request) -> Response:
        from prixfixe.web.budget import token_budget

        budget = await self.read(token_budget)
        svgs = await anyio.to_thread.run_sync(_plots, budget)
        return self.render(request, "budget.html", budget=budget, svgs=svgs)

    async def activity(self, request: Request) -> Response:
        params = request.query_params
        span = (params.get("since") or "1d").strip()[:MAX_SORT]
        only = params.get("only") or "all"
        if only not in views.ACTIVITY_FILTERS:
            shown = ", ".join(views.ACTIVITY_FILTERS)
            raise PageError(400, "Bad request", f"only= is one of {shown}, not {only!r}.")
        try:
            log = await self.read(views.activity, span, only)
        except ValueError as exc:  # a span that is not one
            raise PageError(400, "Bad request", f"since= {exc}") from None
        return self.render(request, "activity.html", log=log, filters=views.ACTIVITY_FILTERS)

    async def events(self, request: Request) -> Response:
        return self.changes.response(request)

    # -- changing, when a person confirms -----------------------------------------------------

    async def close_record(self, request: Request) -> Response:
        kind = request.path_params["kind"]
        record_id = parse_id(request.path_params["id"], "Record id")
        if request.method == "POST":
            fields = await self.form(request)
            reason = fields.get("reason", "").strip()[:MAX_FIELD] or None
            await self.read(views.open_record, kind, record_id)
            try:
                await anyio.to_thread.run_sync(
                    lambda: self.app.store.close_record(kind, record_id, reason)
                )
            except PrixfixeError as exc:
                raise PageError(400, "Not closed", exc.for_people) from None
            return RedirectResponse("/records", status_code=303)
        record = await self.read(views.open_record, kind, record_id)
        return self.render(request, "close.html", record=record)

    async def routines(self, request: Request) -> Response:
        rows = await self.read(views.routines)
        return self.render(request, "routines.html", routines=rows)

    async def run_routine(self, request: Request) -> Response:
        name = request.path_params["name"]
        routine = self.app.routines.routines.get(name)
        if routine is None:
            known = ", ".join(self.app.routines.routines)
            raise not_found(f"No routine {name!r} (routines: {known}).")
        if request.method == "POST":
            await self.form(request)
            app = self.app
            try:
                await app.routines.run(
                    routine,
                    lambda: app.store,
                    resources=app.read_resource_text,
                    servers=app.call_server_tool,
                    programs=app.run_program,
                )
            except PrixfixeError as exc:
                raise PageError(400, "The routine did not run", exc.for_people) from None
            return RedirectResponse("/", status_code=303)
        steps = [f"{s.name} ({s.type.name})" for s in routine.steps]
        return self.render(request, "run.html", routine=routine, steps=steps)

    # -- logging in ---------------------------------------------------------------------------

    async def login(self, request: Request) -> Response:
        target = safe_next(request.query_params.get("next"))
        if self.sessions.token is None:
            return RedirectResponse(target, status_code=303)
        if request.method == "GET":
            return self.render(request, "login.html", next=target)
        # No form proof: there is no session before a login (see `auth`); the token is it.
        form = await request.form(max_files=0, max_fields=20)
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        target = safe_next(fields.get("next"))
        if not self.sessions.token.matches(fields.get("token", "")):
            client = request.client
            peer = f"{client.host}:{client.port}" if client else "a client"
            log.warning("refused a page login with a wrong token, from %s (401)", peer)
            context = {"next": target, "failed": True}
            return self.render(request, "login.html", 401, **context)
        response = RedirectResponse(target, status_code=303)
        value = self.sessions.issue("user")
        secure = request.url.scheme == "https"
        response.headers.append("Set-Cookie", cookie_header(value, secure=secure))
        return response

    async def logout(self, request: Request) -> Response:
        await self.form(request)
        session: Session = request.state.session
        self.sessions.revoke(session.value)
        target = "/login" if self.sessions.token is not None else "/"
        response = RedirectResponse(target, status_code=303)
        secure = request.url.scheme == "https"
        response.headers.append("Set-Cookie", cookie_header("", secure=secure, max_age=0))
        return response


def _warm(app: App) -> None:
    from prixfixe.web.budget import token_budget

    try:
        _plots(token_budget(app))
    except Exception:  # a warm-up only saves time; the page itself reports a fault
        log.warning("computing the token budget ahead of a visit failed", exc_info=True)


def _plots(budget: Any) -> dict[str, str] | None:
    """The budget's SVG plots, or None when matplotlib is missing."""
    from prixfixe.web.plots import budget_svgs

    return budget_svgs(budget)
