"""A ticket a replay run could not rebuild: kept in the run's params, read back by the report."""

from __future__ import annotations

from passhat.collector import replay, report
from passhat.collector.store import NotReplayable


def test_what_a_run_keeps_reads_back_equal() -> None:
    skipped = NotReplayable("T-9", "refund", "no before-image of the order was captured")
    assert NotReplayable.from_dict(skipped.to_dict()) == skipped


def test_replay_and_report_name_the_same_type() -> None:
    assert replay.NotReplayable is report.NotReplayable is NotReplayable
