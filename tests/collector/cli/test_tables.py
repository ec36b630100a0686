"""The CLI's per-task-type tables in a narrow terminal: failure signatures beside the figures when they fit, after
the table otherwise, with a line break between two signatures, never between a signature and its count."""

from __future__ import annotations

import pytest
from rich.console import Console

from passhat.collector.cli import _tables

LONG = {"tool_usage.error_not_retried": 16, "unresolved": 16, "tool_usage.empty_lookup": 13, "no_write": 8}


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> Console:
    console = Console(width=80, record=True, force_terminal=False)
    monkeypatch.setattr(_tables, "console", console)
    return console


def test_signatures_go_beside_the_figures_only_when_their_longest_line_fits(narrow: Console) -> None:
    assert not _tables.signatures_fit_beside([22, 6, 16, 10], [LONG])  # 30 columns for 28 + " 16": no
    assert _tables.signatures_fit_beside([12, 6, 16, 10], [{"no_write": 3}])
    narrow.width = 200
    assert _tables.signatures_fit_beside([22, 6, 16, 10], [LONG])


@pytest.mark.parametrize("room", [12, 30, 54, 200])
def test_packed_lines_break_between_signatures_and_keep_to_the_room(room: int) -> None:
    items = [f"{name} {count}" for name, count in LONG.items()]
    lines = _tables._packed(items, room).splitlines()
    assert " ".join(lines) == ", ".join(items)  # every signature whole, in order, each with its count
    assert all(len(line) <= room or ", " not in line for line in lines)  # one item alone may be longer
    assert all(line.endswith(",") for line in lines[:-1])


def test_signatures_after_the_table_name_each_task_type_once_most_frequent_first(narrow: Console) -> None:
    _tables.print_signatures_below(
        [("change_pending_payment", LONG), ("cancel_shipped_order", {}), ("exchange_variant", {"no_write": 2})]
    )
    text = narrow.export_text()
    assert "failure signatures, most frequent first" in text and "cancel_shipped_order" not in text
    first = [line for line in text.splitlines() if line.split()[:1] == ["change_pending_payment"]]
    assert len(first) == 1 and "tool_usage.error_not_retried 16, unresolved 16," in first[0]
    assert all(len(line) <= 80 for line in text.splitlines())
    for name, count in LONG.items():
        assert f"{name} {count}" in " ".join(text.split())


def test_a_table_whose_task_types_all_passed_prints_without_signatures(narrow: Console) -> None:
    """Every trial passed: no signature to measure the column by (it raised TypeError in `max`)."""
    row = {
        "domain": "retail", "task_type": "return_delivered_items", "tickets": 2, "pass_at_1": 1.0, "pass_at_k": 1.0,
        "pass_hat_k": 1.0, "pass_hat_k_ci": (0.198, 1.0), "signatures": {},
    }  # fmt: skip
    _tables.print_trial_table("all passed", [row], 3)
    text = narrow.export_text()
    assert "return_delivered_items" in text and "[19.8, 100.0] ±40" in text
    assert "failure signatures" not in text
