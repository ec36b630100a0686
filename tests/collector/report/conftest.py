"""Fixtures for the weekly report's tests: a synthetic period, built once per session."""

from __future__ import annotations

import pytest

from passhat.collector.report import Report, build_report
from tests.collector.report.report_synthetic import synthetic_input


@pytest.fixture(scope="session")
def synthetic_report() -> Report:
    """Six task types over three domains, k = 20, a week of traffic, two earlier periods, one alert."""
    return build_report(synthetic_input())


@pytest.fixture(scope="session")
def simulated_report() -> Report:
    """The same period, as run by a simulated agent."""
    return build_report(synthetic_input(simulated=True))
