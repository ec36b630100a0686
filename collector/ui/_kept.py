"""A finished run keeps its figures: its `RunDigest` written to the store as JSON (`Store.keep_run_figures`) the
first time it is computed, and read back after a start instead of every ticket's tally.

The JSON carries a version (bumped whenever what a digest holds or how its figures are computed changes) and the
run's fingerprint (k, status, when it finished and its parameters): a digest of another version, or of the run
before it was resumed and finished again, is computed afresh. The store drops what it kept when trials are added
to the run, and keeps a digest only while the run still holds the trials it was computed from. Floats are
written by `repr` (JSON), so a digest read back equals the one computed, bit for bit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from passhat.collector.reliability import HeadlineCurve, TaskTypeSummary
from passhat.collector.store import ReplayRun, Store
from passhat.collector.ui._digest import Headline, RunDigest
from passhat.collector.ui._figures import TaskTypeFigures, period_of

#: Bump when a digest's content or the computation of its figures changes: older kept digests are then recomputed.
VERSION = 1


def fingerprint(run: ReplayRun) -> str:
    """What a run's figures depend on besides its trials (which the store guards)."""
    finished = None if run.finished_at is None else run.finished_at.isoformat()
    text = json.dumps([run.run_id, run.k, run.status, finished, run.params], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def kept_digest(store: Store, project: str, run: ReplayRun) -> RunDigest | None:
    """The digest a finished run kept, or None (not kept, another version, or kept before the run changed)."""
    if run.status != "finished":
        return None
    body = store.kept_run_figures(project, run.run_id)
    if body is None:
        return None
    try:
        data = json.loads(body)
        if not isinstance(data, dict) or data.get("version") != VERSION or data.get("run") != fingerprint(run):
            return None
        return _digest_from(data, run)
    except (ValueError, TypeError, KeyError):  # written by hand or cut short: computed again
        return None


def keep_digest(store: Store, project: str, run: ReplayRun, digest: RunDigest) -> bool:
    """Keep a finished run's digest (False when the run is not finished or its trials changed meanwhile)."""
    if run.status != "finished":
        return False
    return store.keep_run_figures(project, run.run_id, trials=digest.trials, body=encode(digest, run))


# --- JSON --------------------------------------------------------------------------------------------------
def encode(digest: RunDigest, run: ReplayRun) -> str:
    return json.dumps(
        {
            "version": VERSION,
            "run": fingerprint(run),
            "trials": digest.trials,
            "names": list(digest.names),
            "figures": {
                name: {"summary": _summary(f.summary), "signatures": dict(f.signatures), "left_out": f.left_out}
                for name, f in digest.figures.items()
            },
            "failures": [[name, dict(counts)] for name, counts in digest.failures.items()],
            "settled": [
                [name, [[n, c, w] for (n, c), w in counts.items()]] for name, counts in digest.settled_counts.items()
            ],
            "task_types": {name: _headline(h) for name, h in digest.task_types.items()},
            "pooled": None if digest.pooled is None else _headline(digest.pooled),
            "domains": [
                [domain, sorted(names), None if h is None else _headline(h)]
                for domain, (names, h) in digest.domains.items()
            ],
        },
        separators=(",", ":"),
        default=_plain,
    )


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number it holds (json writes float64 itself, not int64)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a digest cannot hold {type(value).__name__}")


def _summary(summary: TaskTypeSummary) -> dict[str, Any]:
    return {f.name: getattr(summary, f.name) for f in dataclasses.fields(summary)}


def _headline(h: Headline) -> dict[str, Any]:
    c = h.curve
    arrays = ("pass_at_k", "pass_at_k_low", "pass_at_k_high", "pass_hat_k", "pass_hat_k_low", "pass_hat_k_high")
    curve: dict[str, Any] = {name: [float(v) for v in getattr(c, name)] for name in arrays}
    curve.update(k=[int(v) for v in c.k], tickets=c.tickets, trials=c.trials, level=c.level)
    curve.update(pass_at_1=float(c.pass_at_1), pass_at_1_ci=list(c.pass_at_1_ci))
    return {"scope": h.scope, "k": h.k, "left_out": h.left_out, "weighting": h.weighting, "curve": curve}


def _digest_from(data: Mapping[str, Any], run: ReplayRun) -> RunDigest:
    period = period_of(run)
    figures = {
        str(name): TaskTypeFigures(
            str(name), period, run.run_id, _summary_from(f["summary"]), Counter(f["signatures"]), int(f["left_out"])
        )
        for name, f in data["figures"].items()
    }
    return RunDigest(
        figures=figures,
        names=tuple(str(name) for name in data["names"]),
        failures={name: Counter({str(s): int(n) for s, n in counts.items()}) for name, counts in data["failures"]},
        settled_counts={
            name: Counter({(int(n), int(c)): int(w) for n, c, w in counts}) for name, counts in data["settled"]
        },
        task_types={str(name): _headline_from(h) for name, h in data["task_types"].items()},
        pooled=None if data["pooled"] is None else _headline_from(data["pooled"]),
        domains={
            str(domain): (frozenset(str(n) for n in names), None if h is None else _headline_from(h))
            for domain, names, h in data["domains"]
        },
        trials=int(data["trials"]),
    )


def _summary_from(values: Mapping[str, Any]) -> TaskTypeSummary:
    fields = {f.name for f in dataclasses.fields(TaskTypeSummary)}
    if set(values) != fields:
        raise KeyError(f"a kept summary has fields {sorted(values)}, not {sorted(fields)}")
    read: dict[str, Any] = {name: tuple(v) if isinstance(v, list) else v for name, v in values.items()}
    return TaskTypeSummary(**read)


def _headline_from(data: Mapping[str, Any]) -> Headline:
    c = data["curve"]

    def floats(name: str) -> Any:
        return np.asarray(c[name], dtype=np.float64)

    curve = HeadlineCurve(
        k=np.asarray(c["k"], dtype=np.int64),
        tickets=int(c["tickets"]),
        trials=int(c["trials"]),
        level=float(c["level"]),
        pass_at_1=float(c["pass_at_1"]),
        pass_at_1_ci=(float(c["pass_at_1_ci"][0]), float(c["pass_at_1_ci"][1])),
        pass_at_k=floats("pass_at_k"),
        pass_at_k_low=floats("pass_at_k_low"),
        pass_at_k_high=floats("pass_at_k_high"),
        pass_hat_k=floats("pass_hat_k"),
        pass_hat_k_low=floats("pass_hat_k_low"),
        pass_hat_k_high=floats("pass_hat_k_high"),
    )
    return Headline(str(data["scope"]), int(data["k"]), curve, int(data["left_out"]), str(data["weighting"]))
