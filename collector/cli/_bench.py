"""`passhat bench`: the shipped domains' generated scenarios, k trials each, per task type and per domain.

No store and no config: a benchmark of an agent on tickets a domain generates (the production loop on real
tickets is `passhat replay`). Trials run in this process (`--parallel` at a time) or on Ray (`--executor ray`).
"""

from __future__ import annotations

import asyncio
import collections
import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

import passhat
from passhat.collector.cli._console import (
    console,
    emit_json,
    fail,
    fail_if_nothing_settled,
    print_design_notes,
    print_harness_failures,
)
from passhat.collector.cli._options import (
    REPLAY_ONLY,
    AgentOption,
    BaseUrlOption,
    CustomerBaseUrlOption,
    CustomerModelOption,
    CustomerOption,
    DomainOption,
    ExecutorOption,
    FlawsOption,
    JsonOption,
    KOption,
    MinTrialsOption,
    ModelOption,
    ParallelOption,
    PriceInOption,
    PriceOutOption,
    RayAddressOption,
    RayWorkersOption,
    ScenariosOption,
    SeedOption,
    SendTracesOption,
    SizeOption,
    StopEarlyOption,
    TaskTypeOption,
    TimeoutOption,
    TransportOption,
    check_customer_options,
    check_model_options,
    check_timeout,
    refused_option,
    task_types_of,
    unknown_option,
)
from passhat.collector.cli._tables import print_domain_table, print_trial_table, trial_table_rows

if TYPE_CHECKING:
    from typer._click.core import Context as ClickContext  # the click typer carries (no public name)

    # the sandbox (mcp, SQLAlchemy) loads when a command runs, not for `passhat --help`
    from passhat.sandbox import Sandbox, Scenario, TrialResult


class BenchCommand(TyperCommand):
    """`passhat bench`, naming the command an option of `passhat replay` belongs to instead of "No such option"."""

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except typer.TyperException as exc:  # click's NoSuchOption (typer carries its own click)
            option = refused_option(exc, "passhat bench")
            if option in REPLAY_ONLY:
                fail(
                    f"{option} applies to `passhat replay` (production tickets from the store), not to "
                    "`passhat bench` (a shipped domain's generated scenarios, no store)"
                )
            if option is not None:
                fail(unknown_option("passhat bench", option, getattr(exc, "possibilities", None)))
            raise


@dataclass(frozen=True)
class BenchOptions:
    """What `passhat bench` runs: the domains, the scenarios per task type, k, the agent and where trials run."""

    domains: tuple[str, ...]
    task_types: tuple[str, ...] = ()  # none: every task type
    scenarios: int = 20
    k: int = 5
    agent: str = "reference"
    customer: str = "scripted"
    flaws: str = "default"
    parallel: int = 8
    transport: str = "direct"
    model: str | None = None
    base_url: str | None = None
    customer_model: str | None = None  # the customer's, when not the agent's (None: model)
    customer_base_url: str | None = None  # the customer's server, when not the agent's (None: base_url)
    timeout: float | None = None  # seconds a model request or an agent service's turn may take (None: 120)
    seed: int = 0
    size: str = "small"
    send_traces: bool = False
    price_in: float | None = None
    price_out: float | None = None
    stop_early: bool = False
    min_trials: int = 2
    executor: str = "local"
    ray_address: str = "local"
    ray_workers: int = 0


def parse_domains(text: str | None) -> tuple[str, ...]:
    """`retail`, `retail,travel` or `all`: the installed domains named, in the order given."""
    from passhat.sandbox import available_domains

    installed = available_domains()
    if text is None or not text.strip():
        fail(f"give --domain: one of {', '.join(installed)}, several (retail,travel) or all")
    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["all"]:
        return tuple(installed)
    if "all" in names:
        fail("--domain all stands alone: give all, or a list of domains such as retail,travel")
    unknown = [name for name in names if name not in installed]
    if unknown:
        fail(f"no sandbox domain named {unknown[0]!r}; installed: {', '.join(installed)}")
    return tuple(dict.fromkeys(names))


def summarize(
    results: list[TrialResult],
    k: int,
    *,
    price_in: float | None = None,
    price_out: float | None = None,
    min_trials: int | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]:
    """Per task type (with tokens and cost), per domain and overall: pass@1, pass@k, pass^k with intervals.

    `price_in` / `price_out` are the model's prices in USD per million input / output tokens. ``min_trials``
    (curtailed design) takes pass@1 from each ticket's first ``min_trials`` attempts.
    """
    tokens: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for result in results:
        key = (result.domain, result.task_type)
        tokens[key][0] += result.usage.input_tokens
        tokens[key][1] += result.usage.output_tokens
    rows, domains, overall = trial_table_rows(list(results), k, min_trials=min_trials)
    for row in rows:
        used = tokens[(row["domain"], row["task_type"])]
        row.update({"input_tokens": used[0], "output_tokens": used[1]})
        if price_in is not None and price_out is not None:
            row["cost_usd"] = round((used[0] * price_in + used[1] * price_out) / 1e6, 6)
    return rows, domains, overall


def _check(options: BenchOptions) -> None:
    from passhat.sandbox import TRANSPORTS

    if options.scenarios < 1 or options.k < 1 or options.parallel < 1 or options.min_trials < 1:
        fail("--scenarios, --k, --parallel and --min-trials must be at least 1")
    price_in, price_out = options.price_in, options.price_out
    if (price_in is None) != (price_out is None) or min(price_in or 0.0, price_out or 0.0) < 0:
        fail("give both --price-in and --price-out (USD per million tokens, not negative)")
    if options.flaws not in ("off", "default"):
        fail(f"--flaws must be off or default, got {options.flaws!r}")
    if options.transport not in TRANSPORTS:
        fail(f"--transport must be one of {', '.join(TRANSPORTS)}, got {options.transport!r}")
    if options.executor not in ("local", "ray"):
        fail(f"--executor must be local or ray, got {options.executor!r}")
    if options.executor == "ray" and options.customer != "scripted":
        fail(f"--executor ray runs the scripted customer on its workers: leave out --customer {options.customer}")


def _run(options: BenchOptions) -> tuple[list[TrialResult], int]:
    """Every chosen domain's scenarios, k trials each: the results, and the trial runs Ray workers lost."""
    from passhat.sandbox import Curtailment, FlawConfig, RunConfig, Sandbox, run_trials
    from passhat.sandbox.agents import resolve_agent, resolve_customer

    curtailment = Curtailment(min_trials=min(options.min_trials, options.k)) if options.stop_early else None
    agent = resolve_agent(
        options.agent,
        flaws=FlawConfig.default() if options.flaws == "default" else FlawConfig.off(),
        model=options.model,
        base_url=options.base_url,
        timeout=options.timeout,
    )
    customer = resolve_customer(
        options.customer,
        model=options.customer_model or options.model,
        base_url=options.customer_base_url or options.base_url,
        timeout=options.timeout,
    )
    # With --send-traces every trial goes to the collector (PASSHAT_ENDPOINT) as a sandbox ticket.
    runtime = passhat.configure(source="sandbox", make_global=False) if options.send_traces else None
    config = RunConfig(transport=options.transport, parallel=options.parallel)  # type: ignore[arg-type]
    results: list[TrialResult] = []
    lost = 0
    sandboxes: list[Sandbox] = []
    try:
        try:
            for name in options.domains:
                sandboxes.append(Sandbox(name, seed=options.seed, size=options.size))
            chosen = _scenarios_chosen(sandboxes, options)
            if options.executor == "ray":
                results, lost = _run_on_ray(options, chosen, agent, config, runtime, curtailment)
            else:
                for sandbox, scenarios in chosen:
                    results += asyncio.run(
                        run_trials(sandbox, scenarios, options.k, agent, customer_factory=customer, config=config,
                                   runtime=runtime, curtailment=curtailment)
                    )  # fmt: skip
        finally:
            for sandbox in sandboxes:
                sandbox.close()
    finally:
        if runtime is not None:
            runtime.flush()
            runtime.shutdown()
    return results, lost


def _scenarios_chosen(sandboxes: list[Sandbox], options: BenchOptions) -> list[tuple[Sandbox, list[Scenario]]]:
    """Each domain's scenarios of the task types asked for (all when none); `DomainError` naming a task type no
    domain has, with the closest one."""
    from passhat.sandbox import DomainError

    known = sorted({name for sandbox in sandboxes for name in sandbox.domain.task_types})
    for name in options.task_types:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise DomainError(
                f"no task type {name!r} in {', '.join(options.domains)}: "
                f"{hint}`passhat sandbox list` shows each domain's task types"
            )
    chosen: list[tuple[Sandbox, list[Scenario]]] = []
    for sandbox in sandboxes:
        wanted = [t for t in options.task_types if t in sandbox.domain.task_types] if options.task_types else [None]
        scenarios = [s for name in wanted for s in sandbox.scenarios(name, options.scenarios, seed=options.seed)]
        if scenarios:
            chosen.append((sandbox, scenarios))
    return chosen


def _run_on_ray(
    options: BenchOptions, chosen: list[Any], agent: Any, config: Any, runtime: Any, curtailment: Any
) -> tuple[list[TrialResult], int]:
    from passhat.collector.replay import ExecutorError, ReplaySettings, run_generated_on_ray

    settings = ReplaySettings(
        k=options.k, parallel=options.parallel, seed=options.seed, size=options.size, executor="ray",
        ray_address=options.ray_address, ray_workers=options.ray_workers,
    )  # fmt: skip
    domains = {sandbox.domain.name: sandbox.domain for sandbox, _ in chosen}
    scenarios = [scenario for _, found in chosen for scenario in found]
    try:
        done = asyncio.run(
            run_generated_on_ray(domains, scenarios, options.k, agent, settings=settings, config=config,
                                 runtime=runtime, curtailment=curtailment)
        )  # fmt: skip
    except ExecutorError as exc:
        fail(str(exc))
    except ImportError as exc:  # Ray is not installed
        fail(str(exc))
    return done.results, done.infra_retries


def run_bench(options: BenchOptions, *, as_json: bool) -> None:
    """Run the benchmark and print its per-task-type and per-domain tables (or JSON)."""
    from passhat.collector.reliability import agent_trials, harness_failures
    from passhat.sandbox import DomainError, ModelServerUnusableError

    _check(options)
    try:
        results, lost = _run(options)
    except ModelServerUnusableError as exc:  # a dead model server: stopped early, with what to do
        fail(str(exc), code=1)
    except (DomainError, passhat.ConfigurationError) as exc:
        fail(str(exc))
    k = options.k
    first = min(options.min_trials, k) if options.stop_early else None
    rows, domains, overall = summarize(
        results, k, price_in=options.price_in, price_out=options.price_out, min_trials=first
    )
    reference = options.agent == "reference"
    label = "reference (offline simulation)" if reference else options.agent
    broken = [group.to_dict() for group in harness_failures(results)]
    retries = sum(len(result.harness_retries) for result in results)
    settled = len(agent_trials(results))
    if as_json:
        print_harness_failures(broken, as_json=True)
        design = {"name": "fixed", "k": k} if first is None else {"name": "curtailed", "k": k, "min_trials": first}
        flaw = {"flaws": options.flaws} if reference else {}
        emit_json(
            {
                "task_types": rows, "domains": domains, "overall": overall, "k": k, "agent": label, **flaw,
                "design": design, "trials": len(results), "executor": options.executor,
                "harness_failures": broken, "harness_retries": retries, "infra_retries": lost,
            }
        )  # fmt: skip
        fail_if_nothing_settled("passhat bench", len(results), settled, broken, stored=False)
        return
    # Flaws are a setting of the reference simulation only: another agent's title does not mention them.
    flaw_text = f", flaws {options.flaws}" if reference else ""
    where = ",".join(options.domains)
    if rows or not broken:
        print_trial_table(f"{where}: {len(results)} trials, k={k}, agent {label}{flaw_text}", rows, k)
    else:
        console.print(f"{where}: no trial speaks about the agent: every one was broken by the harness (below).")
    print_domain_table(domains, overall, k)
    print_design_notes(rows, len(results), k, first)
    if retries:
        console.print(f"{retries} run(s) of trials the harness broke were retried (infrastructure, not the agent).")
    if lost:
        console.print(f"{lost} run(s) of trials were lost to a Ray worker that died and run again (never the agent's).")
    print_harness_failures(broken, as_json=False)
    fail_if_nothing_settled("passhat bench", len(results), settled, broken, stored=False)


def bench(
    domain: DomainOption = None,
    task_type: TaskTypeOption = None,
    scenarios: ScenariosOption = 20,
    k: KOption = None,
    agent: AgentOption = None,
    customer: CustomerOption = "scripted",
    flaws: FlawsOption = None,
    parallel: ParallelOption = None,
    transport: TransportOption = "direct",
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    customer_model: CustomerModelOption = None,
    customer_base_url: CustomerBaseUrlOption = None,
    timeout: TimeoutOption = None,
    seed: SeedOption = 0,
    size: SizeOption = "small",
    send_traces: SendTracesOption = False,
    price_in: PriceInOption = None,
    price_out: PriceOutOption = None,
    stop_early: StopEarlyOption = None,
    min_trials: MinTrialsOption = None,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    ray_workers: RayWorkersOption = None,
    as_json: JsonOption = False,
) -> None:
    """Benchmark an agent on scenarios shipped domains generate: k trials each, pass@1, pass@k and pass^k.

    Per task type and per domain (with intervals and counts) and overall; no store needed. The production loop
    on your own tickets is `passhat replay --period`.
    """
    chosen_agent = agent or "reference"
    wrong_model = check_model_options(chosen_agent, model=model, base_url=base_url, customer=customer)
    if wrong_model is not None:
        fail(wrong_model)
    wrong_customer = check_customer_options(
        chosen_agent, customer, model=model, customer_model=customer_model, customer_base_url=customer_base_url
    )
    if wrong_customer is not None:
        fail(wrong_customer)
    wrong_timeout = check_timeout(chosen_agent, customer, timeout)
    if wrong_timeout is not None:
        fail(wrong_timeout)
    if chosen_agent != "reference" and flaws is not None:
        fail(f"--flaws applies to the reference agent only (its simulated failures), not to {chosen_agent}")
    chosen_executor = executor or "local"
    if chosen_executor != "ray" and (ray_address is not None or ray_workers is not None):
        fail("--ray-address and --ray-workers apply to --executor ray")
    run_bench(
        BenchOptions(
            domains=parse_domains(domain), task_types=task_types_of(task_type), scenarios=scenarios,
            k=5 if k is None else k, agent=chosen_agent, customer=customer,
            flaws=flaws or ("default" if chosen_agent == "reference" else "off"),
            parallel=8 if parallel is None else parallel, transport=transport, model=model, base_url=base_url,
            customer_model=customer_model, customer_base_url=customer_base_url, timeout=timeout, seed=seed,
            size=size, send_traces=send_traces, price_in=price_in, price_out=price_out,
            stop_early=bool(stop_early), min_trials=2 if min_trials is None else min_trials,
            executor=chosen_executor, ray_address=ray_address or "local", ray_workers=ray_workers or 0,
        ),
        as_json=as_json,
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add `passhat bench` to the app."""
    app.command("bench", cls=BenchCommand)(bench)


def bench_command() -> TyperCommand:
    """`passhat bench` as a click command of its own (the deprecated `passhat replay --domain` runs it)."""
    solo = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    register(solo)
    command = typer.main.get_command(solo)
    assert isinstance(command, BenchCommand)
    return command
