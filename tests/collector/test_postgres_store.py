"""SqlStore on PostgreSQL passes the store contract, when a server is given by `PASSHAT_TEST_POSTGRES_URL`
(e.g. `postgresql+psycopg://passhat@127.0.0.1:5432/passhat`). Each test gets a fresh schema, dropped after."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from store_contract import StoreContract

from passhat.collector.store import Store
from passhat.collector.store._sql import SqlStore

URL = os.environ.get("PASSHAT_TEST_POSTGRES_URL")

pytestmark = pytest.mark.skipif(URL is None, reason="set PASSHAT_TEST_POSTGRES_URL to run against PostgreSQL")


class TestPostgresStore(StoreContract):
    @pytest.fixture
    def store(self) -> Iterator[Store]:
        assert URL is not None
        schema = f"t_{uuid.uuid4().hex[:12]}"
        admin = sa.create_engine(URL)
        with admin.begin() as conn:
            conn.exec_driver_sql(f"CREATE SCHEMA {schema}")
        url = sa.make_url(URL).update_query_dict({"options": f"-csearch_path={schema}"})
        store = SqlStore(url.render_as_string(hide_password=False))
        store.migrate()
        try:
            yield store
        finally:
            store.close()
            with admin.begin() as conn:
                conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
            admin.dispose()
