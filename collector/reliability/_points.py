"""Fitting a mixture to aggregate points, such as a paper's pass@1, pass@20 and pass^20.

Three points cannot pin a three-component mixture on their own (five parameters: two free weights and three
probabilities); the mixtures that reproduce them form a two-parameter family (the top and bottom groups'
probabilities are free). passhat picks one member with two documented anchors, an assumption applied only while
the fit would otherwise be under-determined: the most reliable component sits at ``top_p`` (default 0.99,
"done essentially every time") and the least reliable at p = 0 ("never done"). For the seed's figures that
leaves three parameters for three points, and the anchors give 31% of task types at p = 0.99, 60% at p = 0.58
and 9% never; with the top at p = 1.0 the same points give 25.3% / 65.8% / 8.9%, with the bottom at p = 0.05
the never-done share is 25%. The anchors are returned with the fit (``PointsFit.anchors``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import least_squares

from passhat.collector.reliability._estimators import FloatArray
from passhat.collector.reliability._mixture import Component, Mixture

Metric = Literal["pass@k", "pass^k"]
_POINT = re.compile(r"^\s*pass\s*(?P<op>[@^])\s*(?P<k>\d+)\s*=\s*(?P<value>[-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class AggregatePoint:
    """One published figure: pass@k or pass^k at a given k."""

    metric: Metric
    k: int
    value: float

    @classmethod
    def parse(cls, text: str) -> AggregatePoint:
        """Parse ``pass@1=0.654`` or ``pass^20=0.253``."""
        match = _POINT.match(text)
        if not match:
            raise ValueError(
                f"cannot read the point {text!r}: write it as pass@K=VALUE or pass^K=VALUE, e.g. pass@1=0.654"
            )
        k = int(match["k"])
        try:
            value = float(match["value"])
        except ValueError:
            raise ValueError(f"the value in {text!r} is not a number") from None
        if k < 1:
            raise ValueError(f"k must be at least 1 in {text!r}")
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"the value in {text!r} is a probability and must lie in [0, 1]")
        metric: Metric = "pass@k" if match["op"] == "@" else "pass^k"
        return cls(metric, k, value)

    @property
    def label(self) -> str:
        return f"pass{'@' if self.metric == 'pass@k' else '^'}{self.k}"

    def predicted(self, mixture: Mixture) -> float:
        curve = mixture.pass_at_k(self.k) if self.metric == "pass@k" else mixture.pass_hat_k(self.k)
        return float(curve[0])


@dataclass(frozen=True)
class PointsFit:
    """A mixture fitted to aggregate points, with how well it reproduces them and what was anchored."""

    mixture: Mixture
    points: tuple[AggregatePoint, ...]
    max_abs_error: float
    anchors: tuple[str, ...]


def _distinct(points: list[AggregatePoint]) -> list[AggregatePoint]:
    # pass@1 and pass^1 are the same number: keep one.
    seen: dict[tuple[str, int], AggregatePoint] = {}
    for point in points:
        key = ("1", 1) if point.k == 1 else (point.metric, point.k)
        if key in seen and abs(seen[key].value - point.value) > 1e-12:
            raise ValueError(f"{seen[key].label} and {point.label} are the same quantity but disagree")
        seen[key] = point
    return list(seen.values())


def fit_mixture_to_points(
    points: list[AggregatePoint], *, components: int = 3, top_p: float = 0.99, starts: int = 24, seed: int = 0
) -> PointsFit:
    """Least-squares fit of a ``components``-component mixture to aggregate points (see module docstring)."""
    if not points:
        raise ValueError("give at least one point, e.g. pass@1=0.654")
    if components < 1:
        raise ValueError("a mixture needs at least one component")
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must lie in (0, 1], got {top_p}")
    distinct = _distinct(points)
    m = components
    fixed: dict[int, float] = {}
    anchors: list[str] = []
    if 2 * m - 1 > len(distinct) and m >= 2:
        fixed[0] = top_p
        anchors.append(f"most reliable component at p = {top_p:g}")
    if 2 * m - 1 - len(fixed) > len(distinct) and m >= 2:
        fixed[m - 1] = 0.0
        anchors.append("least reliable component at p = 0")
    free = [j for j in range(m) if j not in fixed]
    if (m - 1) + len(free) > len(distinct):
        raise ValueError(
            f"{len(distinct)} distinct point(s) cannot determine a {m}-component mixture; give more points "
            f"or fewer components (--components)"
        )

    def unpack(x: FloatArray) -> tuple[FloatArray, FloatArray]:
        logits = np.concatenate([x[: m - 1], [0.0]])
        w = np.exp(logits - logits.max())
        p = np.empty(m)
        for j, value in fixed.items():
            p[j] = value
        p[free] = x[m - 1 :]
        return w / w.sum(), p

    def residuals(x: FloatArray) -> FloatArray:
        w, p = unpack(x)
        mixture = Mixture(tuple(Component(float(wi), float(pi)) for wi, pi in zip(w, p, strict=True)))
        return np.array([pt.predicted(mixture) - pt.value for pt in distinct])

    rng = np.random.default_rng(seed)
    lower = np.concatenate([np.full(m - 1, -30.0), np.zeros(len(free))])
    upper = np.concatenate([np.full(m - 1, 30.0), np.ones(len(free))])
    best = None
    for i in range(starts):
        logits0 = np.zeros(m - 1) if i == 0 else rng.normal(0, 1.5, m - 1)
        p0 = np.linspace(0.9, 0.1, m)[free] if i == 0 else rng.uniform(0.05, 0.95, len(free))
        result = least_squares(
            residuals,
            np.concatenate([logits0, p0]),
            bounds=(lower, upper),
            xtol=1e-14,
            ftol=1e-14,
            gtol=1e-14,
        )
        if best is None or result.cost < best.cost - 1e-15:
            best = result
    assert best is not None
    w, p = unpack(best.x)
    mixture = Mixture.of(w, p)
    error = max(abs(pt.predicted(mixture) - pt.value) for pt in distinct)
    return PointsFit(mixture=mixture, points=tuple(points), max_abs_error=float(error), anchors=tuple(anchors))
