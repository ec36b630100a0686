"""The shipped example runs and says what it claims; docs/checks.md has a worked example."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import subprocess
import sys
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load(path: pathlib.Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_four_attempts_pass_exactly_one_and_name_the_others(tmp_path: pathlib.Path) -> None:
    example = _load(ROOT / "examples" / "four_attempts.py", "four_attempts_example")
    attempts = {attempt.name: attempt for attempt in example.main(tmp_path)}
    assert [name for name, attempt in attempts.items() if attempt.verdict.passed] == ["does_it_right"]
    labels = {name: attempt.signature.label for name, attempt in attempts.items() if attempt.signature}
    assert labels == {
        "closes_without_writing": "no_write",
        "refunds_the_wrong_order": "wrong_entity",
        "refunds_the_wrong_amount": "wrong_value",
    }
    wrong_order = attempts["refunds_the_wrong_order"].signature
    assert wrong_order is not None and "orders id='O-1002' updated" in wrong_order.evidence
    wrong_amount = attempts["refunds_the_wrong_amount"].signature
    assert wrong_amount is not None and "amount=50.49, expected 45.50" in wrong_amount.evidence
    # Every attempt, right or wrong, ends with a confident closing message about money.
    assert sum("$" in attempt.closing for attempt in attempts.values()) == 4


def test_four_attempts_runs_as_a_script() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "four_attempts.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert re.search(r"does_it_right\s+PASS", result.stdout)
    assert result.stdout.count("FAIL") == 3


def _python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, flags=re.DOTALL)


def test_docs_have_a_worked_example() -> None:
    assert len(_python_blocks((ROOT / "docs" / "checks.md").read_text())) >= 3
