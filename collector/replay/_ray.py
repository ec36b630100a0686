"""Distributed replay on Ray: trials run in worker actors, results stream back to the driver that stores them.

Each worker (a Ray actor holding one CPU) builds its domains' sandbox templates once, then runs the trials it
is sent with the same runner, agent factory and isolation as a local replay (a fresh database copy and tool
server per trial). A trial's outcome depends only on (scenario, attempt, agent): which worker ran it does not
show in its row. The worker traces each trial into a capture of its own and sends the spans back with the
result; the driver writes rows and spans to the store as they arrive, so an interrupted run resumes as a local
one does. The store is reached from the driver only.

A worker that dies (its process killed, its node lost) fails the trials it had in flight: each is sent again to
a fresh worker and its row records the lost attempts (``TrialDetails.infra_retries``), an infrastructure event,
never the agent's failure. A trial that loses `MAX_RETRIES` workers is stored as an infrastructure error.

Ray is imported here only, and this module only when ``executor = "ray"`` is chosen.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import importlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import passhat
from passhat.checks import StateDiff, TrialRecord, Verdict, classify_failure
from passhat.collector.replay._adapters import ReplayTicket
from passhat.collector.replay._pool import SandboxPool
from passhat.collector.replay._relay import RuntimeSettings, SpanCapture, SpanSnapshot, relay
from passhat.collector.replay._settings import ExecutorError, ReplaySettings
from passhat.sandbox import (
    AgentFactory,
    Domain,
    DomainError,
    RunConfig,
    Sandbox,
    TrialResult,
    Usage,
    load_domain,
    run_trial_with_retries,
)

MAX_RETRIES = 3
"""Workers a trial may lose before it is stored as an infrastructure error (the run goes on)."""

_HINT = "distributed replay needs Ray: pip install 'passhat[ray]'"


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(f"replay.executor = 'ray': {_HINT}") from None
    return ray


DomainRef = tuple[str, str]
"""How a worker finds a domain: ("entry point", name) or (module, attribute)."""


def domain_ref(domain: Domain) -> DomainRef:
    """Where a worker imports ``domain`` from (a Domain holds functions and SQLAlchemy tables: it is not sent).

    A domain installed under the ``passhat.domains`` entry points is loaded by name; your own by the module
    attribute that holds it (``module:attribute`` in passhat.toml's ``domains``)."""
    try:
        if load_domain(domain.name) is domain:
            return ("entry point", domain.name)
    except DomainError:
        pass
    for module_name, module in list(sys.modules.items()):
        if module_name == "__main__" or module is None:
            continue
        try:
            attributes = list(vars(module).items())
        except TypeError:  # not a module (some packages put other objects in sys.modules)
            continue
        for attribute, value in attributes:
            if value is domain:
                return (module_name, attribute)
    raise DomainError(
        f"domain {domain.name!r} cannot be found by Ray workers: name it in passhat.toml's domains as "
        "module:attribute of a module-level Domain (a function building it cannot be imported by a worker), or "
        "register it under the passhat.domains entry points"
    )


def _load(ref: DomainRef) -> Domain:
    where, name = ref
    if where == "entry point":
        return load_domain(name)
    found = getattr(importlib.import_module(where), name)
    if not isinstance(found, Domain):
        raise DomainError(f"{where}:{name} is a {type(found).__name__} on this Ray worker, not a Domain")
    return found


@dataclass(frozen=True)
class WorkerResult:
    """What a worker sends back for one trial: the graded result, its spans, and which process ran it."""

    result: TrialResult
    spans: tuple[SpanSnapshot, ...]
    pid: int


def keep_templates_frozen() -> None:
    """A worker's templates (and the modules it imported) join the frozen heap once built: they live as long as
    the worker, and each full collection walked them all, about 75 ms for retail's, five times in 900 trials (a
    tenth of the worker's CPU). Trials' own objects are collected as before."""
    gc.freeze()


class TrialWorker:
    """The body of a Ray worker actor: the domains' templates, built once, and trials run on them."""

    _scratch: Path | None = None

    def __init__(
        self,
        domains: Mapping[str, DomainRef],
        agent: AgentFactory,
        config: RunConfig,
        *,
        seed: int,
        size: str,
        tracing: RuntimeSettings | None,
        keep: int = 8,
        own_scratch: bool = False,
    ) -> None:
        """``own_scratch`` (a Ray actor's process): its temporary files go in a folder of its own
        (`own_scratch_folder`), and those of killed workers before it on this node are removed."""
        self._scratch = own_scratch_folder() if own_scratch else None
        self.pool = SandboxPool(seed=seed, size=size)
        self.domains = {name: _load(ref) for name, ref in domains.items()}
        for domain in self.domains.values():
            self.pool.base(domain)  # the templates, once per worker
        keep_templates_frozen()
        self.agent = agent
        self.config = config
        self.capture = SpanCapture()
        self.runtime = None if tracing is None else tracing.runtime(self.capture)
        if tracing is not None:  # the agent's module is imported: without a global provider of its own, a
            passhat.route_unclaimed_spans_to_trials()  # framework's spans in these trials come to them all the same
        self._derived: dict[str, tuple[Sandbox, int]] = {}
        self._idle: collections.OrderedDict[str, Sandbox] = collections.OrderedDict()
        self._keep = keep

    def _open(self, item: ReplayTicket) -> Sandbox:
        """The ticket's template: held by another of its trials, kept from a recent one, or built now."""
        held = self._derived.get(item.ticket_id)
        if held is not None:
            self._derived[item.ticket_id] = (held[0], held[1] + 1)
            return held[0]
        sandbox = self._idle.pop(item.ticket_id, None)
        if sandbox is None:
            domain = self.domains.get(item.domain) or load_domain(item.domain)
            sandbox = self.pool.for_ticket(domain, item.images)
        self._derived[item.ticket_id] = (sandbox, 1)
        return sandbox

    def _close(self, item: ReplayTicket) -> None:
        sandbox, users = self._derived[item.ticket_id]
        if users > 1:
            self._derived[item.ticket_id] = (sandbox, users - 1)
            return
        del self._derived[item.ticket_id]
        # A ticket's attempts come in a row: keep its own template a while, close the oldest idle one. An idle
        # template keeps one spare connection, not one per trial it served at once (a database copy each). A
        # domain's base is shared by every ticket whose rows fit the seed: its spares (at most one per trial
        # running at once) serve the next trials, which would otherwise each open and parse a new database.
        if not self.pool.is_base(sandbox):
            sandbox.trim(1)
        self._idle[item.ticket_id] = sandbox
        while len(self._idle) > self._keep:
            self.pool.release(self._idle.popitem(last=False)[1])

    async def run(self, item: ReplayTicket, attempt: int) -> WorkerResult:
        """One trial of a ticket, exactly as a local replay runs it."""
        sandbox = self._open(item)
        try:
            result = await run_trial_with_retries(
                sandbox, item.scenario, attempt, self.agent, config=self.config, runtime=self.runtime
            )
        finally:
            self._close(item)
        traces = (*result.lost_trace_ids, result.trace_id)  # the harness's lost runs are traced like any
        spans = tuple(span for trace in traces for span in self.capture.take(trace)) if self.runtime is not None else ()
        return WorkerResult(result, spans, os.getpid())

    def close(self) -> None:
        self.pool.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)


SCRATCH_PREFIX = "passhat-ray-"


def own_scratch_folder() -> Path:
    """A temporary folder of this process's own (``passhat-ray-<pid>-*`` in the node's temporary directory), which
    its templates and tickets' databases go in from now on. A Ray worker killed (out of memory, `ray.kill`, a lost
    node) cannot remove its own, so each worker starting removes those of this user whose process is no longer
    running: a killed worker's files last until the next replay on its node, not for ever."""
    base = Path(tempfile.gettempdir())
    for folder in base.glob(f"{SCRATCH_PREFIX}*"):
        try:
            pid = int(folder.name[len(SCRATCH_PREFIX) :].split("-", 1)[0])
            if pid == os.getpid() or _running(pid) or folder.stat().st_uid != os.getuid():
                continue
        except (ValueError, OSError):
            continue
        shutil.rmtree(folder, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=base))
    tempfile.tempdir = str(folder)
    return folder


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead and not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc here: it answered the signal
        return True
    return state not in ("Z", "X")


@dataclass
class _Worker:
    handle: Any
    index: int


class RayTrials:
    """The driver's side: a set of worker actors, trials sent to free slots, results and spans back."""

    def __init__(
        self,
        settings: ReplaySettings,
        domains: Mapping[str, Domain],
        agent: AgentFactory,
        config: RunConfig,
        runtime: passhat.Passhat | None,
    ) -> None:
        refs = {name: domain_ref(domain) for name, domain in domains.items()}  # before starting anything
        missing = [name for name in settings.ray_env if name not in os.environ]
        if missing:
            raise ExecutorError(
                f"replay.ray_env names {', '.join(missing)}, not set in this (the driver's) environment: set it, "
                "or drop it from ray_env when the workers' nodes have it"
            )
        ray = _ray()
        self._ray = ray
        self._owns_cluster = False
        if not ray.is_initialized():
            self._owns_cluster = True
            if settings.ray_address == "local":
                # The in-process cluster's workers import what the driver can (your factory beside passhat.toml).
                paths = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
                ray.init(include_dashboard=False, runtime_env={"env_vars": paths}, logging_level="warning")
            else:
                try:
                    ray.init(address=settings.ray_address, logging_level="warning")
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    raise ExecutorError(
                        f"cannot reach the Ray cluster at replay.ray_address = {settings.ray_address!r} ({exc}): "
                        "start it (`ray start --head`), fix the address, or use ray_address = 'local'"
                    ) from None
        self.runtime = runtime
        workers = settings.ray_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.concurrency = settings.ray_concurrency
        options: dict[str, Any] = {"num_cpus": 1, "max_restarts": 0, "max_task_retries": 0}
        if settings.ray_env:  # the secrets named, from the driver's environment, to every worker
            options["runtime_env"] = {"env_vars": {name: os.environ[name] for name in settings.ray_env}}
        self._actor = ray.remote(max_concurrency=self.concurrency, **options)(TrialWorker)
        self._args = (refs, agent, config)
        self._kwargs: dict[str, Any] = {
            "seed": settings.seed,
            "size": settings.size,
            "tracing": None if runtime is None else RuntimeSettings.of(runtime),
            "keep": 2 * self.concurrency,  # tickets' own templates a worker keeps for their next attempts
            "own_scratch": True,  # a killed worker's files are removed by the next to start on its node
        }
        self.workers = [self._start(index) for index in range(workers)]
        self._slots: asyncio.Queue[int] = asyncio.Queue()
        for _ in range(self.concurrency):
            for worker in self.workers:
                self._slots.put_nowait(worker.index)
        self.retried = 0

    @property
    def slots(self) -> int:
        """Trials in flight at once: workers × concurrency per worker."""
        return len(self.workers) * self.concurrency

    def _start(self, index: int) -> _Worker:
        return _Worker(self._actor.remote(*self._args, **self._kwargs), index)

    async def run(self, item: ReplayTicket, attempt: int) -> tuple[TrialResult, tuple[str, ...]]:
        """Run one trial on a free worker slot; a worker lost mid-trial costs a retry on a fresh worker."""
        died = self._ray.exceptions.RayActorError
        lost: list[str] = []
        started = time.perf_counter()
        while len(lost) < MAX_RETRIES:
            index = await self._slots.get()
            worker = self.workers[index]
            try:
                answer: WorkerResult = await worker.handle.run.remote(item, attempt)
            except died as exc:
                lost.append(f"Ray worker lost mid-trial ({type(exc).__name__}): {_first_line(exc)}")
                self.retried += 1
                if self.workers[index] is worker:  # the first to see it dead starts its replacement
                    self._ray.kill(worker.handle, no_restart=True)
                    self.workers[index] = self._start(index)
                continue
            finally:
                self._slots.put_nowait(index)
            if self.runtime is not None:
                relay(self.runtime, answer.spans)
            return answer.result, tuple(lost)
        return _lost(item, attempt, lost, time.perf_counter() - started), tuple(lost)

    def close(self) -> None:
        # Each worker removes its templates first (killed, it could not: they stayed in its node's temporary
        # directory); one that does not answer within a few seconds is killed all the same.
        closing = [worker.handle.close.remote() for worker in self.workers]
        with contextlib.suppress(Exception):
            self._ray.wait(closing, num_returns=len(closing), timeout=10)
        for worker in self.workers:
            self._ray.kill(worker.handle, no_restart=True)
        self.workers = []
        if self._owns_cluster:
            self._ray.shutdown()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


def _lost(item: ReplayTicket, attempt: int, lost: Sequence[str], duration: float) -> TrialResult:
    """A trial that lost every worker it was sent to: an infrastructure error, never the agent's failure."""
    error = f"{len(lost)} Ray workers were lost running this trial; last: {lost[-1]}"
    record = TrialRecord(
        passed=False,
        verdict=Verdict(False, "not run", error="the trial never finished: its workers were lost"),
        diff=StateDiff(),
        tool_calls=[],
        termination_reason="infra_error",
        transcript=[],
        infra_error=error,
        expected_write_tables=set(item.scenario.expected_write_tables),
    )
    return TrialResult(
        scenario=item.scenario,
        attempt=attempt,
        record=record,
        signature=classify_failure(record),
        injected=None,
        duration_s=duration,
        overhead_s=duration,
        usage=Usage(),
        trace_id="",
    )
