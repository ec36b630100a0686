"""Suite-wide settings."""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import settings

# The machines running the suite are shared and noisy: property tests check behaviour, not speed.
settings.register_profile("passhat", deadline=None, derandomize=False)
settings.load_profile("passhat")

# Pseudonyms need a key; without one the SDK would create a key file in the home folder of whoever runs the
# suite. One fixed test key (inherited by the subprocesses tests start) keeps the suite off the home folder.
os.environ.setdefault("PASSHAT_PSEUDONYM_KEY", "passhat-test-suite-pseudonym-key")


@pytest.fixture(scope="session")
def chdb_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The one embedded-ClickHouse data path of this test process (chdb hosts one path per process).

    Every test that opens a `chdb://` store uses this path, each with a DATABASE of its own.
    """
    return tmp_path_factory.mktemp("chdb")
