"""The seed's table for one or more suite runs: per domain and agent pass@1, pass@k and pass^k, and how the
agents' ranking holds across domains.

Every figure comes from the store's per-task tallies (`Store.ticket_tallies`) through the reliability
estimators, over the tasks every run settled (so agents are compared on the same tasks):

- per domain and agent, and overall: pass@1, pass@k, pass^k with continuity-corrected Wilson intervals over
  tasks (`summarize_task_type`), with the task and trial counts;
- each domain's rank order of the agents (by pass@1), and the agreement of the rank orders across domains:
  Kendall's W (domains as raters, agents as the ranked items; 1 = the same order everywhere), with a bootstrap
  interval over tasks (tasks resampled within each domain, the same draw for every agent);
- each agent's swing across domains (its best domain's pass@1 minus its worst's), with an interval from the same
  bootstrap;
- paired differences between agents on the same tasks (`paired_difference`), per domain and overall;
- pass@k and pass^k for every k up to the runs' k, with intervals: what the HTML page's k slider shows.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from passhat.collector.reliability import (
    FloatArray,
    paired_difference,
    pass_at_k_array,
    pass_hat_k_array,
    settled,
    summarize_task_type,
    wilson_bounds,
)
from passhat.collector.store import ReplayRun, RunParams, Store, TicketTally
from passhat.collector.suite._run import suite_of, suite_runs, with_label
from passhat.collector.suite._tasks import SuiteError

SEED_POINTS = {"pass_at_1": 0.654, "pass_at_20": 0.911, "pass_hat_20": 0.253}
"""The seed's published figures for its strongest model over 507 tasks: drawn as a reference, not data."""

OVERALL = "overall"


@dataclass(frozen=True)
class _Counts:
    """One agent's settled tasks of one domain: trials, passes and (pass@1) first-attempt counts, task order."""

    n: np.ndarray
    c: np.ndarray
    first_n: np.ndarray
    first_c: np.ndarray

    def at_1(self) -> FloatArray:
        values: FloatArray = self.first_c / self.first_n
        return values


@dataclass
class SuiteTable:
    """The table of one or more suite runs (`to_dict` is `passhat suite table --json`)."""

    version: str
    k: int
    level: float
    agents: list[dict[str, Any]]
    domains: list[str]
    cells: dict[str, dict[str, dict[str, Any]]]
    ranks: dict[str, list[str]]
    agreement: dict[str, Any]
    swing: dict[str, dict[str, Any]]
    paired: list[dict[str, Any]]
    curves: dict[str, dict[str, dict[str, list[Any]]]]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version, "k": self.k, "level": self.level, "agents": self.agents,
            "domains": self.domains, "cells": self.cells, "ranks": self.ranks, "agreement": self.agreement,
            "swing": self.swing, "paired": self.paired, "curves": self.curves, "reference": SEED_POINTS,
            "notes": self.notes,
        }  # fmt: skip


def _tallies(store: Store, project: str, run: ReplayRun) -> dict[str, TicketTally]:
    return {t.ticket_id: t for t in store.ticket_tallies(project, run.run_id)}


def suite_table(
    store: Store,
    project: str,
    run_ids: Sequence[str],
    *,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> SuiteTable:
    """The seed's table for these suite runs (see the module docstring); `SuiteError` when they cannot share one."""
    if not run_ids:
        raise SuiteError("name at least one suite run (`passhat runs list` shows the runs)")
    if len(set(run_ids)) != len(run_ids):
        raise SuiteError("a run is named twice: name each suite run once")
    runs = suite_runs(store, project, run_ids)
    identities = [(suite_of(run) or {}).get("identity") or {} for run in runs]
    hashes = {str(i.get("content_hash")) for i in identities}
    if len(hashes) > 1:
        versions = ", ".join(f"{run.run_id}: {i.get('version')}" for run, i in zip(runs, identities, strict=True))
        raise SuiteError(f"the runs ran different suite versions ({versions}): compare runs of one version")
    k = min(run.k for run in runs)
    notes = [] if len({run.k for run in runs}) == 1 else [f"the runs have different k: figures use k = {k}"]
    designs = [RunParams.of(run).design for run in runs]
    tallies = [_tallies(store, project, run) for run in runs]
    for run, counted in zip(runs, tallies, strict=True):
        _measured_something(run, counted)
    common = set.intersection(*(set(_settled_ids(t, k)) for t in tallies))
    if not common:
        raise SuiteError("the runs share no task with settled trials: run them on the same domains and task types")
    by_domain: dict[str, list[str]] = {}
    for task_id in sorted(common):
        by_domain.setdefault(str(tallies[0][task_id].domain), []).append(task_id)
    dropped = max(len(_settled_ids(t, k)) for t in tallies) - len(common)
    if dropped:
        notes.append(f"{dropped} task(s) not settled in every run are left out: figures use the {len(common)} shared")
    ids = [run.run_id for run in runs]
    counts = {
        domain: [_counts(t, tasks, design.min_trials if design.name == "curtailed" else None)
                 for t, design in zip(tallies, designs, strict=True)]
        for domain, tasks in by_domain.items()
    }  # fmt: skip
    everything = [_concat([counts[d][i] for d in by_domain]) for i in range(len(runs))]
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    curves: dict[str, dict[str, dict[str, list[Any]]]] = {}
    for domain, per_agent in [*counts.items(), (OVERALL, everything)]:
        cells[domain] = {rid: _cell(c, k, level) for rid, c in zip(ids, per_agent, strict=True)}
        curves[domain] = {rid: _curve(c, k, level) for rid, c in zip(ids, per_agent, strict=True)}
    domains = list(by_domain)
    ranks = {d: _ranked(ids, cells[d]) for d in [*domains, OVERALL]}
    replicates = _bootstrap(counts, domains, len(ids), resamples, seed)
    observed = np.array([[cells[d][rid]["pass_at_1"] for rid in ids] for d in domains])  # (domains, agents)
    agreement = _agreement(observed, replicates, level, len(common))
    swing = _swings(ids, domains, observed, replicates, level)
    paired = [
        _pair(a, b, domain, per_agent, k, level)
        for domain, per_agent in [*counts.items(), (OVERALL, everything)]
        for (a, b) in itertools.combinations(range(len(ids)), 2)
    ]
    for item in paired:
        item["baseline"], item["candidate"] = ids[item.pop("a")], ids[item.pop("b")]
    agents = [
        {
            "run_id": run.run_id, "label": with_label(run), "agent": RunParams.of(run).agent,
            "simulated": RunParams.of(run).simulated, "k": run.k, "design": RunParams.of(run).design.to_dict(),
            "status": run.status, "tasks": len(common), "trials": int(everything[i].n.sum()),
        }
        for i, run in enumerate(runs)
    ]  # fmt: skip
    version = str(identities[0].get("version"))
    return SuiteTable(version, k, level, agents, domains, cells, ranks, agreement, swing, paired, curves, notes)


def _ranked(ids: list[str], cells: dict[str, dict[str, Any]]) -> list[str]:
    """Run ids by pass@1, best first (ties in the order the runs were named)."""
    return sorted(ids, key=lambda rid: (-float(cells[rid]["pass_at_1"]), ids.index(rid)))


def _measured_something(run: ReplayRun, tallies: dict[str, TicketTally]) -> None:
    """`SuiteError` naming the run when none of its trials speaks about the agent (all lost to the harness, or
    none run yet): its tasks are in no table, and the error says why instead of "share no task"."""
    if any(t.trials for t in tallies.values()):
        return
    lost = sum(t.harness_errors for t in tallies.values())
    if lost:
        raise SuiteError(
            f"all {lost} trials of run {run.run_id} were lost to the harness, none measured the agent: "
            f"`passhat runs show {run.run_id}` names the cause; fix it and run the same `passhat suite run` again"
        )
    raise SuiteError(
        f"run {run.run_id} holds no trial yet ({run.status}): run the same `passhat suite run` to resume it"
    )


def _settled_ids(tallies: dict[str, TicketTally], k: int) -> list[str]:
    items = [t for t in tallies.values() if t.trials > 0]
    if not items:
        return []
    keep = settled([t.trials for t in items], [t.passes for t in items], k)
    return [t.ticket_id for t, ok in zip(items, keep, strict=True) if ok]


def _counts(tallies: dict[str, TicketTally], tasks: list[str], first: int | None) -> _Counts:
    rows = [tallies[t] for t in tasks]
    n = np.array([t.trials for t in rows], dtype=np.int64)
    c = np.array([t.passes for t in rows], dtype=np.int64)
    if first is None:
        return _Counts(n, c, n, c)
    first_n = np.array([min(t.trials, first) for t in rows], dtype=np.int64)
    first_c = np.array([t.passes_in_first(first) for t in rows], dtype=np.int64)
    return _Counts(n, c, first_n, first_c)


def _concat(parts: list[_Counts]) -> _Counts:
    return _Counts(*(np.concatenate([getattr(p, name) for p in parts]) for name in ("n", "c", "first_n", "first_c")))


def _cell(counts: _Counts, k: int, level: float) -> dict[str, Any]:
    summary = summarize_task_type(counts.n, counts.c, k, level=level, first_n=counts.first_n, first_c=counts.first_c)
    return {
        "tasks": summary.tickets, "trials": summary.trials, "pass_at_1": summary.pass_at_1,
        "pass_at_1_ci": list(summary.pass_at_1_ci), "pass_at_k": summary.pass_at_k,
        "pass_at_k_ci": list(summary.pass_at_k_ci), "pass_hat_k": summary.pass_hat_k,
        "pass_hat_k_ci": list(summary.pass_hat_k_ci),
    }  # fmt: skip


def _curve(counts: _Counts, k: int, level: float) -> dict[str, list[Any]]:
    """pass@j and pass^j for j = 1..k, each with its Wilson interval over tasks."""
    size = float(counts.n.size)
    at = np.array([pass_at_k_array(counts.n, counts.c, j, curtailed=True).sum() for j in range(1, k + 1)])
    hat = np.array([pass_hat_k_array(counts.n, counts.c, j, curtailed=True).sum() for j in range(1, k + 1)])
    at_low, at_high = wilson_bounds(at, np.full(k, size), level)
    hat_low, hat_high = wilson_bounds(hat, np.full(k, size), level)
    return {
        "pass_at_k": [round(float(v) / size, 5) for v in at],
        "pass_at_k_ci": [[round(float(a), 5), round(float(b), 5)] for a, b in zip(at_low, at_high, strict=True)],
        "pass_hat_k": [round(float(v) / size, 5) for v in hat],
        "pass_hat_k_ci": [[round(float(a), 5), round(float(b), 5)] for a, b in zip(hat_low, hat_high, strict=True)],
    }


def _bootstrap(
    counts: dict[str, list[_Counts]], domains: list[str], agents: int, resamples: int, seed: int
) -> FloatArray:
    """(resamples, domains, agents): each domain's pass@1 per agent with its tasks resampled (one draw for all)."""
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, len(domains), agents))
    for index, domain in enumerate(domains):
        values = np.stack([c.at_1() for c in counts[domain]], axis=1)  # (tasks, agents)
        size = values.shape[0]
        draws = rng.multinomial(size, np.full(size, 1.0 / size), size=resamples).astype(np.float64)
        out[:, index, :] = draws @ values / size
    return out


def _ranks(values: FloatArray) -> FloatArray:
    """Average ranks (1 = best) along the last axis."""
    higher = (values[..., None, :] > values[..., :, None]).sum(axis=-1)
    ties = (values[..., None, :] == values[..., :, None]).sum(axis=-1) - 1
    ranks: FloatArray = 1.0 + higher + 0.5 * ties
    return ranks


def kendall_w(values: FloatArray) -> FloatArray:
    """Kendall's W (with the tie correction) of (..., raters, items): 1 when every rater ranks the items alike."""
    ranks = _ranks(values)
    raters, items = values.shape[-2], values.shape[-1]
    totals = ranks.sum(axis=-2)
    spread = ((totals - totals.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    tie_groups = (values[..., None, :] == values[..., :, None]).sum(axis=-1)  # each item's tie-group size
    correction = (tie_groups.astype(np.float64) ** 2 - 1.0).sum(axis=(-2, -1))  # sum over groups of t^3 - t
    denominator = raters**2 * (items**3 - items) - raters * correction
    with np.errstate(invalid="ignore", divide="ignore"):
        result: FloatArray = np.where(denominator > 0, 12.0 * spread / denominator, np.nan)
    return result


def _agreement(observed: FloatArray, replicates: FloatArray, level: float, tasks: int) -> dict[str, Any]:
    raters, items = observed.shape
    base = {"statistic": "kendall_w", "metric": "pass_at_1", "domains": raters, "agents": items, "tasks": tasks}
    if items < 2 or raters < 2:
        return {**base, "value": None, "interval": None, "why": "needs at least two agents and two domains"}
    value = float(kendall_w(observed))
    drawn = kendall_w(replicates)
    drawn = drawn[np.isfinite(drawn)]
    interval = None if drawn.size == 0 else _percentiles(drawn, level)
    return {**base, "value": None if np.isnan(value) else value, "interval": interval, "level": level}


def _swings(
    ids: list[str], domains: list[str], observed: FloatArray, replicates: FloatArray, level: float
) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    if len(domains) < 2:
        why = "needs at least two domains"
        return {
            rid: {"swing": None, "interval": None, "level": level, "why": why, "metric": "pass_at_1"} for rid in ids
        }
    for index, rid in enumerate(ids):
        column = observed[:, index]
        drawn = replicates[:, :, index].max(axis=1) - replicates[:, :, index].min(axis=1)
        low, high = _percentiles(drawn, level)
        found[rid] = {
            "swing": float(column.max() - column.min()), "interval": [low, high], "level": level,
            "highest": domains[int(column.argmax())], "lowest": domains[int(column.argmin())],
            "metric": "pass_at_1",
        }  # fmt: skip
    return found


def _percentiles(drawn: FloatArray, level: float) -> list[float]:
    alpha = (1.0 - level) / 2.0
    return [float(x) for x in np.quantile(drawn, [alpha, 1.0 - alpha])]


def _pair(a: int, b: int, domain: str, per_agent: list[_Counts], k: int, level: float) -> dict[str, Any]:
    base, cand = per_agent[a], per_agent[b]
    at_1, hat_k = paired_difference(base.n, base.c, cand.n, cand.c, k, level=level)
    return {"a": a, "b": b, "domain": domain, "tasks": at_1.tickets, "pass_at_1": at_1.to_dict(),
            "pass_hat_k": hat_k.to_dict()}  # fmt: skip
