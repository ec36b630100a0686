"""`passhat sandbox list|serve` and `passhat replay --domain ...`: the shipped domains from the command line."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import os
import re
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

import passhat
from passhat.collector.cli._console import (
    ci_text,
    console,
    emit_json,
    error_console,
    fail,
    pct,
    print_design_notes,
    print_harness_failures,
)

if TYPE_CHECKING:  # the sandbox (mcp, SQLAlchemy) loads when a command runs, not for `passhat --help`
    from passhat.sandbox import TrialResult

sandbox_app = typer.Typer(no_args_is_help=True, help="The sandbox domains: list them, serve their tools over MCP.")


@sandbox_app.command("list")
def list_domains(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
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
        table.add_column("task type")
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
    # The same default as `passhat replay`: scenario N of a seed is the same customer and order in both.
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
    transport = transport or "stdio"
    if transport not in ("stdio", "http"):
        fail(f"--transport must be stdio or http, got {transport!r}")
    if not 0 < port < 65536:
        fail(f"--port must be between 1 and 65535, got {port}")
    if domain not in available_domains():
        fail(f"no sandbox domain named {domain!r}; installed: {', '.join(available_domains())}")
    path = database or Path(tempfile.mkdtemp(prefix="passhat-serve-")) / f"{domain}.sqlite"
    if transport == "http":
        if token is None:
            token = new_token()
            error_console.print(f"bearer token (send Authorization: Bearer <token>): {token}", soft_wrap=True)
        elif not token.strip():
            fail("--token must not be empty")
        error_console.print(f"serving {domain} over streamable HTTP at http://{host}:{port}/mcp", soft_wrap=True)
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

    from passhat.collector.cli._loop import load_loop_config, open_loop_store
    from passhat.collector.loop import SessionService, sessions_app
    from passhat.sandbox import DomainError, available_domains, new_token

    if not 0 < port < 65536:
        fail(f"--port must be between 1 and 65535, got {port}")
    if domain not in available_domains():
        fail(f"no sandbox domain named {domain!r}; installed: {', '.join(available_domains())}")
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


def summarize(
    results: list[TrialResult],
    k: int,
    *,
    price_in: float | None = None,
    price_out: float | None = None,
    min_trials: int | None = None,
) -> list[dict[str, Any]]:
    """Per task type: tickets, trials, pass@1, pass@k, pass^k with CIs, signature counts, tokens and cost.

    `price_in` / `price_out` are the model's prices in USD per million input / output tokens. ``min_trials``
    (curtailed replay) takes pass@1 from each ticket's first ``min_trials`` attempts.
    """
    from passhat.collector.reliability import summarize_trials

    tokens: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for result in results:
        key = (result.domain, result.task_type)
        tokens[key][0] += result.usage.input_tokens
        tokens[key][1] += result.usage.output_tokens
    rows = []
    for by_type in summarize_trials(results, k, min_trials=min_trials):
        used = tokens[(by_type.domain, by_type.task_type)]
        rows.append({**by_type.to_dict(), "input_tokens": used[0], "output_tokens": used[1]})
        if price_in is not None and price_out is not None:
            rows[-1]["cost_usd"] = round((used[0] * price_in + used[1] * price_out) / 1e6, 6)
    return rows


def replay_domain(
    domain: str,
    *,
    task_type: str | None,
    scenarios: int,
    k: int,
    agent: str,
    customer: str,
    flaws: str,
    parallel: int,
    transport: str,
    model: str | None,
    seed: int,
    as_json: bool,
    base_url: str | None = None,
    price_in: float | None = None,
    price_out: float | None = None,
    size: str = "small",
    send_traces: bool = False,
    stop_early: bool = False,
    min_trials: int = 2,
) -> None:
    """`passhat replay --domain D`: run generated scenarios k times each and print the reliability table."""
    from passhat.sandbox import TRANSPORTS, Curtailment, DomainError, FlawConfig, RunConfig, Sandbox, run_trials
    from passhat.sandbox.agents import resolve_agent, resolve_customer

    if scenarios < 1 or k < 1 or parallel < 1 or min_trials < 1:
        fail("--scenarios, --k, --parallel and --min-trials must be at least 1")
    curtailment = Curtailment(min_trials=min(min_trials, k)) if stop_early else None
    if (price_in is None) != (price_out is None) or min(price_in or 0.0, price_out or 0.0) < 0:
        fail("give both --price-in and --price-out (USD per million tokens, not negative)")
    if flaws not in ("off", "default"):
        fail(f"--flaws must be off or default, got {flaws!r}")
    if transport not in TRANSPORTS:
        fail(f"--transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
    try:
        agent_factory = resolve_agent(
            agent,
            flaws=FlawConfig.default() if flaws == "default" else FlawConfig.off(),
            model=model,
            base_url=base_url,
        )
        customer_factory = resolve_customer(customer, model=model, base_url=base_url)
        # With --send-traces every trial goes to the collector (PASSHAT_ENDPOINT) as a sandbox ticket.
        runtime = passhat.configure(source="sandbox", make_global=False) if send_traces else None
        with Sandbox(domain, seed=seed, size=size) as sandbox:
            chosen = sandbox.scenarios(task_type, scenarios, seed=seed)
            config = RunConfig(transport=transport, parallel=parallel)  # type: ignore[arg-type]
            results = asyncio.run(
                run_trials(
                    sandbox,
                    chosen,
                    k,
                    agent_factory,
                    customer_factory=customer_factory,
                    config=config,
                    runtime=runtime,
                    curtailment=curtailment,
                )
            )
        if runtime is not None:
            runtime.flush()
            runtime.shutdown()
    except (DomainError, passhat.ConfigurationError) as exc:
        fail(str(exc))
    from passhat.collector.reliability import harness_failures

    first = None if curtailment is None else curtailment.min_trials
    rows = summarize(results, k, price_in=price_in, price_out=price_out, min_trials=first)
    label = "reference (offline simulation)" if agent == "reference" else agent
    broken = [group.to_dict() for group in harness_failures(results)]
    retries = sum(len(result.harness_retries) for result in results)
    if as_json:
        print_harness_failures(broken, as_json=True)
        design = {"name": "fixed", "k": k} if first is None else {"name": "curtailed", "k": k, "min_trials": first}
        flaw = {"flaws": flaws} if agent == "reference" else {}
        emit_json(
            {
                "task_types": rows, "k": k, "agent": label, **flaw, "design": design, "trials": len(results),
                "harness_failures": broken, "harness_retries": retries,
            }
        )  # fmt: skip
        return
    # Flaws are a setting of the reference simulation only: another agent's title does not mention them.
    flaw_text = f", flaws {flaws}" if agent == "reference" else ""
    table = Table(title=f"{domain}: {len(results)} trials, k={k}, agent {label}{flaw_text}")
    for column in ("task type", "n", "pass@1", f"pass@{k}", f"pass^{k}", f"pass^{k} CI", "signatures"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row["task_type"],
            str(row["tickets"]),
            pct(row["pass_at_1"]),
            pct(row["pass_at_k"]),
            pct(row["pass_hat_k"]),
            ci_text(row["pass_hat_k_ci"]),
            ", ".join(f"{label} {count}" for label, count in row["signatures"].items()) or "-",
        )
    if rows or not broken:
        console.print(table)
    else:
        console.print(f"{domain}: no trial speaks about the agent: every one was broken by the harness (below).")
    print_design_notes(rows, len(results), k, first)
    if retries:
        console.print(f"{retries} run(s) of trials the harness broke were retried (infrastructure, not the agent).")
    print_harness_failures(broken, as_json=False)


def replay(
    domain: Annotated[
        str | None, typer.Option(help="Replay scenarios generated by this shipped domain, e.g. retail.")
    ] = None,
    period: Annotated[
        str | None, typer.Option(help="Replay the store's production tickets of this period (e.g. 2026-W48).")
    ] = None,
    since: Annotated[str | None, typer.Option(help="Replay the store's production tickets since a day.")] = None,
    config_path: Annotated[
        Path | None, typer.Option("--config", help="passhat.toml for --period/--since (store, agent, alerts).")
    ] = None,
    store_url: Annotated[str | None, typer.Option("--store", help="Store URL for --period/--since.")] = None,
    project: Annotated[str | None, typer.Option(help="Project for --period/--since.")] = None,
    tickets_per_task_type: Annotated[
        int | None, typer.Option(help="Tickets sampled per task type (--period/--since).")
    ] = None,
    task_type: Annotated[str | None, typer.Option("--task-type", help="One task type (default: all).")] = None,
    scenarios: Annotated[int, typer.Option(help="Scenarios (tickets) per task type.")] = 20,
    k: Annotated[
        int | None, typer.Option("--k", help="pass^k's k [--domain: 5; --period: the config's replay.k].")
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            help="reference, anthropic, openai, an agent service's http(s):// URL, or module:function "
            "[default: reference / agent.factory]."
        ),
    ] = None,
    agent_version: Annotated[
        str | None, typer.Option(help="The version of the agent under test (--period; default: agent.version).")
    ] = None,
    customer: Annotated[str, typer.Option(help="scripted, anthropic or openai.")] = "scripted",
    flaws: Annotated[
        str | None, typer.Option(help="Reference agent failure injection: off or default [default: default].")
    ] = None,
    parallel: Annotated[
        int | None, typer.Option(help="Trials running at once [--domain: 8; --period: replay.concurrency].")
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="--period: start a new run even if one with these settings finished.")
    ] = False,
    compare_to: Annotated[
        str | None,
        typer.Option(help="--period: replay the tickets of this run with the agent given, and compare the two."),
    ] = None,
    transport: Annotated[
        str,
        typer.Option(
            help="How trials reach their tools: direct (in process, no protocol), memory, stdio or http (MCP)."
        ),
    ] = "direct",
    model: Annotated[str | None, typer.Option(help="Model of the anthropic or openai agent/customer.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            envvar="OPENAI_BASE_URL", help="Chat Completions server of the openai agent/customer (vLLM, Ollama, ...)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the data and the scenario draw.")] = 0,
    size: Annotated[str, typer.Option(help="Seed size of the domain's data: small or default.")] = "small",
    send_traces: Annotated[
        bool, typer.Option("--send-traces", help="Export each trial's trace to PASSHAT_ENDPOINT.")
    ] = False,
    price_in: Annotated[float | None, typer.Option(help="USD per million input tokens, for the cost.")] = None,
    price_out: Annotated[float | None, typer.Option(help="USD per million output tokens, for the cost.")] = None,
    stop_early: Annotated[
        bool | None,
        typer.Option(
            "--stop-early/--no-stop-early",
            help="Curtailed replay: stop a ticket's trials once one passed and one failed (default: config).",
        ),
    ] = None,
    min_trials: Annotated[
        int | None, typer.Option(help="Attempts every ticket runs under --stop-early; pass@1 uses them.")
    ] = None,
    executor: Annotated[
        str | None, typer.Option(help="--period: where trials run, local or ray [default: replay.executor].")
    ] = None,
    ray_address: Annotated[
        str | None, typer.Option(help="--executor ray: a cluster's address, or local [default: replay.ray_address].")
    ] = None,
    ray_workers: Annotated[
        int | None, typer.Option(help="--executor ray: worker actors (0: one per CPU) [default: replay.ray_workers].")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(min=0, help="--period: local worker processes (0: one per core) [default: replay.workers]."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Run k trials per ticket and print per-task-type pass@1, pass@k and pass^k with signature counts.

    --domain runs scenarios a shipped domain generates (a benchmark, no store needed); --period / --since
    replays production tickets sampled from the store (the loop: trials, alerts and the report).
    """
    if domain is None:
        from passhat.collector.cli._loop import StoreReplayOptions, replay_store

        if flaws is not None:
            fail("--flaws applies to --domain only; with --period the agent comes from the config's [agent] table")
        if send_traces:
            fail("--send-traces applies to --domain only: --period/--since always store every trial as a sandbox trace")
        replay_store(
            StoreReplayOptions(
                period=period, since=since, config_path=config_path, store_url=store_url, project=project, k=k,
                tickets_per_task_type=tickets_per_task_type, task_type=task_type, agent=agent,
                agent_version=agent_version, parallel=parallel, fresh=fresh, compare_to=compare_to,
                stop_early=stop_early, min_trials=min_trials, executor=executor, ray_address=ray_address,
                ray_workers=ray_workers, workers=workers,
            ),
            as_json=as_json,
        )  # fmt: skip
        return
    if period is not None or since is not None:
        fail("give --domain, or --period / --since, not both")
    for flag, value in (
        ("--fresh", fresh), ("--compare-to", compare_to), ("--agent-version", agent_version), ("--executor", executor),
        ("--ray-address", ray_address), ("--ray-workers", ray_workers is not None), ("--workers", workers is not None),
    ):  # fmt: skip
        if value:
            fail(f"{flag} applies to --period/--since (replay runs in the store), not to --domain")
    chosen_agent = agent or "reference"
    if chosen_agent != "reference" and flaws is not None:
        fail(f"--flaws applies to the reference agent only (its simulated failures), not to {chosen_agent}")
    replay_domain(
        domain,
        task_type=task_type,
        scenarios=scenarios,
        k=5 if k is None else k,
        agent=chosen_agent,
        customer=customer,
        flaws=flaws or ("default" if chosen_agent == "reference" else "off"),
        parallel=8 if parallel is None else parallel,
        transport=transport,
        model=model,
        seed=seed,
        as_json=as_json,
        base_url=base_url,
        price_in=price_in,
        price_out=price_out,
        size=size,
        send_traces=send_traces,
        stop_early=bool(stop_early),
        min_trials=2 if min_trials is None else min_trials,
    )
