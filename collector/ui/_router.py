"""The web UI's routes under /ui/: pages and htmx fragments, each scoped to the viewer's project."""

from __future__ import annotations

import datetime as dt
import functools
import importlib.resources
import urllib.parse
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import jinja2
from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from passhat import __version__
from passhat.collector.store import RunParams, Store, StoreError, exploratory_reasons, week_of
from passhat.collector.ui import _charts
from passhat.collector.ui._attempts import chosen_trace
from passhat.collector.ui._compare import compare_router
from passhat.collector.ui._curve_chart import curve_chart, curve_data
from passhat.collector.ui._divergence import divergences
from passhat.collector.ui._errors import UiRoute
from passhat.collector.ui._figures import period_of, role_in_period, run_roles
from passhat.collector.ui._grades import SIGNATURE_CHOICES, ticket_grades
from passhat.collector.ui._lists import (
    SORT_LABELS,
    ListError,
    RunRowsCache,
    TicketQuery,
    recent_periods,
    report_written,
    run_report,
    run_tickets,
    ticket_list,
)
from passhat.collector.ui._origin import refuse_cross_site
from passhat.collector.ui._pages import (
    OUTCOME_LABELS,
    FigureCache,
    failing_diagnostics,
    notices,
    overview,
    run_progress,
    task_type_page,
)
from passhat.collector.ui._reliability import ViewCache, seed_overview, seed_task_type
from passhat.collector.ui._session import COOKIE_NAME, SESSION_SECONDS, Sessions, Viewer
from passhat.collector.ui._trace import changed_fields, intent_rows

PREFIX = "/ui"
_T = TypeVar("_T")
_STATIC = {
    "ui.css": "text/css; charset=utf-8",
    "ui.js": "text/javascript; charset=utf-8",
    "htmx.min.js": "text/javascript; charset=utf-8",
}
# Everything is served from this origin: no CDN, no inline script, no third-party request.
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "Vary": "HX-Request, Cookie, Authorization",  # a fragment and its page share a URL
}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("passhat.collector.ui", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = lambda v: "–" if v is None else f"{100 * v:.1f}%"
    env.filters["ci"] = lambda c: "" if not c else f"{100 * c[0]:.0f}–{100 * c[1]:.0f}%"
    env.filters["ms"] = lambda v: f"{v:,.0f} ms" if v >= 10 else f"{v:.1f} ms"
    # A trial's duration: under a second in milliseconds (an offline trial's 12 ms read "0.0 s"), else seconds.
    env.filters["seconds"] = lambda s: env.filters["ms"](1000 * s) if s < 1 else f"{s:,.1f} s"
    env.filters["ns_time"] = lambda ns: dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    env.filters["when"] = lambda t: "" if t is None else t.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    env.filters["q"] = lambda v: urllib.parse.quote(str(v), safe="")
    env.globals.update(charts=_charts, outcome_labels=OUTCOME_LABELS, version=__version__, prefix=PREFIX)
    env.globals.update(signature_choices=SIGNATURE_CHOICES, sort_labels=SORT_LABELS)
    env.globals.update(curve_chart=curve_chart, curve_data=curve_data)
    # The week a "replay a period" hint names: the last whole ISO week (the CLI takes no "last-week").
    env.globals["last_week"] = lambda: week_of(dt.datetime.now(dt.UTC) - dt.timedelta(days=7)).name
    return env


def _static_files() -> dict[str, bytes]:
    folder = importlib.resources.files("passhat.collector.ui").joinpath("static")
    return {name: folder.joinpath(name).read_bytes() for name in _STATIC}


def _store(request: Request) -> Store:
    store: Store | None = getattr(request.app.state, "passhat_store", None)
    if store is None:
        raise HTTPException(503, "the collector's store is not open yet: retry in a moment")
    return store


def _sessions(request: Request) -> Sessions:
    state = request.app.state
    sessions: Sessions | None = getattr(state, "passhat_ui_sessions", None)
    if sessions is None:
        sessions = state.passhat_ui_sessions = Sessions(_store(request))
    return sessions


def _kept(request: Request, name: str, make: Callable[[], _T]) -> _T:
    """The object the app keeps under `name` (made on first use): the UI's caches live as long as the app."""
    state = request.app.state
    kept: _T | None = getattr(state, name, None)
    if kept is None:
        kept = make()
        setattr(state, name, kept)
    return kept


def _cache(request: Request) -> FigureCache:
    return _kept(request, "passhat_ui_figures", FigureCache)


def _run_rows(request: Request) -> RunRowsCache:
    return _kept(request, "passhat_ui_run_rows", RunRowsCache)


def _views(request: Request) -> ViewCache:
    return _kept(request, "passhat_ui_views", ViewCache)


def _safe_next(target: str | None) -> str:
    """Only a path of this UI: never an open redirect to another site."""
    if target and target.startswith(PREFIX + "/") and not target.startswith("//") and "\\" not in target:
        return target
    return PREFIX + "/"


def _viewer(request: Request) -> Viewer:
    """The viewer of a Bearer key or a session cookie; a login redirect (or a 401 for tools) otherwise."""
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        viewer = _sessions(request).viewer_for_key(credentials)
        if viewer is None:
            raise HTTPException(401, "the API key is not valid (revoked or unknown)", {"WWW-Authenticate": "Bearer"})
        return viewer
    cookie = request.cookies.get(COOKIE_NAME)
    viewer = _sessions(request).viewer_for_cookie(cookie) if cookie else None
    if viewer is not None:
        return viewer
    # The path as sent (still percent-encoded): an id holding `#`, `?` or `/` comes back to the same page.
    raw_path = request.scope.get("raw_path")
    path = raw_path.decode("latin-1") if raw_path else urllib.parse.quote(request.url.path)
    here = path + (f"?{request.url.query}" if request.url.query else "")
    login = f"{PREFIX}/login?next={urllib.parse.quote(_safe_next(here), safe='')}"
    if request.headers.get("hx-request"):
        raise HTTPException(401, "sign in again", {"HX-Redirect": login})
    raise HTTPException(303, "sign in with a project API key", {"Location": login})


class _Renderer:
    def __init__(self) -> None:
        self.env = _environment()

    def page(self, request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(request=request, **context)
        return HTMLResponse(html, status, headers=_SECURITY_HEADERS)


@functools.cache
def error_renderer() -> _Renderer:
    """The renderer of error pages (`_errors`), made once."""
    return _Renderer()


def _query_store(call: Any) -> Any:
    try:
        return call()
    except StoreError as exc:
        raise HTTPException(503, f"the store is unavailable: {exc}", {"Retry-After": "5"}) from exc


def _fragment(request: Request) -> bool:
    """An htmx request for part of a page; a history restore (the back button) needs the whole page."""
    return bool(request.headers.get("hx-request")) and not request.headers.get("hx-history-restore-request")


def ui_router() -> APIRouter:
    """The web UI, to mount on the collector app (`create_app(routers=[ui_router()])`).

    It finds the store at `request.app.state.passhat_store` (set by the collector app's lifespan)."""
    router = APIRouter(prefix=PREFIX, include_in_schema=False, route_class=UiRoute)
    render = _Renderer()
    static = _static_files()
    router.include_router(compare_router())  # ahead of /runs/{run_id}

    @router.get("/static/{name}")
    def asset(name: str) -> Response:
        if name not in static:
            raise HTTPException(404, f"no asset {name!r}")
        return Response(
            static[name],
            media_type=_STATIC[name],
            headers={"Cache-Control": "max-age=3600", "X-Content-Type-Options": "nosniff"},
        )

    @router.get("/login", response_class=HTMLResponse)
    def login_form(request: Request, next: str | None = None, failed: bool = False) -> HTMLResponse:
        return render.page(
            request, "login.html", 401 if failed else 200, next=_safe_next(next), failed=failed, viewer=None
        )

    @router.post("/login")
    async def login(request: Request) -> Response:
        refuse_cross_site(request)
        form = urllib.parse.parse_qs((await request.body()).decode("utf-8", "replace"))
        key = (form.get("key") or [""])[0]
        target = _safe_next((form.get("next") or [""])[0])
        if not key.strip():  # the form requires one; a client that sends none is told so, not "unknown"
            return render.page(request, "login.html", 422, next=target, failed="empty", viewer=None)
        cookie = _sessions(request).cookie_for_key(key)
        if cookie is None:
            return render.page(request, "login.html", 401, next=target, failed=True, viewer=None)
        response = RedirectResponse(target, 303)
        response.set_cookie(
            COOKIE_NAME,
            cookie,
            max_age=SESSION_SECONDS,
            path=PREFIX,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    @router.post("/logout")
    def logout(request: Request) -> Response:
        refuse_cross_site(request)
        response = RedirectResponse(f"{PREFIX}/login", 303)
        response.delete_cookie(COOKIE_NAME, path=PREFIX, httponly=True, samesite="strict")
        return response

    @router.get("/", response_class=HTMLResponse)
    def overview_page(request: Request, daily: Annotated[str, Query(max_length=40)] = "") -> HTMLResponse:
        viewer = _viewer(request)
        data = _query_store(lambda: overview(_store(request), viewer.project, _cache(request)))
        seed = _query_store(
            lambda: seed_overview(_store(request), viewer.project, _cache(request), _views(request), daily)
        )
        return render.page(request, "overview.html", viewer=viewer, seed=seed, **data)

    # `:path`: ticket ids and task types may hold any character, `/` included (links encode it as %2F).
    @router.get("/task-types/{name:path}", response_class=HTMLResponse)
    def task_type(
        request: Request,
        name: str,
        period: Annotated[str | None, Query(max_length=100)] = None,
        outcome: Annotated[str, Query(max_length=20)] = "",
        signature: Annotated[str, Query(max_length=200)] = "",
    ) -> HTMLResponse:
        viewer = _viewer(request)
        data = _query_store(
            lambda: task_type_page(
                _store(request),
                viewer.project,
                _cache(request),
                name,
                period=period,
                outcome=outcome,
                signature=signature,
            )
        )
        store = _store(request)
        if not data["known"] and not _query_store(lambda: store.list_tickets(viewer.project, task_type=name, limit=1)):
            return render.page(request, "missing.html", 404, viewer=viewer, what=f"task type {name}")
        if _fragment(request):
            return render.page(request, "_sampled.html", viewer=viewer, **data)
        seed = _query_store(
            lambda: seed_task_type(_store(request), viewer.project, _cache(request), _views(request), name, period)
        )
        return render.page(request, "task_type.html", viewer=viewer, seed=seed, **data)

    @router.get("/tickets", response_class=HTMLResponse)
    def tickets(request: Request, offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0) -> HTMLResponse:
        viewer = _viewer(request)
        store = _store(request)
        try:
            query = TicketQuery.read(dict(request.query_params), offset)
        except ListError as exc:
            raise HTTPException(422, str(exc)) from None
        listed = _query_store(lambda: ticket_list(store, viewer.project, query))
        context = {**_query_store(lambda: ticket_grades(store, viewer.project, listed["rows"])), **listed}
        if _fragment(request):
            return render.page(request, "_ticket_rows.html", viewer=viewer, **context)
        task_types = sorted({r.task_type for r in _query_store(lambda: store.traffic(viewer.project, days=90))})
        return render.page(
            request, "tickets.html", viewer=viewer, task_types=task_types, periods=recent_periods(), **context
        )

    @router.get("/tickets/{ticket_id:path}", response_class=HTMLResponse)
    def ticket_page(
        request: Request, ticket_id: str, trace: Annotated[str | None, Query(max_length=32)] = None
    ) -> HTMLResponse:
        viewer = _viewer(request)
        store = _store(request)
        detail = _query_store(lambda: store.get_ticket(viewer.project, ticket_id))
        trials = _query_store(lambda: store.list_ticket_trials(viewer.project, ticket_id))
        if detail is None and not trials:
            return render.page(request, "missing.html", 404, viewer=viewer, what=f"ticket {ticket_id}")
        chosen = _query_store(lambda: chosen_trace(store, viewer.project, ticket_id, trace, detail, trials))
        view = chosen.view
        runs: dict[str, list[Any]] = {}
        for trial in trials:
            runs.setdefault(trial.run_id, []).append(trial)
        production = detail is not None and any(a.source == "production" for a in detail.attempts)
        verdict = _query_store(lambda: store.production_verdicts(viewer.project, [ticket_id])) if production else {}
        inferred = None  # the intent a replay inferred for a ticket that recorded none (source, evidence per field)
        for run_id in runs:
            run = _query_store(lambda run_id=run_id: store.get_replay_run(viewer.project, run_id))
            inferred = inferred or (RunParams.of(run).intents.get(ticket_id) if run is not None else None)
        intent_label, intent = intent_rows(view.attempt.intent if view else None, inferred)
        return render.page(
            request,
            "ticket.html",
            viewer=viewer,
            chosen=chosen,
            intent_label=intent_label,
            intent=intent,
            divergence={run_id: divergences(run_trials) for run_id, run_trials in runs.items()},
            production_verdict=verdict.get(ticket_id),
            verdict_diagnostics=failing_diagnostics,
            ticket_id=ticket_id,
            detail=detail,
            view=view,
            runs=runs,
            inferred=inferred,
            changed_fields=changed_fields,
        )

    @router.get("/runs", response_class=HTMLResponse)
    def runs_page(request: Request) -> HTMLResponse:
        viewer = _viewer(request)
        store = _store(request)
        listings = _query_store(lambda: run_roles(store, viewer.project))
        return render.page(request, "runs.html", viewer=viewer, listings=listings, period_of=period_of)

    @router.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(request: Request, run_id: str, offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0) -> HTMLResponse:
        viewer = _viewer(request)
        store = _store(request)
        run = _query_store(lambda: store.get_replay_run(viewer.project, run_id))
        if run is None:
            return render.page(request, "missing.html", 404, viewer=viewer, what=f"replay run {run_id}")
        tallies = _query_store(lambda: _cache(request).tallies(store, viewer.project, run))
        figures = _query_store(lambda: _cache(request).digest(store, viewer.project, run)).figures
        progress = run_progress(run, tallies)
        rows = _query_store(lambda: _run_rows(request).run(store, viewer.project, run, tallies))
        listed = run_tickets(rows, offset)
        return render.page(
            request,
            "run.html",
            viewer=viewer,
            run=run,
            figures=figures,
            done=progress.done,
            planned=progress.planned,
            unreplayable=progress.unreplayable,
            sampled=progress.sampled,
            listed=listed,
            report=_query_store(lambda: run_report(store, viewer.project, run)),
            written=report_written(run),
            harness=rows.harness,
            role=_query_store(lambda: role_in_period(store, viewer.project, run)),
            exploratory=exploratory_reasons(run),
            period=period_of(run),
        )

    @router.get("/runs/{run_id}/tickets/{ticket_id:path}", response_class=HTMLResponse)
    def attempts_page(request: Request, run_id: str, ticket_id: str) -> HTMLResponse:
        viewer = _viewer(request)
        store = _store(request)
        run = _query_store(lambda: store.get_replay_run(viewer.project, run_id))
        trials = [
            t for t in _query_store(lambda: store.list_ticket_trials(viewer.project, ticket_id)) if t.run_id == run_id
        ]
        if run is None or not trials:
            return render.page(request, "missing.html", 404, viewer=viewer, what=f"ticket {ticket_id} in run {run_id}")
        trials.sort(key=lambda t: t.attempt)
        return render.page(
            request,
            "attempts.html",
            viewer=viewer,
            run=run,
            ticket_id=ticket_id,
            trials=trials,
            diagnostics={t.attempt: failing_diagnostics(t.verdict) for t in trials},
            divergence=divergences(trials),
        )

    @router.get("/alerts", response_class=HTMLResponse)
    def alerts_page(request: Request) -> HTMLResponse:
        viewer = _viewer(request)
        events = _query_store(lambda: notices(_store(request), viewer.project))
        return render.page(request, "alerts.html", viewer=viewer, events=events)

    return router
