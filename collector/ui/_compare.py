"""Two runs side by side (`/ui/runs/compare?a=RUN&b=RUN`): per task type the paired difference on the tickets
both replayed (`replay.compare_tallies`, as `passhat runs compare`), the tickets that flipped between reliable and
not with links to their attempts, and each run's own figures with an unpaired difference (two periods, or two
agents on different tickets).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from passhat.collector.reliability import unpaired_difference
from passhat.collector.replay import FlippedTicket, RunComparison, compare_tallies
from passhat.collector.store import ReplayRun, RunRole, TicketTally
from passhat.collector.ui._figures import period_of, run_roles
from passhat.collector.ui._reliability import Headline, task_type_headline


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
    paired: RunComparison | None
    paired_error: str
    became_unreliable: list[FlippedTicket]
    became_reliable: list[FlippedTicket]
    side_by_side: list[SideBySide]
    same_k: bool


def side_by_side(
    a: ReplayRun, a_tallies: list[TicketTally], b: ReplayRun, b_tallies: list[TicketTally]
) -> list[SideBySide]:
    """Each task type of either run with both runs' headlines; pass^k differences only where the k agree."""
    names = sorted({t.task_type for t in a_tallies} | {t.task_type for t in b_tallies})
    rows = []
    for name in names:
        left, right = task_type_headline(a, a_tallies, name), task_type_headline(b, b_tallies, name)
        difference = None
        if left is not None and right is not None and a.k == b.k:
            difference = unpaired_difference(left.pass_hat_k, right.pass_hat_k)
        rows.append(SideBySide(name, left, right, difference))
    return rows


def compare(a: ReplayRun, a_tallies: list[TicketTally], b: ReplayRun, b_tallies: list[TicketTally]) -> Comparison:
    """Run `a` as the baseline, `b` as the candidate."""
    paired, error = None, ""
    try:
        paired = compare_tallies(a, a_tallies, b, b_tallies)
    except ValueError as exc:
        error = str(exc)
    flips = list(paired.flips) if paired is not None else []
    return Comparison(
        a,
        b,
        paired,
        error,
        [f for f in flips if f.became_unreliable],
        [f for f in flips if not f.became_unreliable],
        side_by_side(a, a_tallies, b, b_tallies),
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

    router = APIRouter()
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
            b = str(runs[a].params.get("compare_to") or "")
        missing = [r for r in (a, b) if r and r not in runs]
        if missing:
            what = " and ".join(f"replay run {r}" for r in missing)
            return render.page(request, "missing.html", 404, viewer=viewer, what=what)
        result = None
        if a and b:
            cache = ui._cache(request)
            _, a_tallies = ui._query_store(lambda: cache.run(store, viewer.project, runs[a]))
            _, b_tallies = ui._query_store(lambda: cache.run(store, viewer.project, runs[b]))
            result = compare(runs[a], a_tallies, runs[b], b_tallies)
        choices = [(run.run_id, run_label(run, role)) for run, role in listings]
        return render.page(
            request, "compare.html", viewer=viewer, a=a, b=b, choices=choices, result=result, period_of=period_of
        )

    return router
