"""Distributed replay on a real local Ray cluster (2 CPUs, started once for the module).

The same small retail replay runs on the local executor and on Ray: identical per-task-type figures; a worker
process killed mid-trial costs its trials a retry recorded as infra, and the run finishes with the same figures;
a driver interrupted mid-run resumes (on Ray) without repeating a stored trial.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.reliability import summarize_trials
from passhat.collector.replay import AgentSpec, ReplaySettings, replay_period
from passhat.collector.store import TrialRow, open_store
from passhat.sandbox import load_domain
from tests.collector.replay.ray_agents import killing_factory
from tests.collector.replay.worker_week import AGENT, FLAWS, MIXTURE, TICKETS, WEEK, K

ROOT = pathlib.Path(__file__).resolve().parents[3]

pytestmark = [
    pytest.mark.slow,
    # Ray's own modules warn about their internals (deprecations, accelerator settings) on import and start.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """One local Ray cluster for the module; its workers import this repository's tests (the killing agent)."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):  # `make test` installs passhat[ray]: in CI a missing Ray is a failure, not a skip
            raise
        pytest.skip("Ray is not installed: `make install` installs it")
    ray.init(
        num_cpus=2, include_dashboard=False, logging_level="warning",
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
    )  # fmt: skip
    yield ray
    ray.shutdown()


def _copy(week_db: pathlib.Path, folder: pathlib.Path) -> str:
    shutil.copy(week_db, folder / "week.db")
    return f"sqlite:///{folder / 'week.db'}"


def _settings(executor: str, **extra: Any) -> ReplaySettings:
    ray = {"ray_workers": 2, "ray_concurrency": 2} if executor == "ray" else {}
    return ReplaySettings(k=K, tickets_per_task_type=TICKETS, parallel=4, executor=executor, **{**ray, **extra})


def _figures(trials: list[TrialRow]) -> list[dict[str, Any]]:
    usable = [t for t in trials if not (t.simulator_error or t.infra_error)]
    return [row.to_dict() for row in summarize_trials(usable, K)]


def _outcomes(trials: list[TrialRow]) -> dict[tuple[str, int], tuple[bool, str | None, str]]:
    return {(t.ticket_id, t.attempt): (t.passed, t.failure_label, t.termination_reason) for t in trials}


@pytest.fixture(scope="module")
def local(week_db: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> list[TrialRow]:
    """The trials of the replay on the local executor (the reference the Ray runs must reproduce)."""
    store = open_store(_copy(week_db, tmp_path_factory.mktemp("local")))
    try:
        outcome = asyncio.run(replay_period(store, "shop", WEEK, AGENT, settings=_settings("local")))
    finally:
        store.close()
    sampled = sum(min(TICKETS, population) for population in outcome.population.values())
    assert len(outcome.trials) == sampled * K >= 5 * K and not any(t.infra_error for t in outcome.trials)
    return outcome.trials


def _config(folder: pathlib.Path) -> pathlib.Path:
    path = folder / "passhat.toml"
    path.write_text(
        f'project = "shop"\n[agent]\noptions = {{ mixture = {json.dumps(MIXTURE)} }}\n'
        f'[report]\nout_dir = "{folder / "reports"}"\n'
        f"[replay]\nk = {K}\ntickets_per_task_type = {TICKETS}\nray_workers = 2\nray_concurrency = 2\n",
        encoding="utf-8",
    )
    return path


def test_the_ray_executor_gives_the_figures_of_the_local_one(
    cluster: Any, week_db: pathlib.Path, tmp_path: pathlib.Path, local: list[TrialRow]
) -> None:
    url = _copy(week_db, tmp_path)
    result = CliRunner().invoke(
        app, ["replay", "--period", WEEK.name, "--config", str(_config(tmp_path)), "--store", url, "--executor", "ray",
              "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    remote = json.loads(result.stdout)
    assert remote["trials"] == len(local) and remote["role"] == "official" and remote["infra_retries"] == 0
    # n, pass@1, pass@k, pass^k with its interval, and the failure signatures of every task type: identical.
    assert remote["task_types"] == _figures(local)
    assert any(row["pass_at_1"] < 1 for row in remote["task_types"])  # the agent fails some: a real comparison

    store = open_store(url)
    try:
        trials = store.list_trials("shop", remote["run_id"])
        assert _outcomes(trials) == _outcomes(local)
        assert all(not t.details.infra_retries for t in trials)
        # The workers' spans came back to the driver and were stored: every trial is a sandbox ticket of its run.
        traced = store.list_tickets("shop", source="sandbox", replay_run_id=remote["run_id"], limit=1000)
        assert sorted(t.ticket_id for t in traced) == sorted(f"{t.ticket_id}#{t.attempt}" for t in trials)
    finally:
        store.close()


def _template_folders(worker: Any) -> list[str]:
    """Run in a worker actor: the folders of its domains' templates."""
    return [str(sandbox.workdir) for sandbox in worker.pool._bases.values()]


def test_ray_workers_remove_their_templates_before_they_are_stopped(cluster: Any) -> None:
    # Killed without a word, an actor left its templates (a database each) in its node's temporary directory.
    from passhat.collector.replay._ray import RayTrials
    from passhat.sandbox import RunConfig

    trials = RayTrials(_settings("ray"), {"retail": load_domain("retail")}, AGENT.factory, RunConfig(), None)
    try:
        folders = [
            pathlib.Path(folder)
            for worker in trials.workers
            for folder in cluster.get(worker.handle.__ray_call__.remote(_template_folders), timeout=120)
        ]
        assert len(folders) == 2 and all(folder.is_dir() for folder in folders)  # a template in each worker
    finally:
        trials.close()
    assert not any(folder.exists() for folder in folders)


def test_a_worker_killed_mid_trial_costs_a_retry_recorded_as_infra_and_the_run_finishes(
    cluster: Any, week_db: pathlib.Path, tmp_path: pathlib.Path, local: list[TrialRow]
) -> None:
    store = open_store(_copy(week_db, tmp_path))
    target = sorted({t.ticket_id for t in local})[1], 1
    marker = tmp_path / "killed"
    killer = AgentSpec(killing_factory(FLAWS, target, marker), AGENT.label, "1", True)
    try:
        outcome = asyncio.run(replay_period(store, "shop", WEEK, killer, settings=_settings("ray")))
        run = store.get_replay_run("shop", outcome.run.run_id)
    finally:
        store.close()
    assert marker.exists()  # a worker process did die mid-trial
    # Its templates were in a folder of its own, which the worker started in its place removed: killed, it could not.
    killed_in = pathlib.Path(marker.read_text(encoding="utf-8").splitlines()[1])
    assert killed_in.name.startswith("passhat-ray-") and not killed_in.exists()
    assert run is not None and outcome.ran == len(outcome.trials) == len(local)
    retried = {(t.ticket_id, t.attempt): t for t in outcome.trials if t.details.infra_retries}
    assert target in retried  # the killed trial, and any other the dead worker had in flight
    assert all("Ray worker lost mid-trial" in t.details.infra_retries[0] for t in retried.values())
    # Recorded as infra and retried: no trial is an infra error or an agent failure because of it.
    assert not any(t.infra_error or t.simulator_error for t in outcome.trials)
    assert _outcomes(outcome.trials) == _outcomes(local)
    assert _figures(outcome.trials) == _figures(local)


def test_an_interrupted_driver_resumes_on_ray_without_repeating_stored_trials(
    cluster: Any, week_db: pathlib.Path, tmp_path: pathlib.Path, local: list[TrialRow]
) -> None:
    store = open_store(_copy(week_db, tmp_path))
    settings = _settings("ray", flush_every=1, ray_workers=1)
    try:

        async def interrupted() -> None:
            task: asyncio.Task[object] | None = None

            def stop_after_six(done: int, total: int) -> None:
                if done >= 6 and task is not None:
                    task.cancel()  # as a stopped driver or a Ctrl-C would

            task = asyncio.ensure_future(
                replay_period(store, "shop", WEEK, AGENT, settings=settings, progress=stop_after_six)
            )
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(interrupted())
        runs = store.list_replay_runs("shop")
        assert len(runs) == 1 and runs[0].status == "running"
        before = {(t.ticket_id, t.attempt) for t in store.list_trials("shop", runs[0].run_id)}
        assert 6 <= len(before) < len(local)

        outcome = asyncio.run(replay_period(store, "shop", WEEK, AGENT, settings=settings))
    finally:
        store.close()
    assert outcome.resumed and outcome.run.run_id == runs[0].run_id
    assert outcome.ran == len(local) - len(before)
    keys = [(t.ticket_id, t.attempt) for t in outcome.trials]
    assert len(keys) == len(set(keys)) == len(local)
    assert _figures(outcome.trials) == _figures(local)


def test_choosing_the_local_executor_never_imports_ray() -> None:
    code = (
        "import sys, passhat, passhat.collector, passhat.collector.replay, passhat.collector.loop, "
        "passhat.collector.cli\n"
        "from passhat.collector.replay import ReplaySettings\n"
        "ReplaySettings(executor='local')\n"
        "assert 'ray' not in sys.modules, sorted(m for m in sys.modules if m.startswith('ray'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_benchmark_of_generated_scenarios_runs_on_ray_with_the_local_figures(cluster: Any) -> None:
    runner = CliRunner()
    args = ["bench", "--domain", "retail,travel", "--task-type", "cancel_pending_order", "--scenarios", "3",
            "--k", "2", "--json"]  # fmt: skip
    local = runner.invoke(app, args)
    remote = runner.invoke(app, [*args, "--executor", "ray", "--ray-workers", "2"])
    curtailed = runner.invoke(app, [*args, "--executor", "ray", "--ray-workers", "2", "--stop-early"])
    assert local.exit_code == remote.exit_code == curtailed.exit_code == 0, remote.output + curtailed.output
    here, there, stopped = (json.loads(r.stdout) for r in (local, remote, curtailed))
    assert there["executor"] == "ray" and there["infra_retries"] == 0 and there["trials"] == here["trials"] == 6
    # A trial's outcome depends on its scenario, attempt and agent only: the same figures wherever it ran.
    assert there["task_types"] == here["task_types"] and there["domains"] == here["domains"]
    assert stopped["design"]["name"] == "curtailed" and stopped["trials"] <= 6
    assert [row["pass_hat_k"] for row in stopped["task_types"]] == [row["pass_hat_k"] for row in here["task_types"]]


def test_a_starting_worker_removes_the_folders_of_killed_workers_and_no_others(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from passhat.collector.replay._ray import own_scratch_folder

    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # its pid no longer runs
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    killed = tmp_path / f"passhat-ray-{ended.pid}-abc"
    running = tmp_path / f"passhat-ray-{os.getppid()}-def"  # a worker still running (this test's parent)
    other = tmp_path / f"passhat-retail-{ended.pid}"  # not a worker's folder
    for folder in (killed, running, other):
        (folder / "retail.sqlite").parent.mkdir()
        (folder / "retail.sqlite").write_bytes(b"template")
    mine = own_scratch_folder()
    assert not killed.exists() and running.exists() and other.exists()
    assert mine.parent == tmp_path and mine.name.startswith(f"passhat-ray-{os.getpid()}-") and mine.is_dir()
    assert tempfile.gettempdir() == str(mine)  # this process's templates go there from now on
