"""`passhat serve` and `passhat keys create|list|revoke`."""

from __future__ import annotations

import datetime as dt
import errno
import gc
import json
import os
import pathlib
import re
import socket
from typing import TYPE_CHECKING, Annotated

import typer

from passhat.collector.cli._options import JsonOption
from passhat.collector.ingest import CollectorSettings, SettingsError, create_api_key
from passhat.collector.store import Store, StoreError, open_store

if TYPE_CHECKING:
    from fastapi import FastAPI

DataDir = Annotated[
    pathlib.Path | None,
    typer.Option("--data-dir", help="Directory of the default SQLite store [env PASSHAT_DATA_DIR; ~/.passhat]."),
]
StoreUrl = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Store URL: sqlite:///file.db, postgresql+psycopg://..., chdb:///path, http://clickhouse:8123 "
        "[env PASSHAT_STORE_URL].",
    ),
]

keys_app = typer.Typer(no_args_is_help=True, help="Create, list and revoke project API keys.")


def _settings(data_dir: pathlib.Path | None, store_url: str | None) -> CollectorSettings:
    try:
        settings = CollectorSettings()  # its PASSHAT_* environment variables
    except SettingsError as exc:
        raise _fail(str(exc)) from None
    updates: dict[str, object] = {}
    if data_dir is not None:
        updates["data_dir"] = data_dir
    if store_url is not None:
        updates["store_url"] = store_url
    return settings.model_copy(update=updates)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"passhat: error: {message}", err=True)
    return typer.Exit(2)


KeysConfig = Annotated[
    pathlib.Path | None,
    typer.Option("--config", help="passhat.toml: the store of its [store] url, as `passhat serve --config` uses."),
]


def _chosen(
    data_dir: pathlib.Path | None, store_url: str | None, config_path: pathlib.Path | None = None
) -> tuple[str, str]:
    """The store URL `serve` would use with these options (--store, --data-dir or $PASSHAT_STORE_URL, else the
    --config's [store] url, else the data dir's SQLite file), and which of them named it."""
    environment = os.environ.get
    named_by = (
        "--store" if store_url else "$PASSHAT_STORE_URL" if environment("PASSHAT_STORE_URL")
        else "--data-dir" if data_dir is not None else None
    )  # fmt: skip
    if config_path is not None and named_by is None:
        from passhat.collector.cli._store import load_loop_config

        store_url, named_by = load_loop_config(config_path).store_url(), "the --config's store"
    if named_by is None and environment("PASSHAT_DATA_DIR"):
        named_by = "$PASSHAT_DATA_DIR"
    return _settings(data_dir, store_url).resolved_store_url(), named_by or "passhat's default (~/.passhat)"


def _open(
    data_dir: pathlib.Path | None,
    store_url: str | None,
    config_path: pathlib.Path | None = None,
    *,
    reads: str | None = None,
) -> Store:
    """The store `serve` would use with these options (`_chosen`). ``reads``: what the command says when the store
    holds nothing; a SQLite store that is not there (no such file, or in memory) is then refused with it, not
    created."""
    from passhat.collector.cli._store import missing_sqlite_store

    url, named_by = _chosen(data_dir, store_url, config_path)
    missing = None if reads is None else missing_sqlite_store(url, named_by)
    if missing is not None:
        raise _fail(f"{reads}: {missing}")
    try:
        return open_store(url)
    except StoreError as exc:
        raise _fail(str(exc)) from None


def check_listen(host: str, port: int, *, holder: str = "another collector?") -> None:
    """Refuse, in one line, an address `serve` could not listen on: bound and released here, before the collector
    announces itself (uvicorn would print its own error after the success lines, exit status 3). ``holder``: who
    may have the port already (`passhat sandbox serve` checks its address too)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise _fail(f"--host {host!r} is not an address or a host name this machine can resolve ({exc})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise _fail(f"port {port} on {host} is in use ({holder}): pick another with --port") from None
            if exc.errno == errno.EADDRNOTAVAIL:
                raise _fail(
                    f"--host {host} is not an address of this machine: use 127.0.0.1 (this machine only), "
                    "0.0.0.0 (every interface) or one of its own addresses"
                ) from None
            if exc.errno == errno.EACCES:
                raise _fail(f"port {port} on {host} needs privileges: pick one above 1023 with --port") from None
            raise _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def tune_gc() -> None:
    """Fewer cyclic garbage collections for a collector process: ingest allocates millions of short-lived
    containers (decoded attributes, rows) that reference counting frees, yet each 700 allocations would
    start a young-generation pass and, as queued spans accumulate, full passes over all of them. Startup
    objects are frozen out of the scans; cycles are still collected, less often (benchmarks/bench_ingest.py)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(_GC_YOUNG_THRESHOLD, 20, 20)


_GC_YOUNG_THRESHOLD = 50_000


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (4318 is OTLP/HTTP's).")] = 4318,
    data_dir: DataDir = None,
    store_url: StoreUrl = None,
    max_body_mb: Annotated[float, typer.Option(min=0.01, help="Largest accepted request body, MiB.")] = 16.0,
    workers: Annotated[
        int, typer.Option(min=1, max=64, help="Worker processes (decoding is CPU-bound: one per core).")
    ] = 1,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
    config_path: Annotated[
        pathlib.Path | None,
        typer.Option("--config", help="passhat.toml: also run the scheduler (replays, report, alerts)."),
    ] = None,
) -> None:
    """Run the collector: OTLP/HTTP on /v1/traces, the query API on /api, the web UI on /ui/; with --config, the
    scheduler too."""
    import uvicorn

    from passhat.collector.ingest import TimedHttpProtocol, create_app
    from passhat.collector.ui import ui_router

    settings = _settings(data_dir, store_url).model_copy(
        update={"max_body_bytes": max(int(max_body_mb * 1024 * 1024), 1024)}
    )
    check_listen(host, port)
    config = None
    if config_path is not None:
        from passhat.collector.cli._store import load_loop_config

        config = load_loop_config(config_path)
        if store_url is None and data_dir is None and not os.environ.get("PASSHAT_STORE_URL"):
            settings = settings.model_copy(update={"store_url": config.store_url()})
    if workers > 1 and settings.resolved_store_url().lower().startswith("chdb:"):
        raise _fail(
            f"--workers {workers} with an embedded ClickHouse store ({settings.resolved_store_url()}): only one "
            "process can open its data directory; serve it with one worker, or use a ClickHouse server "
            "(http://host:8123) that several workers can share"
        )
    store = _open(data_dir, settings.store_url)  # migrates once, before any worker starts
    tune_gc()
    typer.echo(f"passhat collector on http://{host}:{port} (store {settings.resolved_store_url()})", err=True)
    typer.echo(f"web UI on http://{host}:{port}/ui/ (sign in with a project key)", err=True)
    scheduler = None
    if config is not None and config.schedule.enabled:
        from passhat.collector.loop import Scheduler, period_due

        scheduler = Scheduler(config, store if workers == 1 else _open(data_dir, settings.store_url))
        first = scheduler.start()
        typer.echo(
            f"scheduler: next run {first:%Y-%m-%d %H:%M} UTC replays {period_due(config.schedule, first).name} "
            f"for project {config.project!r}",
            err=True,
        )
    if workers > 1:
        store.close()  # the workers open their own; the scheduler has its own handle
        os.environ[_SETTINGS_ENV] = settings.model_dump_json()
        uvicorn.run(
            f"{__name__}:app_from_environment",
            factory=True,
            workers=workers,
            host=host,
            port=port,
            log_level=log_level,
            access_log=False,
            http=TimedHttpProtocol,
        )
        if scheduler is not None:
            scheduler.stop()
        return
    try:
        app = create_app(settings, store=store, routers=[ui_router()])
        uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False, http=TimedHttpProtocol)
    finally:
        if scheduler is not None:
            scheduler.stop()
        store.close()


_SETTINGS_ENV = "PASSHAT_COLLECTOR_SETTINGS_JSON"


def app_from_environment() -> FastAPI:
    """The app of one `serve --workers N` worker process, from the settings the parent passed on."""
    from passhat.collector.ingest import create_app
    from passhat.collector.ui import ui_router

    app = create_app(CollectorSettings.model_validate_json(os.environ[_SETTINGS_ENV]), routers=[ui_router()])
    tune_gc()
    return app


@keys_app.command("create")
def keys_create(
    project: Annotated[str, typer.Option(help="Project the key writes to and reads from (created if new).")],
    label: Annotated[str | None, typer.Option(help="A note to recognise the key by.")] = None,
    data_dir: DataDir = None,
    store_url: StoreUrl = None,
    config_path: KeysConfig = None,
    as_json: JsonOption = False,
) -> None:
    """Create a key. It is printed once, alone on the last line; only its hash is stored."""
    from passhat.collector.config import PROJECT_NAME, PROJECT_NAME_MAX, PROJECT_NAME_WHAT

    if not re.match(PROJECT_NAME, project) or len(project) > PROJECT_NAME_MAX:
        raise _fail(
            f"--project must be {PROJECT_NAME_WHAT} (at most {PROJECT_NAME_MAX} characters, as passhat.toml's "
            f"`project`), got {project!r}"
        )
    with _open(data_dir, store_url, config_path) as store:
        try:
            key, record = create_api_key(store, project, label=label)
        except StoreError as exc:
            raise _fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps({"project": project, "prefix": record.prefix, "label": label, "key": key}))
        return
    typer.echo(f"Created key {record.prefix} for project {project!r}. It is shown only this once:")
    typer.echo(key)


@keys_app.command("list")
def keys_list(
    project: Annotated[str | None, typer.Option(help="Only this project's keys.")] = None,
    data_dir: DataDir = None,
    store_url: StoreUrl = None,
    config_path: KeysConfig = None,
    as_json: JsonOption = False,
) -> None:
    """List keys by prefix (the keys themselves are never stored)."""
    from passhat.collector.cli._store import missing_sqlite_store

    missing = missing_sqlite_store(*_chosen(data_dir, store_url, config_path))
    if missing is not None:  # a listing only reads: a store that is not there is said, never made
        typer.echo(f"passhat: no keys: {missing}", err=True)
        records = []
    else:
        with _open(data_dir, store_url, config_path) as store:
            records = store.list_api_keys(project)
    rows = [
        {
            "prefix": r.prefix,
            "project": r.project,
            "label": r.label,
            "created_at": r.created_at.isoformat(),
            "revoked_at": None if r.revoked_at is None else r.revoked_at.isoformat(),
            "active": r.active,
        }
        for r in records
    ]
    if as_json:
        typer.echo(json.dumps(rows))
        return
    if not records:
        typer.echo("no keys")
        return
    from rich import box
    from rich.table import Table

    from passhat.collector.cli._console import console

    # Light rules as `passhat runs list`; the prefix, what `keys revoke` takes, is kept whole.
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), show_edge=False)
    table.add_column("prefix", no_wrap=True)
    table.add_column("project", overflow="fold")
    table.add_column("created (UTC)", no_wrap=True)
    table.add_column("status", no_wrap=True)
    revoked = any(r.revoked_at is not None for r in records)
    if revoked:
        table.add_column("revoked (UTC)", no_wrap=True)
    table.add_column("label", overflow="fold")
    for r in records:
        when = [] if not revoked else ["-" if r.revoked_at is None else _utc(r.revoked_at)]
        status = "active" if r.revoked_at is None else "revoked"
        table.add_row(r.prefix, r.project, _utc(r.created_at), status, *when, r.label or "")
    console.print(table, highlight=False, markup=False)


def _utc(moment: dt.datetime) -> str:
    """A stored time as the other listings show it: UTC, to the minute."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")


@keys_app.command("revoke")
def keys_revoke(
    key: Annotated[
        str,
        typer.Argument(
            metavar="PREFIX_OR_KEY",
            help="The key's prefix, as `passhat keys list` shows it (phk_ and 8 hex digits), or the whole key.",
        ),
    ],
    data_dir: DataDir = None,
    store_url: StoreUrl = None,
    config_path: KeysConfig = None,
) -> None:
    """Revoke a key, named by its prefix or given whole: requests with it are refused (within the collector's key
    cache time, 5 s). A whole key's secret part must match the stored key's hash."""
    from passhat.collector.ingest import KEY_PREFIX, key_prefix

    given = key.strip()
    prefix = key_prefix(given)
    whole = len(given) > len(prefix)
    if whole and not given.startswith(KEY_PREFIX):
        # Never echo what was given: it may be a secret of some other kind pasted by mistake.
        raise _fail(
            f"the argument is neither a key prefix nor a passhat key (both start with {KEY_PREFIX}): give the key's "
            "prefix as `passhat keys list` shows it, e.g. phk_3f9a1c2b"
        )
    with _open(data_dir, store_url, config_path, reads=f"no active key with prefix {prefix!r}") as store:
        if whole:
            _check_whole_key(store, given, prefix)
        revoked = store.revoke_api_key(prefix)
    if not revoked:
        raise _fail(f"no active key with prefix {prefix!r} (see `passhat keys list`)")
    typer.echo(f"Revoked {prefix}")


def _check_whole_key(store: Store, key: str, prefix: str) -> None:
    """Refuse a whole key whose secret part does not match the stored key of its prefix (a mistyped or truncated
    copy, another store's key), saying so without printing the key back."""
    from passhat.collector.store import hash_api_key

    try:
        record = store.find_api_key(hash_api_key(key))
        known = [each.prefix for each in store.list_api_keys()]
    except StoreError as exc:
        raise _fail(
            f"cannot check the key against the store ({exc}): give the prefix alone: passhat keys revoke {prefix}"
        ) from None
    if record is not None and record.prefix == prefix:
        if not record.active:
            raise _fail(f"the key with prefix {prefix!r} is already revoked (see `passhat keys list`)")
        return
    if prefix in known:
        raise _fail(
            f"the key given does not match the stored key with prefix {prefix!r}: its secret part differs (a partial "
            f"or mistyped copy?); check the key, or give the prefix alone: passhat keys revoke {prefix}"
        )
    raise _fail(f"no key with prefix {prefix!r} in this store (see `passhat keys list`)")


def register(app: typer.Typer) -> None:
    """Add `serve` and `keys` to the passhat command line."""
    app.command("serve")(serve)
    app.add_typer(keys_app, name="keys")
