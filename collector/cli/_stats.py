"""`passhat fit` and `passhat calc`: the reliability statistics from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from passhat.collector.cli._console import ci_text, console, emit_json, fail, pct
from passhat.collector.cli._options import JsonOption

if TYPE_CHECKING:  # numpy and scipy load when a command runs, not for `passhat --help`
    from passhat.collector.reliability import Mixture


def fit(
    point: Annotated[
        list[str] | None,
        typer.Option("--point", help="A published figure, e.g. pass@1=0.654 or pass^20=0.253."),
    ] = None,
    trials: Annotated[
        Path | None,
        typer.Option(help="CSV of task_type,ticket_id,passed (a row per trial) or task_type,ticket_id,n,c."),
    ] = None,
    components: Annotated[
        int | None, typer.Option(help="Number of mixture components (default: 3 for points, BIC for trials).")
    ] = None,
    top_p: Annotated[
        float,
        typer.Option(help="Anchor for the most reliable component when points under-determine the fit."),
    ] = 0.99,
    k: Annotated[int | None, typer.Option(help="k for pass@k / pass^k (default: the smallest trial count).")] = None,
    max_k: Annotated[int, typer.Option(help="Curve length for --point fits.")] = 50,
    as_json: JsonOption = False,
) -> None:
    """Fit the binomial mixture to published points (--point) or to your own trials (--trials)."""
    from passhat.collector.reliability import AggregatePoint, fit_mixture_to_points, mixture_curve

    if (point is None) == (trials is None):
        fail("give either --point (one or more) or --trials FILE.csv")
    if trials is not None:
        _fit_trials(trials, components=components, k=k, as_json=as_json)
        return
    assert point is not None
    try:
        points = [AggregatePoint.parse(p) for p in point]
        result = fit_mixture_to_points(points, components=components or 3, top_p=top_p)
    except ValueError as exc:
        fail(str(exc))
    if max_k < 1:
        fail("--max-k must be at least 1")
    curve = mixture_curve(result.mixture, max_k)
    payload = {
        "components": [c.to_dict() for c in result.mixture.components],
        "max_abs_error": result.max_abs_error,
        "anchors": list(result.anchors),
        "curve": {
            "k": curve.to_dict()["k"],
            "pass_at_k": curve.to_dict()["pass_at_k"],
            "pass_hat_k": curve.to_dict()["pass_hat_k"],
        },
    }
    if as_json:
        emit_json(payload)
        return
    table = Table(title="Binomial mixture fitted to the points")
    table.add_column("share of task types", justify="right")
    table.add_column("per-attempt success p", justify="right")
    for comp in result.mixture.components:
        table.add_row(pct(comp.weight), pct(comp.p))
    console.print(table)
    for p in points:
        console.print(f"  {p.label}: given {pct(p.value)}, fitted {pct(p.predicted(result.mixture))}")
    console.print(f"  largest error: {result.max_abs_error:.2e}")
    for anchor in result.anchors:
        console.print(f"  assumed (the points cannot pin this free parameter): {anchor}")
    if result.anchors:
        console.print(
            "  other anchors fit the same points exactly and extrapolate differently beyond the largest k given "
            "(see docs/concepts.md, 'Three points, five parameters')"
        )


def _fit_trials(path: Path, *, components: int | None, k: int | None, as_json: bool) -> None:
    import numpy as np

    from passhat.collector.cli._trials_file import TrialsFileError, read_trials_csv
    from passhat.collector.reliability import fit_mixture, summarize_task_type

    try:
        groups = read_trials_csv(path)
    except TrialsFileError as exc:
        fail(str(exc))
    all_n = np.concatenate([g.arrays()[0] for g in groups.values()])
    all_c = np.concatenate([g.arrays()[1] for g in groups.values()])
    k_used = int(all_n.min()) if k is None else k
    try:
        summaries = [(name, summarize_task_type(*g.arrays(), k_used)) for name, g in sorted(groups.items())]
        mixture = fit_mixture(all_n, all_c, components=components)
    except ValueError as exc:
        fail(str(exc))
    pooled = summarize_task_type(all_n, all_c, k_used)
    overall = pooled.to_dict()
    payload = {
        "k": k_used,
        "task_types": [{"task_type": name, **s.to_dict()} for name, s in summaries],
        "overall": overall,
        "mixture": {"components": [c.to_dict() for c in mixture.components]},
    }
    if as_json:
        emit_json(payload)
        return
    table = Table(title=f"Reliability per task type (k = {k_used})")
    table.add_column("task type", overflow="fold")  # a name is read whole, never cut short
    for column in ("tickets", "trials", "pass@1", f"pass@{k_used}", f"pass^{k_used}", "95% CI"):
        table.add_column(column, justify="right")
    for name, s in summaries:
        table.add_row(
            name,
            str(s.tickets),
            str(s.trials_per_ticket),
            pct(s.pass_at_1),
            pct(s.pass_at_k),
            pct(s.pass_hat_k),
            ci_text(s.pass_hat_k_ci),
        )
    table.add_section()
    table.add_row(
        "all tickets",
        str(pooled.tickets),
        "",
        pct(pooled.pass_at_1),
        pct(pooled.pass_at_k),
        pct(pooled.pass_hat_k),
        ci_text(pooled.pass_hat_k_ci),
    )
    console.print(table)
    widest = max(summaries, key=lambda item: item[1].pass_hat_k_half_width)
    console.print(f"Widest interval, {widest[0]}: {widest[1].sample_size}.")
    shares = ", ".join(f"{pct(c.weight)} at p = {c.p:.2f}" for c in mixture.components)
    console.print(f"Mixture over tickets: {shares}")


def _parse_mixture(text: str) -> Mixture:
    from passhat.collector.reliability import Mixture

    try:
        pairs = [item.split(":") for item in text.split(",") if item.strip()]
        weights = [float(w) for w, _ in pairs]
        ps = [float(p) for _, p in pairs]
    except ValueError:
        fail(f"cannot read --mixture {text!r}: write it as WEIGHT:P pairs, e.g. 0.31:0.99,0.60:0.58,0.09:0")
    total = sum(weights)
    if weights and all(w >= 0 for w in weights) and abs(total - 1) > 0.02:  # rounded shares add up to 0.98-1.02
        fail(
            f"--mixture: the weights add up to {total:g}, not 1: each is the share of tickets at its p, "
            "e.g. 0.31:0.99,0.60:0.58,0.09:0"
        )
    try:
        return Mixture.of(weights, ps)
    except ValueError as exc:
        fail(f"--mixture: {exc}")


def calc(
    tickets_per_day: Annotated[float, typer.Option(help="Tickets your agent handles a day.")],
    k: Annotated[int, typer.Option(help="Attempts: how many times the same kind of ticket comes back.")] = 20,
    success_rate: Annotated[float | None, typer.Option(help="Per-attempt success rate you measure today.")] = None,
    mixture: Annotated[
        str | None, typer.Option(help="A fitted mixture as WEIGHT:P pairs, e.g. 0.31:0.99,0.60:0.58,0.09:0.")
    ] = None,
    noticed: Annotated[float, typer.Option(help="Share of failed tickets a customer would notice.")] = 1.0,
    as_json: JsonOption = False,
) -> None:
    """What a per-attempt success rate means for your traffic: failed tickets a day, pass@k and pass^k."""
    from passhat.collector.reliability import calculate

    model = _parse_mixture(mixture) if mixture is not None else None
    if model is None and success_rate is None:
        fail("give --success-rate (e.g. 0.654) or --mixture")
    if model is not None and success_rate is not None:
        fail("give --success-rate or --mixture, not both")
    try:
        result = calculate(
            success_rate=success_rate,
            mixture=model,
            tickets_per_day=tickets_per_day,
            noticed_share=noticed,
            k=k,
        )
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        emit_json(result.to_dict())
        return
    table = Table(title=f"Your traffic at k = {k}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("tickets per day", f"{result.tickets_per_day:,.0f}")
    table.add_row("pass@1 (one attempt)", pct(result.pass_at_1))
    table.add_row(f"pass@{k} (any of {k} attempts)", pct(result.pass_at_k))
    table.add_row(f"pass^{k} (all {k} attempts)", pct(result.pass_hat_k))
    table.add_row("failed tickets per day", f"{result.failed_tickets_per_day:,.1f}")
    table.add_row("failures a customer notices per day", f"{result.noticed_failures_per_day:,.1f}")
    table.add_row("share of task types handled every time", pct(result.share_of_task_types_handled_every_time))
    console.print(table)
    if result.model == "homogeneous":
        console.print(
            "Assumes every task type succeeds at the same rate. Real agents mix easy and hard task types: "
            "pass --mixture from `passhat fit` for a realistic pass^k."
        )
