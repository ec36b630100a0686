"""Benchmark: many trials in flight on the local executor, with a slow model (a SIMULATION: 0.5 s of wall time a turn).

The agent is the offline ReferenceAgent behind a wait of ``--turn-seconds`` before each of its turns, as an agent
waiting on a model API is (it waits, it does not compute). A week of simulated retail production tickets is put in
a SQLite store (as benchmarks/bench_workers.py builds it), then replayed through the real local executor (worker
processes, one per core; rows and spans streamed back to the driver, which stores them) with each ``--levels``
number of trials in flight (``ReplaySettings.parallel``), about ``--trials-per-slot`` trials per slot in flight.

Per level it prints one JSON line:

- ``trials_per_s``: trials over the replay's wall time (workers started before the clock starts);
- ``ideal_per_s``: trials in flight / a trial's model time (its agent turns × the turn's wait, mean over the run);
- ``cpu_ceiling_per_s``: cores / CPU-seconds a trial (driver + workers, measured in the same run, less the
  benchmark's own sampling thread: ``sampler_cpu_s``);
- ``share``: trials_per_s / min(ideal, ceiling) (the goal is >= 0.9);
- ``steady_per_s`` / ``steady_share``: the same over the middle half of the replay's wall time only (trials that
  finished between a quarter and three quarters of it), without the ramps at each end: the first trials all
  start at once, and the last ones finish while the rest of the slots are empty;
- ``steady_cpu_busy``: the share of the cores the driver and workers used over that middle half (their CPU
  seconds sampled every 0.25 s), ``steady_cpu_ms_per_trial`` their CPU then over the trials that finished then,
  ``steady_cpu_ceiling_per_s`` the ceiling that sets, and ``steady_share_of_own_ceiling`` the middle half's
  throughput against min(ideal, that ceiling): a trial can cost more CPU with every slot full than over the
  whole run, and the whole run's ceiling then overstates what the middle half could reach;
- ``peak_rss_mb`` / ``peak_pss_mb``: the peak over the replay of the driver's and its workers' resident memory
  summed (RSS counts pages the forked processes share once per process; PSS splits them), and the idle baseline
  (workers started, nothing in flight) they are measured against;
- ``mb_per_trial_in_flight``: (peak PSS - idle PSS) / trials in flight (the goal is <= 0.5).

On a shared machine the CPU ceiling is what this process got, not the machine's: other load lowers both.

By default every turn waits exactly ``--turn-seconds``, so trials started together stay in lockstep: they all
wait at once, then all compute at once, and the CPU idles while they wait. A model API's latency varies;
``--turn-jitter J`` draws each turn's wait uniformly from ``seconds × (1 ± J)`` (the same mean, so the same
ideal), which spreads them out. Report which was used.

``--workers N`` runs N worker processes instead of one per core. More processes than cores keep the cores busier
when every trial waits alike (one process's trials all wait while another's compute) but each trial costs more
CPU: at 1,000 in flight, 4 workers on 2 cores gave 96% busy against 91%, and fewer trials a second (308 against
316). The share of the ceiling rises with the waste, so compare ``trials_per_s`` too.

``--traced``: every trial is traced into the store, as `passhat replay` and the collector's cycle trace them by
default (bench_workers.py says more); the clock includes the last spans stored.

Run: .venv/bin/python benchmarks/bench_inflight.py [--levels 50,400,1000] [--trials-per-slot 3] [--turn-seconds 0.5]
[--turn-jitter 0] [--workers 0] [--traced]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from passhat.collector.loop import store_runtime
from passhat.collector.replay import AgentSpec, ReplaySettings, WorkerProcesses, replay_period
from passhat.collector.replay._processes import default_workers
from passhat.collector.store import open_store, parse_period
from passhat.sandbox import Agent, FlawConfig, Message, ReferenceAgent, Toolbox, TrialContext, load_domain

WEEK = parse_period("2026-W40")
FLAWS = FlawConfig.default()


class SlowModel:
    """SIMULATION: the ReferenceAgent behind a model that takes ``seconds`` of wall time to answer each turn."""

    def __init__(self, inner: Agent, seconds: float, jitter: float = 0.0, seed: int = 0) -> None:
        self.inner, self.seconds, self.jitter = inner, seconds, jitter
        self._random = random.Random(seed)
        self.label = getattr(inner, "label", "ReferenceAgent")

    @property
    def flaw(self) -> str | None:
        return getattr(self.inner, "flaw", None)

    async def respond(self, messages: Sequence[Message], tools: Toolbox) -> Message:
        spread = self.jitter * (2 * self._random.random() - 1) if self.jitter else 0.0
        await asyncio.sleep(self.seconds * (1 + spread))
        return await self.inner.respond(messages, tools)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class SlowFactory:
    """A module-level (so picklable: it travels to the worker processes) factory of `SlowModel` agents."""

    def __init__(self, seconds: float, jitter: float = 0.0) -> None:
        self.seconds, self.jitter = seconds, jitter

    def __call__(self, context: TrialContext) -> Agent:
        seed = hash((context.scenario.scenario_id, context.attempt)) & 0xFFFFFFFF
        return SlowModel(ReferenceAgent(context, FLAWS), self.seconds, self.jitter, seed)


# ------------------------------------------------------------------------------------------------ /proc readings


def _tree(root: int) -> list[int]:
    """``root`` and its descendants (the forkserver and the workers it forked), from each task's ``children``
    file: scanning every process in /proc cost the sampler about 6 ms a reading on a quiet machine, and more the
    more processes the machine runs (a kernel without that file gets the scan)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                todo.extend(int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
            except FileNotFoundError:
                return _scanned_tree(root)
            except OSError:  # the task ended meanwhile
                continue
    return found


def _scanned_tree(root: int) -> list[int]:
    """``root`` and its descendants, from every process's parent in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _memory(pids: Sequence[int]) -> tuple[float, float]:
    """(RSS, PSS) of these processes summed, in MB."""
    rss = pss = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            continue
    return rss / 1024, pss / 1024


def _resident(pids: Sequence[int]) -> float:
    """Resident memory of these processes summed, in MB (``statm``: cheap, unlike the maps)."""
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total * page / 2**20


def _cpu(pids: Sequence[int]) -> float:
    """CPU seconds these processes have used (utime + stime)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


class PeakMemory:
    """Samples the process tree every ``every`` seconds on a thread, keeping its memory peaks and its CPU seconds
    used so far at each sample (``cpu``: (perf_counter, CPU seconds) pairs, less the sampler's own). The sampler
    runs in the driver's process and takes its GIL, so it is kept cheap: reading a process's memory maps
    (``smaps_rollup``, for PSS) costs about 20 ms for 500 MB resident, and reading every process's every 0.25 s
    took 11% of a core on a quiet machine (a core the replay measured lost). The resident pages (``statm``) cost
    about 0.02 ms: the maps are read when the resident pages reached a new high, at most every ``MAPS_AT_MOST``
    seconds (the peak PSS read is then at most that much growth short), and every ``MAPS_EVERY`` seconds.
    ``own`` is the sampler's CPU, which is the benchmark's, not the replay's."""

    MAPS_AT_MOST = 1.0
    MAPS_EVERY = 5.0

    def __init__(self, every: float = 0.25) -> None:
        self.every = every
        self.rss = self.pss = 0.0
        self.cpu: list[tuple[float, float]] = []
        self.own = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        mapped_at, mapped_rss = 0.0, 0.0  # when the maps were last read, and the resident pages then
        while not self._stop.is_set():
            tree = _tree(os.getpid())
            now = time.perf_counter()
            resident = _resident(tree)
            since = now - mapped_at
            if (resident > mapped_rss and since >= self.MAPS_AT_MOST) or since >= self.MAPS_EVERY:
                rss, pss = _memory(tree)
                self.rss, self.pss = max(self.rss, rss), max(self.pss, pss)
                mapped_at, mapped_rss = now, max(mapped_rss, resident)
            self.own = time.thread_time()  # this sampler's own CPU, reading /proc: not the replay's
            self.cpu.append((time.perf_counter(), _cpu(tree) - self.own))
            self._stop.wait(self.every)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def cpu_at(self, when: float) -> float:
        """CPU seconds used by ``when`` (a perf_counter time), interpolated between the samples around it."""
        before = max((s for s in self.cpu if s[0] <= when), default=self.cpu[0])
        after = min((s for s in self.cpu if s[0] >= when), default=self.cpu[-1])
        if after[0] == before[0]:
            return before[1]
        return before[1] + (after[1] - before[1]) * (when - before[0]) / (after[0] - before[0])


# ------------------------------------------------------------------------------------------------ one level


async def replay_level(
    week: Path,
    folder: Path,
    in_flight: int,
    tickets: int,
    k: int,
    seconds: float,
    jitter: float = 0.0,
    workers: int = 0,
    traced: bool = False,
) -> dict[str, Any]:
    shutil.copy(week, folder / "copy.db")
    store = open_store(f"sqlite:///{folder / 'copy.db'}")
    retail = load_domain("retail")
    workers = workers or default_workers()
    settings = ReplaySettings(k=k, tickets_per_task_type=tickets, parallel=in_flight, workers=workers)
    agent = AgentSpec(SlowFactory(seconds, jitter), f"reference + {seconds:g} s a turn (simulation)", "1", True)
    runtime = store_runtime(store, "shop") if traced else None
    processes = await WorkerProcesses({"retail": retail}, workers=workers, concurrency=-(-in_flight // workers)).start()
    try:
        await asyncio.sleep(0.5)  # let the workers settle after building their templates
        tree = _tree(os.getpid())
        idle_rss, idle_pss = _memory(tree)
        cpu = _cpu(tree)
        started = time.perf_counter()
        began = time.time()
        with PeakMemory() as peak:
            outcome = await replay_period(
                store, "shop", WEEK, agent, domains={"retail": retail}, settings=settings, processes=processes,
                runtime=runtime,
            )  # fmt: skip
            if runtime is not None:
                runtime.flush()  # the last spans stored
        wall = time.perf_counter() - started
        cpu = _cpu(_tree(os.getpid())) - cpu - peak.own
    finally:
        processes.close()
        if runtime is not None:
            runtime.shutdown()
        store.close()
    trials = outcome.trials
    turns = statistics.mean(sum(1 for role, _ in row.details.transcript if role == "agent") for row in trials)
    cores = len(os.sched_getaffinity(0))
    rate = len(trials) / wall
    ideal = in_flight / (turns * seconds)
    ceiling = cores / (cpu / len(trials))
    ends = [row.started_at.timestamp() + row.duration_s - began for row in trials]
    middle = sum(1 for end in ends if wall / 4 <= end < 3 * wall / 4)
    steady = middle / (wall / 2)
    # The middle half's own CPU: how busy the cores were then, and the ceiling its CPU per trial sets.
    steady_cpu = peak.cpu_at(started + 3 * wall / 4) - peak.cpu_at(started + wall / 4)
    steady_ceiling = cores / (steady_cpu / middle) if middle and steady_cpu > 0 else ceiling
    return {
        "in_flight": in_flight,
        "turn_jitter": jitter,
        "workers": workers,
        "traced": traced,
        "trials": len(trials),
        "wall_s": round(wall, 1),
        "agent_turns_per_trial": round(turns, 2),
        "trials_per_s": round(rate, 1),
        "ideal_per_s": round(ideal, 1),
        "cpu_ms_per_trial": round(1000 * cpu / len(trials), 2),
        "cpu_ceiling_per_s": round(ceiling, 1),
        "share": round(rate / min(ideal, ceiling), 2),
        "steady_per_s": round(steady, 1),
        "steady_share": round(steady / min(ideal, ceiling), 2),
        "steady_cpu_busy": round(steady_cpu / (cores * wall / 2), 2),
        "steady_cpu_ms_per_trial": round(1000 * steady_cpu / middle, 2) if middle else None,
        "steady_cpu_ceiling_per_s": round(steady_ceiling, 1),
        "steady_share_of_own_ceiling": round(steady / min(ideal, steady_ceiling), 2),
        "idle_rss_mb": round(idle_rss),
        "peak_rss_mb": round(peak.rss),
        "idle_pss_mb": round(idle_pss),
        "peak_pss_mb": round(peak.pss),
        "mb_per_trial_in_flight": round((peak.pss - idle_pss) / in_flight, 3),
        "sampler_cpu_s": round(peak.own, 2),
    }


def main() -> None:
    from bench_workers import build_week  # the same week of retail tickets

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--levels", default="50,400,1000", help="trials in flight, comma-separated")
    parser.add_argument("--trials-per-slot", type=float, default=3.0, help="trials run per slot in flight")
    parser.add_argument("--turn-seconds", type=float, default=0.5)
    parser.add_argument("--turn-jitter", type=float, default=0.0, help="each turn waits seconds x (1 +- this)")
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--workers", type=int, default=0, help="worker processes (default: one per core)")
    parser.add_argument("--traced", action="store_true", help="trace every trial into the store, as by default")
    args = parser.parse_args()
    levels = [int(level) for level in args.levels.split(",")]
    task_types = len(load_domain("retail").task_types)
    with tempfile.TemporaryDirectory(prefix="passhat-bench-inflight-") as name:
        folder = Path(name)
        most = max(levels)
        week = build_week(folder, max(1, -(-int(most * args.trials_per_slot) // (args.k * task_types))))
        for level in levels:
            tickets = max(1, -(-int(level * args.trials_per_slot) // (args.k * task_types)))
            print(
                json.dumps(
                    asyncio.run(
                        replay_level(
                            week,
                            folder,
                            level,
                            tickets,
                            args.k,
                            args.turn_seconds,
                            args.turn_jitter,
                            args.workers,
                            args.traced,
                        )
                    )
                )
            )
            sys.stdout.flush()


if __name__ == "__main__":
    # Run as a module named bench_inflight, so the factory pickles by a name the worker processes can import.
    sys.path.insert(0, str(Path(__file__).parent))
    import bench_inflight

    bench_inflight.main()
