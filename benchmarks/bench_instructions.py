"""Benchmark: the instructions one sandbox trial executes, counted by valgrind (callgrind), untraced and traced.

CPU seconds on a shared machine drift by 10-40% between runs of the same code (here, one replay worker's untraced
CPU a trial: 6.0 ms in one run, 8.3 ms in another within the hour), which hides a change of a few percent. An
instruction count hardly moves with the machine's load: two runs of this benchmark at once on the same code
counted 16.27 and 16.40 million instructions a retail trial (0.8% apart; the children run with a fixed hash
seed, and what remains is the trials' own timing: asyncio's turns, the collector's).

It runs the ReferenceAgent's trials (an offline simulation) on `--scenarios` scenarios per task type of
`--domain`, in a child Python under callgrind, twice: at k = `--k-low` and at k = `--k-high` (both children at
once, one per core). Start-up, imports and the domain's template are the same in both, so the difference in
instructions over the difference in trials is what a trial costs.

Modes (``--modes``, comma-separated):
- ``untraced``: trials as a replay runs them untraced (in process, as in a worker);
- ``traced``: each trial traced as a replay's worker traces it (a runtime capturing its spans, with the default
  redaction), its spans then turned into the SQL store's rows (`prepare_rows`), as the workers do when a traced
  replay has a worker on every core.

Prints one JSON line: ``instructions_per_trial_m`` (millions a trial, per mode), the trials counted, and
``traced_vs_untraced`` when both ran. Beside an earlier commit (an instruction ratio, not a seconds one):
``.venv/bin/python benchmarks/bench_vs_commit.py --commit C --rounds 1 --figure instructions_per_trial_m.untraced
-- benchmarks/bench_instructions.py --modes untraced``. A change under about 1% is within the count's own spread.

What it does not see: the kernel's work for the process (page faults, system calls) and the time an instruction
waits on memory. A change that saves those shows in CPU seconds and not here: against b3cb3b2, a retail trial
executes 0.56 times the instructions (30.2 million then, 16.8 now) while it takes about 0.4 times the CPU
seconds (docs/loop.md: its trials were copying a database file and preparing every statement on a new
connection). Instructions tell whether a change did less work; CPU seconds, side by side, what it cost.

Valgrind runs Python about 50 times slower: the default (retail, one scenario per task type, k = 1 and 4) takes
about 3 minutes a mode on 2 cores. Needs valgrind (Debian: ``apt-get install valgrind``).

Run: .venv/bin/python benchmarks/bench_instructions.py [--domain retail] [--scenarios 1] [--k-low 1] [--k-high 4]
[--modes untraced,traced]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

MODES = ("untraced", "traced")
_COLLECTED = re.compile(r"Collected : (\d+)")


def run_child(domain: str, scenarios: int, k: int, mode: str) -> int:
    """The trials themselves (in the child valgrind runs): returns how many ran."""
    from passhat.sandbox import FlawConfig, ReferenceAgent, RunConfig, Sandbox, run_trials

    with Sandbox(domain) as sandbox:
        picked = sandbox.scenarios(count=scenarios)
        factory = ReferenceAgent.factory(FlawConfig.default())
        config = RunConfig(parallel=8)
        if mode == "untraced":  # only what every release has: an earlier commit's untraced trials count too
            return len(asyncio.run(run_trials(sandbox, picked, k, factory, config=config)))
        import passhat
        from passhat.collector.ingest._store_export import prepare_rows
        from passhat.collector.replay._relay import RuntimeSettings, SpanCapture
        from passhat.collector.store.sql._ingest import built_rows

        capture = SpanCapture()
        settings = RuntimeSettings.of(passhat.configure(make_global=False, send=False, source="sandbox"))
        runtime = settings.runtime(capture)
        results = asyncio.run(run_trials(sandbox, picked, k, factory, config=config, runtime=runtime))
        for result in results:
            spans = capture.take_spans(result.trace_id)
            prepare_rows(spans, max_attribute_bytes=65536, project="bench", build=built_rows)
    return len(results)


def counted(valgrind: str, domain: str, scenarios: int, ks: tuple[int, int], mode: str) -> tuple[int, float]:
    """(trials between the two runs, instructions a trial) for one mode: both runs at once."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # set and dict orders, so the work itself, the same every run
    with tempfile.TemporaryDirectory(prefix="passhat-instructions-") as folder:
        children = []
        for k in ks:
            command = [
                valgrind, "--tool=callgrind", f"--callgrind-out-file={Path(folder) / f'out.{k}'}",
                sys.executable, __file__, "--child", mode, "--domain", domain, "--scenarios", str(scenarios),
                "--k-low", str(k),
            ]  # fmt: skip
            children.append(
                subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            )
        found: list[tuple[int, int]] = []
        for child in children:
            out, err = child.communicate()
            match = _COLLECTED.search(err)
            if child.returncode != 0 or match is None or not out.strip().isdigit():
                raise SystemExit(f"bench_instructions: a child run failed (exit {child.returncode}):\n{err[-2000:]}")
            found.append((int(out.strip()), int(match.group(1))))
    (low_trials, low), (high_trials, high) = found
    trials = high_trials - low_trials
    return trials, (high - low) / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", default="retail")
    parser.add_argument("--scenarios", type=int, default=1, help="scenarios per task type")
    parser.add_argument("--k-low", type=int, default=1, help="trials per scenario in the first run")
    parser.add_argument("--k-high", type=int, default=4, help="trials per scenario in the second run")
    parser.add_argument("--modes", default="untraced,traced", help="untraced, traced, or both (comma-separated)")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(run_child(args.domain, args.scenarios, args.k_low, args.child))
        return
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    unknown = [mode for mode in modes if mode not in MODES]
    if not modes or unknown:
        parser.error(f"--modes takes {' and '.join(MODES)} (comma-separated), not {args.modes!r}")
    if not 1 <= args.k_low < args.k_high:
        parser.error(f"--k-low must be at least 1 and below --k-high (got {args.k_low} and {args.k_high})")
    if args.scenarios < 1:
        parser.error(f"--scenarios must be at least 1, not {args.scenarios}")
    from passhat.sandbox import DomainError, load_domain

    try:
        load_domain(args.domain)
    except DomainError as exc:
        parser.error(str(exc))
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        parser.error("valgrind is not installed (Debian: apt-get install valgrind)")
    line: dict[str, Any] = {"domain": args.domain, "scenarios_per_task_type": args.scenarios}
    per_trial: dict[str, float] = {}
    trials: dict[str, int] = {}
    for mode in modes:
        trials[mode], per_trial[mode] = counted(valgrind, args.domain, args.scenarios, (args.k_low, args.k_high), mode)
    line["instructions_per_trial_m"] = {mode: round(value / 1e6, 3) for mode, value in per_trial.items()}
    line["trials_counted"] = trials
    if len(per_trial) == 2:
        line["traced_vs_untraced"] = round(per_trial["traced"] / per_trial["untraced"], 4)
    print(json.dumps(line))


if __name__ == "__main__":
    main()
