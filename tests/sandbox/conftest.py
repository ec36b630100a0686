"""Fixtures of the sandbox tests: the retail and travel domains' template databases, built once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passhat.sandbox import Sandbox


@pytest.fixture(scope="session")
def retail() -> Iterator[Sandbox]:
    """The retail sandbox (small seed) with its template database."""
    with Sandbox("retail", seed=0, size="small") as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def banking() -> Iterator[Sandbox]:
    """The banking sandbox (small seed) with its template database."""
    with Sandbox("banking", seed=0, size="small") as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def consulting() -> Iterator[Sandbox]:
    """The consulting IT & HR sandbox (small seed) with its template database."""
    with Sandbox("consulting", seed=0, size="small") as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def travel() -> Iterator[Sandbox]:
    """The travel sandbox (small seed) with its template database."""
    with Sandbox("travel", seed=0, size="small") as sandbox:
        yield sandbox


@pytest.fixture(scope="session")
def insurance() -> Iterator[Sandbox]:
    """The insurance sandbox (small seed) with its template database."""
    with Sandbox("insurance", seed=0, size="small") as sandbox:
        yield sandbox
