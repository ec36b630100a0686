"""The options several commands share, declared once: each is an annotated type a command's parameter takes.

`passhat bench` and `passhat replay` share the trial options (`--task-type`, `--k`, `--agent`, `--parallel`,
`--stop-early`, `--min-trials`, the executor's); every command that prints a table takes `--json`; the
commands reading the store take `--config`, `--store` and `--project`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer

from passhat.collector.cli._console import fail

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (for machines) instead of tables.")]

ConfigPath = Annotated[
    Path | None, typer.Option("--config", help="passhat.toml [env PASSHAT_CONFIG; ./passhat.toml if present].")
]
StoreOption = Annotated[str | None, typer.Option("--store", help="Store URL (overrides the config's).")]
ProjectOption = Annotated[str | None, typer.Option("--project", help="Project (overrides the config's).")]

TaskTypeOption = Annotated[
    list[str] | None,
    typer.Option("--task-type", help="Task types: repeat the option or separate them with commas (default: all)."),
]


def task_types_of(values: list[str] | None) -> tuple[str, ...]:
    """The task types `--task-type` names, once each in the order given (repeated, or separated by commas)."""
    names: list[str] = []
    for value in values or ():
        for name in value.split(","):
            name = name.strip()
            if not name:
                raise typer.BadParameter(
                    f"{value!r} holds an empty name: write --task-type a,b", param_hint="--task-type"
                )
            if name not in names:
                names.append(name)
    return tuple(names)


KOption = Annotated[int | None, typer.Option("--k", help="pass^k's k [bench: 5; replay: the config's replay.k].")]
ParallelOption = Annotated[
    int | None, typer.Option("--parallel", help="Trials running at once [bench: 8; replay: replay.concurrency].")
]
AgentOption = Annotated[
    str | None,
    typer.Option(
        "--agent",
        help="reference, anthropic, openai, an agent service's http(s):// URL, or module:function "
        "[bench: reference; replay: the config's agent.factory].",
    ),
]
StopEarlyOption = Annotated[
    bool | None,
    typer.Option(
        "--stop-early/--no-stop-early",
        help="Curtailed design: stop a ticket's trials once one passed and one failed [replay: the config's].",
    ),
]
MinTrialsOption = Annotated[
    int | None, typer.Option("--min-trials", help="Attempts every ticket runs under --stop-early; pass@1 uses them.")
]
ExecutorOption = Annotated[
    str | None, typer.Option("--executor", help="Where trials run: local or ray [bench: local; replay: the config's].")
]
RayAddressOption = Annotated[
    str | None,
    typer.Option("--ray-address", help="--executor ray: a cluster's address, or local [default: replay.ray_address]."),
]
RayWorkersOption = Annotated[
    int | None,
    typer.Option(
        "--ray-workers", min=0, help="--executor ray: worker actors (0: one per CPU) [default: replay.ray_workers]."
    ),
]

# The options of the generated-scenario benchmark (`passhat bench`; also taken, deprecated, by `replay --domain`).
DomainOption = Annotated[
    str | None,
    typer.Option(
        "--domain",
        "--domains",
        help="Shipped domains whose generated scenarios to run: one (retail), several (retail,travel) or all.",
    ),
]
ScenariosOption = Annotated[int, typer.Option("--scenarios", help="Scenarios (tickets) per task type.")]
CustomerOption = Annotated[str, typer.Option("--customer", help="scripted, anthropic or openai.")]
FlawsOption = Annotated[
    str | None,
    typer.Option("--flaws", help="Reference agent failure injection: off or default [default: default]."),
]
TransportOption = Annotated[
    str,
    typer.Option(
        "--transport",
        help="How trials reach their tools: direct (in process, no protocol), memory, stdio or http (MCP).",
    ),
]
ModelOption = Annotated[str | None, typer.Option("--model", help="Model of the anthropic or openai agent/customer.")]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="Server of the openai (Chat Completions: vLLM, Ollama, ...) or anthropic agent/customer "
        "[default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL].",
    ),
]
CustomerModelOption = Annotated[
    str | None,
    typer.Option(
        "--customer-model", help="Model of the anthropic or openai customer, when not the agent's [default: --model]."
    ),
]
CustomerBaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--customer-base-url",
        help="Server of the anthropic or openai customer, when not the agent's [default: --base-url].",
    ),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help="Seconds one request to the model server of an anthropic or openai agent/customer, or one turn of an "
        "agent service, may take [default: 120].",
    ),
]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the data and the scenario draw.")]
SizeOption = Annotated[str, typer.Option("--size", help="Seed size of the domain's data: small or default.")]
SendTracesOption = Annotated[bool, typer.Option("--send-traces", help="Export each trial's trace to PASSHAT_ENDPOINT.")]
PriceInOption = Annotated[float | None, typer.Option("--price-in", help="USD per million input tokens, for the cost.")]
PriceOutOption = Annotated[
    float | None, typer.Option("--price-out", help="USD per million output tokens, for the cost.")
]

BENCH_ONLY = (
    "--domain", "--domains", "--scenarios", "--customer", "--flaws", "--transport", "--model", "--base-url",
    "--seed", "--size", "--send-traces", "--price-in", "--price-out", "--timeout", "--customer-model",
    "--customer-base-url",
)  # fmt: skip
"""Options of `passhat bench` that `passhat replay` (production tickets) does not take."""

REPLAY_ONLY = (
    "--period", "--since", "--config", "--store", "--project", "--tickets-per-task-type", "--agent-version",
    "--fresh", "--compare-to", "--workers",
)  # fmt: skip
"""Options of `passhat replay` (production tickets from the store) that `passhat bench` does not take."""


MODEL_AGENTS = ("anthropic", "openai")
"""The agents (and customers) that call a model server: what --model and --base-url apply to."""


def _agent_kind(agent: str) -> str:
    if agent == "reference":
        return "the reference agent (an offline simulation: it calls no model)"
    if "://" in agent:
        return f"an agent service ({agent}: it calls its own model, configured in the service)"
    return f"an agent factory ({agent}: it builds its own model, configured in your code)"


def check_model_options(
    agent: str, *, model: str | None, base_url: str | None, customer: str | None = None
) -> str | None:
    """The error for --model / --base-url given while neither the agent nor the customer calls a model server
    (they would be ignored), else None."""
    given = [name for name, value in (("--model", model), ("--base-url", base_url)) if value is not None]
    if not given or agent in MODEL_AGENTS or customer in MODEL_AGENTS:
        return None
    also = " or --customer anthropic|openai" if customer is not None else ""
    named, verb = " and ".join(given), "apply" if len(given) > 1 else "applies"
    return (
        f"{named} {verb} to the anthropic and openai agents (--agent anthropic|openai{also}), not to "
        f"{_agent_kind(agent)}: leave {named} out, or choose a model agent"
    )


def check_customer_options(
    agent: str, customer: str, *, model: str | None, customer_model: str | None, customer_base_url: str | None
) -> str | None:
    """The error for --customer-model / --customer-base-url given with a customer that calls no model server, or
    with --model while the agent calls none either (--model would then name nothing), else None."""
    given = [
        name for name, value in (("--customer-model", customer_model), ("--customer-base-url", customer_base_url))
        if value is not None
    ]  # fmt: skip
    if not given:
        return None
    named = " and ".join(given)
    if customer not in MODEL_AGENTS:
        return (
            f"{named} {'apply' if len(given) > 1 else 'applies'} to a model customer (--customer anthropic|openai), "
            f"not to the {customer} customer: leave {named} out, or choose a model customer"
        )
    if customer_model is not None and model is not None and agent not in MODEL_AGENTS:
        return (
            f"--model would be the agent's model, and {_agent_kind(agent)} takes none; the customer's model is "
            "--customer-model: leave --model out"
        )
    return None


def check_timeout(agent: str, customer: str, timeout: float | None) -> str | None:
    """The error for a --timeout that is not a positive number of seconds, or that nothing would use (neither the
    agent nor the customer calls a model server, and the agent is no agent service), else None."""
    if timeout is None:
        return None
    if not 0 < timeout < math.inf:
        return f"--timeout is the seconds one model request or agent turn may take, a number above 0; got {timeout:g}"
    if agent in MODEL_AGENTS or customer in MODEL_AGENTS or "://" in agent:
        return None
    return (
        "--timeout applies to the anthropic and openai agents and customers (their model server's requests) and to "
        f"an agent service (its turns), not to {_agent_kind(agent)} with the {customer} customer: leave it out"
    )


def refused_option(exc: Exception, command: str) -> str | None:
    """The option a command's parser refused as one it does not take (click's NoSuchOption), for the command to
    say where it belongs; None for any other usage error. An option given last without its value ("Option '--k'
    requires an argument") ends here, said so: it was told "has no option --k"."""
    given = getattr(exc, "option_name", None)
    kind = type(exc).__name__
    if kind == "BadOptionUsage" and given:
        fail(f"{given} needs a value after it: `{command} --help` says what each option takes")
    return given if kind == "NoSuchOption" else None


def unknown_option(command: str, option: str, possibilities: list[str] | None) -> str:
    """The error for an option ``command`` does not take: which, what was perhaps meant, where the list is."""
    meant = f" (did you mean {' or '.join(sorted(possibilities))}?)" if possibilities else ""
    return f"`{command}` has no option {option}{meant}: `{command} --help` lists its options"
