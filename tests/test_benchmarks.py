"""The benchmarks in benchmarks/ are run by the commands their docstrings and the docs give: each one at least
imports, and `--help` prints its usage rather than starting a run of minutes."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))

# Runs each benchmark as its own `__main__` with `--help`, in one interpreter (importing each one in a process
# of its own would cost a second or two apiece): what argparse printed, or what the benchmark did instead.
_PROBE = """
import contextlib, io, json, os, runpy, sys
found = {}
sys.path.insert(0, "")
for path in sys.argv[1:]:
    sys.argv = [path, "--help"]
    sys.path[0] = os.path.dirname(path)  # as `python benchmarks/bench_x.py` has it: its sibling modules import
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        found[path] = ("ran", out.getvalue()[-300:])
    except SystemExit as exc:
        found[path] = ("exit %s" % exc.code, out.getvalue())
    except BaseException as exc:
        found[path] = ("raised %r" % exc, out.getvalue()[-300:])
print(json.dumps(found))
"""


def test_every_benchmark_prints_its_usage_on_help_and_does_not_run() -> None:
    assert len(BENCHMARKS) >= 20
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *map(str, BENCHMARKS)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    wrong = {
        pathlib.Path(path).name: how
        for path, (how, printed) in found.items()
        if how not in ("exit 0", "exit None") or "usage:" not in printed
    }
    assert not wrong, wrong


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--ahead", "x"], "--ahead takes whole numbers"),
        (["--cores", "--cold"], "--cores pins the workers the benchmark starts: leave out --cold"),
    ],
    ids=["ahead-not-a-number", "cores-with-cold"],
)
def test_bench_workers_refuses_bad_arguments_in_one_line(arguments: list[str], said: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_workers.py"), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert said in done.stderr
    assert not done.stdout.strip()


_PIN = """
import os, sys, threading, time
sys.path.insert(0, "benchmarks")
from bench_workers import pin
from passhat.collector.replay._processes import default_workers
stop = threading.Event()
threading.Thread(target=stop.wait, daemon=True).start()  # a thread started before the pin is pinned too
every = os.sched_getaffinity(0)
pin(os.getpid(), {min(every)})
tasks = os.listdir(f"/proc/{os.getpid()}/task")
print(len(tasks), sorted({len(os.sched_getaffinity(int(t))) for t in tasks}), default_workers())
pin(os.getpid(), every)
print(default_workers() == len(every))
"""


def test_bench_workers_pins_every_thread_of_the_one_core_replay() -> None:
    """`--cores` runs the one-worker replay on one core: every thread of the process, including threads started
    before, and what the replay reads as the cores it may use (`default_workers`)."""
    done = subprocess.run([sys.executable, "-c", _PIN], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = done.stdout.split("\n")[:2]
    assert first.split(" ", 1)[0] != "1"  # there were threads besides the main one
    assert first.endswith("[1] 1")
    assert second == "True"
