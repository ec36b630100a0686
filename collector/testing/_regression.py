"""A CI gate: fail a test when a candidate agent's pass^k is credibly below the baseline's on the same tickets.

The store and the comparison are imported when the gate is called, so loading this package as a pytest plugin
stays cheap and works where the collector's extras (SQLAlchemy, numpy) are not installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from passhat.collector.replay import RunComparison


def assert_no_regression(
    store: str,
    project: str,
    baseline_run: str,
    candidate_run: str,
    *,
    task_type: str | None = None,
    k: int | None = None,
    confidence: float = 0.95,
) -> RunComparison:
    """Fail (``AssertionError``) when the candidate run's pass^k on a task type (or on ``task_type`` only) is
    credibly below the baseline run's: the whole paired interval at ``confidence`` lies below zero.

    Both runs must have replayed the same tickets (``passhat replay --period P --agent ... --compare-to
    BASELINE``). ``store`` is the store URL. Returns the comparison (its ``to_dict()`` is what
    ``passhat runs compare --json`` prints) when nothing regressed.
    """
    try:
        from passhat.collector.replay import compare_runs
        from passhat.collector.store import open_store
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise RuntimeError(
            f"assert_no_regression needs the collector's extras: pip install 'passhat[collector]' ({exc})"
        ) from None
    opened = open_store(store)
    try:
        comparison = compare_runs(opened, project, baseline_run, candidate_run, k=k, level=confidence)
    finally:
        opened.close()
    rows = [row for row in comparison.task_types if task_type is None or row.task_type == task_type]
    if task_type is not None and not rows:
        raise AssertionError(f"the runs {baseline_run} and {candidate_run} share no ticket of task type {task_type!r}")
    worse = [row for row in rows if row.pass_hat_k.credibly_lower]
    if worse:
        lines = []
        for row in worse:
            low, high = row.pass_hat_k.interval or (0.0, 0.0)  # credibly lower: the interval exists
            lines.append(
                f"{row.task_type}: pass^{comparison.k} {100 * row.pass_hat_k.baseline:.1f}% -> "
                f"{100 * row.pass_hat_k.candidate:.1f}% ({100 * row.pass_hat_k.difference:+.1f} pp, "
                f"{100 * confidence:g}% paired interval [{100 * low:+.1f}, {100 * high:+.1f}] pp "
                f"over {row.pass_hat_k.tickets} tickets)"
            )
        raise AssertionError(
            f"candidate run {candidate_run} is credibly worse than {baseline_run}:\n" + "\n".join(lines)
        )
    return comparison
