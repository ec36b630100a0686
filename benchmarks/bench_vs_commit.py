"""Side by side: a benchmark script run on this checkout and on an earlier commit, alternately, medians and ratio.

The earlier commit's code is exported (`git archive`) into a temporary folder and laid out as the installed
package (`passhat` = sdk/, `passhat.collector` = collector/, ...), then put first on PYTHONPATH, so the same
interpreter and dependencies run both. The rounds alternate (earlier, current, earlier, current, ...) so a
machine whose speed drifts (a shared one) touches both alike. The script must print one JSON line; the figure
named by --figure is compared (by default the first numeric field ending in `per_cpu_s`); several figures,
comma-separated, are each compared on the same runs, a line each.

Run: .venv/bin/python benchmarks/bench_vs_commit.py --commit b3cb3b2 --rounds 3 -- \\
         benchmarks/bench_trial_cpu.py --domain retail
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"collector": "collector", "checks": "checks", "sandbox": "sandbox"}


def export(commit: str, into: Path) -> Path:
    """The commit's package laid out as `passhat` under ``into``; returns the folder to put on PYTHONPATH."""
    archive = into / "source.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), commit], check=True)
    source = into / "source"
    source.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(source, filter="data")
    package = into / "path" / "passhat"
    package.mkdir(parents=True)
    for entry in (source / "sdk").iterdir():
        (package / entry.name).symlink_to(entry)
    for name, folder in FOLDERS.items():
        (package / name).symlink_to(source / folder)
    return into / "path"


def run(script: list[str], path: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([path, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, *script], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    try:
        return dict(json.loads(lines[-1]))
    except ValueError:  # an indented JSON document: from its first brace to the end
        return dict(json.loads(done.stdout[done.stdout.index("{") :]))


def value(result: dict[str, Any], figure: str) -> float:
    """A figure of a result, by name or by a dotted path into nested objects (``passhat.spans_per_cpu_s``)."""
    found: Any = result
    for part in figure.split("."):
        found = found[part]
    return float(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", required=True, help="the earlier commit (e.g. the one before a change)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--figure", default=None, help="the JSON field to compare (several: comma-separated)")
    parser.add_argument("script", nargs=argparse.REMAINDER, help="-- then the benchmark script and its arguments")
    args = parser.parse_args()
    script = [part for part in args.script if part != "--"]
    with tempfile.TemporaryDirectory(prefix="passhat-bench-") as folder:
        path = str(export(args.commit, Path(folder)))
        earlier, current = [], []
        for _ in range(args.rounds):
            earlier.append(run(script, path))
            current.append(run(script, None))
    figures = args.figure.split(",") if args.figure else [next(k for k in current[0] if k.endswith("per_cpu_s"))]
    for figure in figures:  # one line each, from the same runs
        before = [value(r, figure) for r in earlier]
        after = [value(r, figure) for r in current]
        ratios = [a / b for a, b in zip(after, before, strict=True)]
        print(
            json.dumps(
                {
                    "script": " ".join(script),
                    "figure": figure,
                    "commit": args.commit,
                    "earlier_median": statistics.median(before),
                    "current_median": statistics.median(after),
                    "ratio_median": round(statistics.median(ratios), 2),
                    "ratio_min": round(min(ratios), 2),
                    "ratio_max": round(max(ratios), 2),
                    "rounds": args.rounds,
                    "earlier": before,
                    "current": after,
                }
            )
        )


if __name__ == "__main__":
    main()
