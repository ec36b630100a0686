"""How well the rules extractor infers withheld intents from production traces, per shipped domain.

Per domain: ``--per-type`` scenarios of every task type are served once by the ReferenceAgent with its per-step
flaws on (at ``--flaw-scale`` times the shipped rates, so some production writes go to the wrong row), traced
exactly as an instrumented production agent with content capture on (customer messages, before-images of the
rows it changed; personal values pseudonymised) into a SQLite store. Each ticket is then read back from the
store *without its intent* and the rules extractor infers one from the customer's words and the ticket's starting
state. Reported per domain:

- field-level exact: of the fields of the tickets it inferred, the share equal to the true intent's;
- ticket-level exact among inferred: tickets whose whole intent is right, of those it inferred (goal >= 95%);
- wrong: tickets inferred with a wrong intent, of all tickets (goal <= 1%);
- not replayable: tickets left without an intent (no evidence, or two candidates), of all (goal <= 10%).

A field counts as right when it equals the scenario's value or the value the SDK recorded for it (the
pseudonym of an email, say): both name the same thing.

    .venv/bin/python benchmarks/bench_intent.py                      # every shipped domain, 8 per task type
    .venv/bin/python benchmarks/bench_intent.py --domains retail --per-type 4
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import passhat
from passhat.collector.ingest import StoreSpanExporter
from passhat.collector.reliability import wilson_interval
from passhat.collector.replay import IntentInference, SandboxPool, production_attempt, row_images
from passhat.collector.store import Store, open_store
from passhat.sandbox import FlawConfig, ReferenceAgent, RunConfig, Sandbox, Scenario, load_domain, run_trial
from passhat.sandbox.agents import DEFAULT_RATES
from passhat.sandbox.domain import leaves
from passhat.sandbox.inference import IntentNotInferredError

DOMAINS = ("retail", "travel", "insurance", "banking", "consulting")
PROJECT = "bench"


def _value(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _fields(intent: dict[str, Any]) -> Counter[tuple[str, str]]:
    return Counter((path, _value(value)) for path, value in leaves(intent))


async def _serve(
    store: Store, domain: str, per_type: int, flaw_scale: float, seed: int, pseudonymise: bool
) -> tuple[list[Scenario], dict[str, str]]:
    """Production traffic: each scenario handled once by the flawed ReferenceAgent, traced into ``store``;
    returns the scenarios and, per ticket, the flaw the agent injected."""
    runtime = passhat.configure(
        make_global=False, source="production", send=False, capture_content=True, service_name="bench-intent",
        pseudonym_key="bench-intent-pseudonym-key", redact=pseudonymise,
        span_processors=[SimpleSpanProcessor(StoreSpanExporter(store, PROJECT))],
    )  # fmt: skip
    flaws = FlawConfig(rates={mode: rate * flaw_scale for mode, rate in DEFAULT_RATES.items()})
    served: list[Scenario] = []
    flawed: dict[str, str] = {}
    with Sandbox(domain, seed=seed) as sandbox:
        for scenario in sandbox.scenarios(None, per_type, seed=seed):
            ticket_id = f"{domain}-{len(served):05d}"
            scenario = dataclasses.replace(scenario, scenario_id=ticket_id)
            result = await run_trial(
                sandbox, scenario, 0, ReferenceAgent.factory(flaws), config=RunConfig(), runtime=runtime,
                ticket_id=ticket_id, production=True,
            )  # fmt: skip
            served.append(scenario)
            if result.injected:
                flawed[ticket_id] = result.injected
    runtime.shutdown()
    return served, flawed


def measure(
    domain: str, per_type: int, flaw_scale: float, seed: int, *, pseudonymise: bool = False, reasons_shown: int = 5
) -> dict[str, Any]:
    """Serve, store, infer and score one domain."""
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'bench.db'}")
        started = time.perf_counter()
        served, flawed = asyncio.run(_serve(store, domain, per_type, flaw_scale, seed, pseudonymise))
        serve_s = time.perf_counter() - started
        pool = SandboxPool(seed=seed)
        inference = IntentInference("rules", pool.for_ticket, pool.release)
        loaded = load_domain(domain)
        exact = wrong = unreplayable = fields_right = fields_total = 0
        wrong_entity = Counter[str]()
        reasons: Counter[str] = Counter()
        started = time.perf_counter()
        for scenario in served:
            detail = store.get_ticket(PROJECT, scenario.scenario_id, source="production")
            attempt = production_attempt(detail) if detail is not None else None
            if detail is None or attempt is None:
                raise RuntimeError(f"ticket {scenario.scenario_id} never reached the store")
            recorded = dict(attempt.intent or {})
            withheld = dataclasses.replace(attempt, intent=None)
            sibling_written = flawed.get(scenario.scenario_id) == "wrong_entity"
            try:
                found = inference.infer(loaded, scenario.task_type, withheld, detail, row_images(detail))
            except IntentNotInferredError as exc:
                unreplayable += 1
                wrong_entity["not replayable"] += sibling_written
                reasons[f"{scenario.task_type}: {exc.reason.split(':')[0][:70]}"] += 1
                continue
            truth, seen = _fields(dict(scenario.intent)), _fields(recorded)
            inferred = _fields(found.intent)
            right = sum(min(n, max(truth[key], seen[key])) for key, n in inferred.items())
            fields_right += right
            fields_total += max(sum(truth.values()), sum(inferred.values()))
            if right == sum(truth.values()) == sum(inferred.values()):
                exact += 1
                wrong_entity["inferred right"] += sibling_written
            else:
                wrong += 1
                wrong_entity["inferred wrong"] += sibling_written
        infer_s = time.perf_counter() - started
        pool.close()
        store.close()
    total = len(served)
    inferred_n = total - unreplayable

    def interval(count: int, of: int) -> list[float]:
        return [round(bound, 4) for bound in wilson_interval(count, of)] if of else [0.0, 1.0]

    return {
        "domain": domain,
        "tickets": total,
        "inferred": inferred_n,
        "field_exact": fields_right / fields_total if fields_total else 0.0,
        "ticket_exact_among_inferred": exact / inferred_n if inferred_n else 0.0,
        "wrong": wrong / total,
        "not_replayable": unreplayable / total,
        "intervals_95": {
            "ticket_exact_among_inferred": interval(exact, inferred_n),
            "wrong": interval(wrong, total),
            "not_replayable": interval(unreplayable, total),
        },
        "wrong_entity_writes": {"tickets": sum(1 for f in flawed.values() if f == "wrong_entity"), **wrong_entity},
        "reasons": dict(reasons.most_common(reasons_shown)),
        "serve_s": round(serve_s, 1),
        "infer_ms_per_ticket": round(1000 * infer_s / max(total, 1), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", nargs="*", default=list(DOMAINS))
    parser.add_argument("--per-type", type=int, default=8, help="scenarios per task type")
    parser.add_argument("--flaw-scale", type=float, default=1.0, help="times the ReferenceAgent's shipped rates")
    parser.add_argument("--pseudonymise", action="store_true", help="pseudonymise personal values (see the module doc)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reasons", type=int, default=5, help="most common reasons to show per domain")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [
        measure(
            domain,
            args.per_type,
            args.flaw_scale,
            args.seed,
            pseudonymise=args.pseudonymise,
            reasons_shown=args.reasons,
        )
        for domain in args.domains
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'domain':<11} {'tickets':>7} {'field exact':>11} {'exact/inferred':>14} {'wrong':>6} {'not repl.':>9}")
    for row in rows:
        print(
            f"{row['domain']:<11} {row['tickets']:>7} {row['field_exact']:>11.1%} "
            f"{row['ticket_exact_among_inferred']:>14.1%} {row['wrong']:>6.1%} {row['not_replayable']:>9.1%}"
        )
        bounds = {name: f"[{low:.1%}, {high:.1%}]" for name, (low, high) in row["intervals_95"].items()}
        print(f"    95% intervals: {', '.join(f'{name} {text}' for name, text in bounds.items())}")
        for reason, count in row["reasons"].items():
            print(f"    {count:>4}  {reason}")
        print(f"    production writes to a sibling row (wrong_entity): {row['wrong_entity_writes']}")
        print(f"    served in {row['serve_s']} s; inference {row['infer_ms_per_ticket']} ms per ticket")


if __name__ == "__main__":
    main()
