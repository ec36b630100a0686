"""A store URL whose scheme passhat cannot open is refused by `config check` (nothing connected to) and by every
command opening it, with the closest URL passhat opens: before, `config check` called it valid and `serve` or
`keys create` failed with SQLAlchemy's "Can't load plugin: sqlalchemy.dialects:sqlte"."""

from __future__ import annotations

import pathlib

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.store import StoreError, open_store

runner = CliRunner()
KNOWN = "passhat opens sqlite:///path/to/passhat.db, postgresql+psycopg://user@host/db, chdb:///path/to/data"


@pytest.mark.parametrize(
    ("url", "meant"),
    [
        ("sqlte:///x.db", "sqlite:///x.db"),
        ("SQLITE:///x.db", "sqlite:///x.db"),
        ("postgres://u@localhost/db", "postgresql+psycopg://u@localhost/db"),
        ("postgresql+nodriver://u@localhost/db", "postgresql+psycopg://u@localhost/db"),
        ("clickhose://ch:8123", "clickhouse://ch:8123"),
        ("chbd:///var/ch", "chdb:///var/ch"),
        ("HTTP://ch:8123", "http://ch:8123"),
    ],
)
def test_config_check_refuses_an_unknown_scheme_and_suggests_the_closest(
    tmp_path: pathlib.Path, url: str, meant: str
) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text(f'[store]\nurl = "{url}"\n', encoding="utf-8")
    done = runner.invoke(app, ["config", "check", str(config)])
    assert done.exit_code == 2, done.output
    scheme = url.split("://")[0]
    assert done.stderr.startswith(
        f"passhat: error: {config}: store.url: unknown store URL scheme {scheme!r} in {url!r}: did you mean {meant!r}? "
        f"{KNOWN}"
    )
    assert "Traceback" not in done.output


def test_other_databases_async_drivers_and_bare_paths_are_refused_with_what_to_write() -> None:
    from passhat.collector.store import store_url_problem

    assert "passhat's store runs on SQLite, PostgreSQL or ClickHouse, not mysql" in str(
        store_url_problem("mysql://u@h/db")
    )
    assert "is an asyncio driver" in str(store_url_problem("postgresql+asyncpg://h/db"))
    assert "for a SQLite file write 'sqlite:////srv/passhat.db'" in str(store_url_problem("/srv/passhat.db"))
    assert str(store_url_problem("nosuchdriver://x")).startswith("unknown store URL scheme 'nosuchdriver' in ")
    # A password in the URL is never printed back, in the URL or in the suggestion.
    problem = str(store_url_problem("postgres://shop:s3cret@db.internal/passhat"))
    assert "s3cret" not in problem and "'postgresql+psycopg://shop:***@db.internal/passhat'" in problem


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///passhat.db",
        "sqlite://",
        "sqlite+pysqlite:////abs/passhat.db",
        "postgresql+psycopg://u@nonexistent.invalid/db",
        "postgresql://u@nonexistent.invalid/db",
        "chdb://chdb-data",
        "http://nonexistent.invalid:8123",
        "clickhouses://nonexistent.invalid",
    ],
)
def test_config_check_takes_the_schemes_passhat_opens_without_connecting(tmp_path: pathlib.Path, url: str) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text(f'[store]\nurl = "{url}"\n', encoding="utf-8")
    done = runner.invoke(app, ["config", "check", str(config)])
    assert done.exit_code == 0, done.output
    assert list(tmp_path.iterdir()) == [config]  # nothing created either


def test_opening_names_the_closest_scheme_and_creates_nothing(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=r"did you mean 'sqlite:///x\.db'\?"):
        open_store("sqlte:///x.db")
    created = runner.invoke(app, ["keys", "create", "--project", "shop", "--store", "sqlte:///x.db"])
    assert created.exit_code == 2
    assert created.output.startswith(
        "passhat: error: unknown store URL scheme 'sqlte' in 'sqlte:///x.db': did you mean 'sqlite:///x.db'? "
    )
    assert "Can't load plugin" not in created.output
    served = runner.invoke(app, ["serve", "--store", "postgres://u@localhost/db", "--port", "0"])
    assert served.exit_code == 2
    assert "did you mean 'postgresql+psycopg://u@localhost/db'?" in served.output
    assert list(tmp_path.iterdir()) == []
