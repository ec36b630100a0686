"""`passhat demo`: the statistics on the seed's published figures, written as a small HTML and JSON summary.

This is the offline demo until the end-to-end loop (collector, sandbox replay, report) is wired in: it fits the
mixture to the paper's three points, draws pass@k and pass^k for k = 1..50, and runs the calculator.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from passhat.collector._console import console, fail, pct
from passhat.collector._demo_page import render_demo_page
from passhat.collector.reliability import AggregatePoint, calculate, fit_mixture_to_points, mixture_curve

SEED_POINTS = ("pass@1=0.654", "pass@20=0.911", "pass^20=0.253")
SEED_TICKETS_PER_DAY = 2000.0
SEED_NOTICED_SHARE = 0.3
SEED_K = 20


def build_demo_summary() -> dict[str, object]:
    """The demo's JSON summary: fitted mixture, curves for k = 1..50, calculator at the seed's numbers."""
    points = [AggregatePoint.parse(p) for p in SEED_POINTS]
    fit = fit_mixture_to_points(points, components=3)
    curve = mixture_curve(fit.mixture, 50).to_dict()
    return {
        "source": "published aggregate figures (the seed write-up), not a passhat measurement",
        "points": {p.label: p.value for p in points},
        "mixture": {
            "components": [c.to_dict() for c in fit.mixture.components],
            "max_abs_error": fit.max_abs_error,
            "anchors": list(fit.anchors),
        },
        "curve": {key: curve[key] for key in ("k", "pass_at_k", "pass_hat_k")},
        "calculator": {
            "homogeneous": calculate(
                success_rate=0.654, k=SEED_K, tickets_per_day=SEED_TICKETS_PER_DAY, noticed_share=SEED_NOTICED_SHARE
            ).to_dict(),
            "mixture": calculate(
                mixture=fit.mixture, k=SEED_K, tickets_per_day=SEED_TICKETS_PER_DAY, noticed_share=SEED_NOTICED_SHARE
            ).to_dict(),
        },
    }


def demo(
    out: Annotated[Path, typer.Option(help="Folder for the demo's HTML and JSON.")] = Path("passhat-demo"),
) -> None:
    """Run passhat's offline demo and write its summary into --out."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create the output folder {out}: {exc.strerror}")
    summary = build_demo_summary()
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "summary.html").write_text(render_demo_page(summary), encoding="utf-8")
    mixture = summary["mixture"]
    assert isinstance(mixture, dict)
    table = Table(title="The seed's three points, fitted by a three-component mixture")
    table.add_column("share of task types", justify="right")
    table.add_column("per-attempt success", justify="right")
    for comp in mixture["components"]:
        table.add_row(pct(comp["weight"]), pct(comp["p"]))
    console.print(table)
    calc = summary["calculator"]
    assert isinstance(calc, dict)
    mixed = calc["mixture"]
    console.print(
        f"At 2,000 tickets a day: pass@1 {pct(mixed['pass_at_1'])}, pass@20 {pct(mixed['pass_at_k'])}, "
        f"pass^20 {pct(mixed['pass_hat_k'])}; {mixed['failed_tickets_per_day']:,.0f} failed tickets a day, "
        f"{mixed['noticed_failures_per_day']:,.0f} noticed."
    )
    console.print(f"Wrote {out / 'summary.html'} and {out / 'summary.json'}")
