"""Two runs side by side (`/ui/runs/compare?a=RUN&b=RUN`): per task type the paired difference on the tickets
both replayed (`reliability.pair_tickets`, as `passhat runs compare`), the tickets that flipped between reliable and
not with links to their attempts, and each run's own figures with an unpaired difference (two periods, or two
agents on different tickets).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from passhat.collector.reliability import (
    FlippedTicket,
    TicketPairing,
    pair_tickets,
    pairing_notes,
    unpaired_difference,
)
from passhat.collector.store import ReplayRun, RunParams, RunRole, TicketTally
from passhat.collector.ui._digest import Headline
from passhat.collector.ui._errors import UiRoute
from passhat.collector.ui._figures import period_of, run_roles
from passhat.collector.ui._reliability import RunViews


@dataclass(frozen=True)
class SideBySide:
    """One task type in both runs over each run's own tickets, and the unpaired difference of pass^k."""

    task_type: str
    a: Headline | None
    b: Headline | None
    difference: tuple[float, tuple[float, float]] | None  # pass^k, candidate minus baseline


@dataclass(frozen=True)
class Comparison:
    a: ReplayRun
    b: ReplayRun
    paired: TicketPairing | None
    paired_error: str
    notes: list[str]
    became_unreliable: list[FlippedTicket]
    became_reliable: list[FlippedTicket]
    side_by_side: list[SideBySide]
    same_k: bool


def side_by_side(a: RunViews, b: RunViews) -> list[SideBySide]:
    """Each task type of either run with both runs' headlines; pass^k differences only where the k agree."""
    names = sorted(set(a.names) | set(b.names))
    rows = []
    for name in names:
        left, right = a.task_types.get(name), b.task_types.get(name)
        difference = None
        if left is not None and right is not None and a.run.k == b.run.k:
            difference = unpaired_difference(left.pass_hat_k, right.pass_hat_k)
        rows.append(SideBySide(name, left, right, difference))
    return rows


def compare(
    a_views: RunViews, a_tallies: list[TicketTally], b_views: RunViews, b_tallies: list[TicketTally]
) -> Comparison:
    """Run `a` as the baseline, `b` as the candidate."""
    a, b = a_views.run, b_views.run
    paired, error = None, ""
    try:
        paired = pair_tickets(a_tallies, b_tallies, min(a.k, b.k))
    except ValueError:
        error = (
            f"runs {a.run_id} and {b.run_id} share no ticket with a usable trial (replay the candidate with "
            f"--compare-to {a.run_id} to use the same tickets)"
        )
    flips = list(paired.flips) if paired is not None else []
    return Comparison(
        a,
        b,
        paired,
        error,
        pairing_notes(paired) if paired is not None else [],
        [f for f in flips if f.became_unreliable],
        [f for f in flips if not f.became_unreliable],
        side_by_side(a_views, b_views),
        a.k == b.k,
    )


def run_label(run: ReplayRun, role: RunRole) -> str:
    params = run.params
    agent = f"{params.get('agent', '') or 'agent'} {params.get('agent_version', '')}".strip()
    return f"{run.run_id} · {period_of(run)} · {agent} · {role}"


def compare_router() -> APIRouter:
    """The comparison page; included by `ui_router` ahead of `/runs/{run_id}`."""
    # The UI's shared helpers live in `_router`, which includes this router: imported once it is loaded.
    from passhat.collector.ui import _router as ui

    router = APIRouter(route_class=UiRoute)
    render = ui._Renderer()

    @router.get("/runs/compare", response_class=HTMLResponse)
    def compare_page(
        request: Request,
        a: Annotated[str, Query(max_length=200)] = "",
        b: Annotated[str, Query(max_length=200)] = "",
    ) -> HTMLResponse:
        viewer = ui._viewer(request)
        store = ui._store(request)
        listings = ui._query_store(lambda: run_roles(store, viewer.project))
        runs = {run.run_id: run for run, _ in listings}
        a, b = a.strip(), b.strip()
        if a and not b and a in runs:
            b = RunParams.of(runs[a]).compare_to or ""
        missing = [r for r in (a, b) if r and r not in runs]
        if missing:
            what = " and ".join(f"replay run {r}" for r in missing)
            return render.page(request, "missing.html", 404, viewer=viewer, what=what)
        result = None
        if a and b:
            cache = ui._cache(request)
            a_tallies = ui._query_store(lambda: cache.tallies(store, viewer.project, runs[a]))
            b_tallies = ui._query_store(lambda: cache.tallies(store, viewer.project, runs[b]))
            a_digest = ui._query_store(lambda: cache.digest(store, viewer.project, runs[a]))
            b_digest = ui._query_store(lambda: cache.digest(store, viewer.project, runs[b]))
            views = ui._views(request)
            a_views = views.get(viewer.project, runs[a], a_digest)
            b_views = views.get(viewer.project, runs[b], b_digest)
            result = compare(a_views, a_tallies, b_views, b_tallies)
        choices = [(run.run_id, run_label(run, role)) for run, role in listings]
        return render.page(
            request, "compare.html", viewer=viewer, a=a, b=b, choices=choices, result=result, period_of=period_of
        )

    return router
