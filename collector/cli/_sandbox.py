"""`passhat sandbox list|serve`: the shipped domains and their tools, or graded sessions, from the command line."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from passhat.collector.cli._console import console, emit_json, error_console, fail
from passhat.collector.cli._options import JsonOption
from passhat.collector.cli._serve import check_listen

sandbox_app = typer.Typer(no_args_is_help=True, help="The sandbox domains: list them, serve their tools over MCP.")


@sandbox_app.command("list")
def list_domains(as_json: JsonOption = False) -> None:
    """List the installed domains and their task types."""
    from passhat.sandbox import DomainError, available_domains, load_domain

    domains: list[dict[str, Any]] = []
    for name in available_domains():
        try:
            domain = load_domain(name)
        except DomainError as exc:
            fail(str(exc))
        tasks = [
            {"task_type": t.name, "kind": t.kind, "description": t.description} for t in domain.task_types.values()
        ]
        tools = sorted(domain.lookup_tools | domain.write_tools)
        domains.append({"domain": name, "description": domain.description, "task_types": tasks, "tools": tools})
    if as_json:
        emit_json({"domains": domains})
        return
    for entry in domains:
        table = Table(title=f"{entry['domain']}: {entry['description']}")
        table.add_column("task type", overflow="fold")  # a name is read whole, never cut to "cancelled_su…"
        table.add_column("kind")
        table.add_column("description")
        for task in entry["task_types"]:
            table.add_row(task["task_type"], task["kind"], task["description"])
        console.print(table)


@sandbox_app.command("serve")
def serve_domain(
    domain: Annotated[str, typer.Argument(help="The domain to serve, e.g. retail.")],
    transport: Annotated[str | None, typer.Option(help="stdio or http (streamable HTTP) [default: stdio].")] = None,
    host: Annotated[str, typer.Option(help="Bind address for http.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port for http.")] = 8000,
    database: Annotated[
        Path | None, typer.Option(help="SQLite file to serve (built and seeded if missing; default: a temp copy).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the generated data.")] = 0,
    # The same default as `passhat bench`: scenario N of a seed is the same customer and order in both.
    size: Annotated[str, typer.Option(help="Seed size of the domain's data: small or default.")] = "small",
    token: Annotated[
        str | None,
        typer.Option(
            envvar="PASSHAT_SANDBOX_TOKEN",
            help="Bearer token HTTP clients must send (default: a new one, printed at start).",
        ),
    ] = None,
    sessions: Annotated[
        bool,
        typer.Option(
            "--sessions",
            help="Serve graded sessions over HTTP instead: POST /v1/sessions, /v1/sessions/{id}/messages and "
            "/v1/sessions/{id}/end, each session an isolated trial, graded and stored.",
        ),
    ] = False,
    store_url: Annotated[
        str | None, typer.Option("--store", help="--sessions: the store for the trials (default: the config's).")
    ] = None,
    project: Annotated[str | None, typer.Option(help="--sessions: the project the trials are stored in.")] = None,
    config_path: Annotated[Path | None, typer.Option("--config", help="--sessions: passhat.toml (the store).")] = None,
) -> None:
    """Serve a domain's tools over MCP so any MCP client can use it (one database, one session state).

    Over HTTP every request needs `Authorization: Bearer <token>`: the tools change the database. With
    --sessions each client session is a graded trial of its own (docs/agents.md).
    """
    from passhat.sandbox import DomainError, available_domains, new_token, serve

    if sessions:
        if database is not None:
            fail("--database does not apply to --sessions: every session gets its own copy of the domain's data")
        if transport not in (None, "http"):
            fail(f"--sessions serves HTTP: leave out --transport {transport}")
        serve_sessions(domain, host=host, port=port, token=token, seed=seed, size=size, store_url=store_url,
                       project=project, config_path=config_path)  # fmt: skip
        return
    given = [name for name, value in (("--store", store_url), ("--project", project), ("--config", config_path))
             if value is not None]  # fmt: skip
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        fail(f"{', '.join(given)} {verb} to --sessions only (where the graded trials are stored): add --sessions")
    transport = transport or "stdio"
    if transport not in ("stdio", "http"):
        fail(f"--transport must be stdio or http, got {transport!r}")
    if not 0 < port < 65536:
        fail(f"--port must be between 1 and 65535, got {port}")
    if domain not in available_domains():
        fail(f"no sandbox domain named {domain!r}; installed: {', '.join(available_domains())}")
    _check_size(domain, size)
    if transport == "http":
        check_listen(host, port, holder="another server?")
        if token is None:
            token = new_token()
            error_console.print(f"bearer token (send Authorization: Bearer <token>): {token}", soft_wrap=True)
        elif not token.strip():
            fail("--token must not be empty")
        error_console.print(f"serving {domain} over streamable HTTP at http://{host}:{port}/mcp", soft_wrap=True)
    # Without --database, a copy of its own, removed when the server stops (Ctrl-C, the stdio client leaving).
    scratch, path = None, database
    if path is None:
        scratch = Path(tempfile.mkdtemp(prefix="passhat-serve-"))
        path = scratch / f"{domain}.sqlite"
    try:
        serve(
            domain,
            path,
            transport="stdio" if transport == "stdio" else "http",
            host=host,
            port=port,
            seed=seed,
            size=size,
            token=token,
        )
    except DomainError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _check_size(domain: str, size: str) -> None:
    """Refuse a seed size the domain does not have, before a token or an address is announced."""
    from passhat.sandbox import load_domain

    sizes = load_domain(domain).sizes
    if size not in sizes:
        fail(f"domain {domain!r} has no seed size {size!r}; choose one of {', '.join(sizes)}")


def serve_sessions(
    domain: str,
    *,
    host: str,
    port: int,
    token: str | None,
    seed: int,
    size: str,
    store_url: str | None,
    project: str | None,
    config_path: Path | None,
) -> None:
    """`passhat sandbox serve D --sessions`: graded sessions over HTTP, each trial stored (blocking)."""
    import uvicorn

    from passhat.collector.cli._store import load_loop_config, open_loop_store
    from passhat.collector.loop import SessionService, sessions_app
    from passhat.sandbox import DomainError, available_domains, new_token

    if not 0 < port < 65536:
        fail(f"--port must be between 1 and 65535, got {port}")
    if domain not in available_domains():
        fail(f"no sandbox domain named {domain!r}; installed: {', '.join(available_domains())}")
    _check_size(domain, size)
    check_listen(host, port, holder="another server?")  # before a run is opened in the store
    if token is None:
        token = new_token()
        error_console.print(f"bearer token (send Authorization: Bearer <token>): {token}", soft_wrap=True)
    elif not token.strip():
        fail("--token must not be empty")
    config = load_loop_config(config_path)
    url = store_url or os.environ.get("PASSHAT_STORE_URL") or config.store_url()
    store = open_loop_store(config, url)
    name = project or config.project
    try:
        service = SessionService(domain, store=store, project=name, seed=seed, size=size)
    except DomainError as exc:
        fail(str(exc))
    store.ensure_project(name)
    shown = re.sub(r"//([^:/@]*):[^@/]*@", r"//\1:***@", url)  # a password in the URL is not printed
    error_console.print(
        f"serving graded {domain} sessions at http://{host}:{port}/v1/sessions\n"
        f"trials stored in {shown}, project {name}, run {service.run_id} (passhat runs show {service.run_id})",
        soft_wrap=True,
        markup=False,
    )

    class SessionsServer(uvicorn.Server):
        """Stops on SIGTERM or SIGINT (within a second for requests in flight, then the open sessions end as
        shut down) and returns, rather than re-raising the signal as uvicorn.run does."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            previous = {number: signal.signal(number, self.handle_exit) for number in _STOP_SIGNALS}
            try:
                yield
            finally:
                for number, handler in previous.items():
                    signal.signal(number, handler)

    app = sessions_app(service, token)
    server = SessionsServer(
        uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    )
    try:
        server.run()
        # What is left is torn down by the interpreter: frozen, its last garbage collections skip it (seconds
        # saved with the sandbox, MCP and SQLAlchemy loaded; the stop is promised within 2 s).
        gc.freeze()
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")
    finally:
        store.close()
    if not server.started:
        fail(f"cannot serve on {host}:{port} (see the message above)")
    ended = service.ended_by_shutdown
    error_console.print(
        f"sessions server stopped; {ended} open session(s) ended by the shutdown (kept as infrastructure errors, "
        "not the agent's failures)"
        if ended
        else "sessions server stopped",
        soft_wrap=True,
    )


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
