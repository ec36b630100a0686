"""SqlStore on PostgreSQL passes the store contract.

The server is `PASSHAT_TEST_POSTGRES_URL` when set (`postgresql+psycopg://user@host:5432/db`); otherwise
the tests start a throwaway cluster from the local PostgreSQL binaries (Debian's `postgresql` package), and
skip only when there are none. Each test gets a fresh schema, dropped after.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from passhat.collector.store import Store
from passhat.collector.store.sql._store import SqlStore
from tests.collector.store.sql_v2 import check_migration_from_v2
from tests.collector.store.store_contract import StoreContract


def _binaries() -> pathlib.Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return pathlib.Path(found[-1]).parent if found else None


def _as_postgres_user() -> list[str]:
    # PostgreSQL refuses to run as root: under root, run its tools as the `postgres` account.
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    given = os.environ.get("PASSHAT_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    bin_dir = _binaries()
    if bin_dir is None or (os.geteuid() == 0 and shutil.which("runuser") is None):
        if os.environ.get("CI"):  # .ci/run installs postgresql: in CI a missing server is a failure, not a skip
            pytest.fail("no PostgreSQL binaries in CI: .ci/apt-packages must list postgresql")
        pytest.skip("no PostgreSQL: install Debian's postgresql or set PASSHAT_TEST_POSTGRES_URL")
    home = pathlib.Path(tempfile.mkdtemp(prefix="passhat-pg-"))
    if os.geteuid() == 0:
        shutil.chown(home, "postgres")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    run = _as_postgres_user()
    data = home / "data"
    subprocess.run(
        [*run, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "passhat"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        [
            *run,
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(home / "log"),
            "-w",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg://passhat@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*run, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True
        )
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def _fresh_schema(postgres_url: str) -> Iterator[str]:
    """A URL whose connections work in a new, empty schema (dropped after)."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(postgres_url)
    with admin.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
    try:
        yield (
            sa.make_url(postgres_url)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
    finally:
        with admin.begin() as conn:
            conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
        admin.dispose()


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def store(self, postgres_url: str) -> Iterator[Store]:
        with _fresh_schema(postgres_url) as url:
            store = SqlStore(url)
            store.migrate()
            try:
                yield store
            finally:
                store.close()


def test_a_version_2_database_moves_to_span_ids(postgres_url: str) -> None:
    with _fresh_schema(postgres_url) as v2_url, _fresh_schema(postgres_url) as reference_url:
        reference = SqlStore(reference_url)
        reference.migrate()
        try:
            check_migration_from_v2(v2_url, reference)
        finally:
            reference.close()
