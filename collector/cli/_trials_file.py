"""Reading per-trial or per-ticket results from a CSV file (the input of `passhat fit --trials`)."""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from passhat.collector.reliability import IntArray

_TRUE = {"1", "true", "t", "yes", "y", "pass", "passed", "ok", "success"}
_FALSE = {"0", "false", "f", "no", "n", "fail", "failed", "error", "failure"}


class TrialsFileError(ValueError):
    """The trials file cannot be read; the message says what is wrong and where."""


@dataclass
class TaskTypeCounts:
    """Per-ticket trial counts of one task type."""

    task_type: str
    ticket_ids: list[str] = field(default_factory=list)
    n: list[int] = field(default_factory=list)
    c: list[int] = field(default_factory=list)

    def arrays(self) -> tuple[IntArray, IntArray]:
        return np.asarray(self.n, dtype=np.int64), np.asarray(self.c, dtype=np.int64)


def _parse_passed(value: str, where: str) -> bool:
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise TrialsFileError(f"{where}: 'passed' must be true/false or 1/0, got {value!r}")


def _parse_count(value: str, column: str, where: str) -> int:
    try:
        number = int(value.strip())
    except ValueError:
        raise TrialsFileError(f"{where}: '{column}' must be a whole number, got {value!r}") from None
    if number < 0:
        raise TrialsFileError(f"{where}: '{column}' cannot be negative, got {number}")
    return number


def read_trials_csv(path: Path) -> dict[str, TaskTypeCounts]:
    """Read ``task_type,ticket_id,passed`` (a row per trial) or ``task_type,ticket_id,n,c`` (a row per ticket)."""
    if not path.exists():
        raise TrialsFileError(f"{path}: no such file")
    if path.is_dir():
        raise TrialsFileError(f"{path}: is a folder, expected a CSV file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise TrialsFileError(f"{path}: not a UTF-8 text file") from None
    reader = csv.DictReader(text.splitlines())
    columns = {name.strip() for name in (reader.fieldnames or []) if name}
    if not columns:
        raise TrialsFileError(f"{path}: the file is empty; expected a header task_type,ticket_id,passed")
    per_trial = {"task_type", "ticket_id", "passed"} <= columns
    per_ticket = {"task_type", "ticket_id", "n", "c"} <= columns
    if not (per_trial or per_ticket):
        missing = sorted({"task_type", "ticket_id"} - columns) or ["passed (or n and c)"]
        raise TrialsFileError(
            f"{path}: missing column(s) {', '.join(missing)}; expected task_type,ticket_id,passed "
            f"or task_type,ticket_id,n,c"
        )
    tickets: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    rows = 0
    for line, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "") for k, v in raw.items()}
        where = f"{path}:{line}"
        task_type, ticket_id = row.get("task_type", "").strip(), row.get("ticket_id", "").strip()
        if not task_type or not ticket_id:
            raise TrialsFileError(f"{where}: task_type and ticket_id must not be empty")
        counts = tickets[(task_type, ticket_id)]
        if per_ticket:
            n = _parse_count(row["n"], "n", where)
            c = _parse_count(row["c"], "c", where)
            if n < 1:
                raise TrialsFileError(f"{where}: n must be at least 1")
            if c > n:
                raise TrialsFileError(f"{where}: c ({c}) cannot exceed n ({n})")
            counts[0] += n
            counts[1] += c
        else:
            counts[0] += 1
            counts[1] += int(_parse_passed(row["passed"], where))
        rows += 1
    if rows == 0:
        raise TrialsFileError(f"{path}: the file has a header but no rows")
    result: dict[str, TaskTypeCounts] = {}
    for (task_type, ticket_id), (n, c) in sorted(tickets.items()):
        group = result.setdefault(task_type, TaskTypeCounts(task_type))
        group.ticket_ids.append(ticket_id)
        group.n.append(n)
        group.c.append(c)
    return result
