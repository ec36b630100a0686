"""Tickets that recorded no intent are replayed through intent inference, and a planted bug is still found.

A team's own clinic desk (tests/collector/replay/clinic.py) sends its production tickets through the SDK to a
real collector over HTTP, with content capture on and its database instrumented, and never records an intent.
Its agent sometimes moves the patient's other appointment (a wrong-entity write). Replay infers each ticket's
intent from what the customer said and the rows the agent read, never from what it wrote.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Iterator

import httpx
import pytest
from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session

import passhat
from passhat._runtime import set_current
from passhat.collector.loop import period_counts, report_input_for
from passhat.collector.replay import AgentSpec, ReplayOutcome, ReplaySettings, replay_period
from passhat.collector.report import build_report, render_html, render_markdown
from passhat.collector.store import Store, open_store, week_of
from passhat.collector.ui import ui_router
from tests.collector.embedded import running_collector
from tests.collector.replay import clinic
from tests.collector.server import new_key

PATIENTS = [(f"P{n}", f"patient.{n}@mail.example.org", "2026-07-01", "2026-07-02") for n in range(1, 9)]
TWICE = ("P9", "patient.9@mail.example.org", "2026-07-03", "2026-07-03")  # two appointments on one day
WRONG_RATE = 0.4
PROJECT = "clinic"


def _production(path: str) -> Engine:
    engine = create_engine(f"sqlite:///{path}")
    clinic.Base.metadata.create_all(engine)
    with Session(engine) as session:
        for patient_id, email, first, second in [*PATIENTS, TWICE]:
            session.add(clinic.Patient(patient_id=patient_id, email=email, name=patient_id))
            session.add(clinic.Appointment(appointment_id=f"{patient_id}-a", patient_id=patient_id, day=first))
            session.add(clinic.Appointment(appointment_id=f"{patient_id}-b", patient_id=patient_id, day=second))
        session.commit()
    return engine


def _customer(opening: str, email: str) -> Callable[[str | None], str]:
    return lambda agent_said: opening if agent_said is None else f"Sure, it is {email}."


@pytest.fixture
def store(tmp_path: object) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path}/collector.db")
    try:
        yield opened
    finally:
        opened.close()


def _send(store: Store, folder: str, openings: list[tuple[str, str, str]], task_type: str = "reschedule") -> None:
    """Production tickets through the SDK to a running collector: (ticket id, opening, email)."""
    engine = _production(f"{folder}/production.db")
    with running_collector(store) as collector:
        previous = set_current(None)
        passhat.configure(endpoint=collector.url, api_key=new_key(store, PROJECT), capture_content=True)
        handle = passhat.instrument_sqlalchemy(engine)
        try:
            for ticket_id, opening, email in openings:
                clinic.handle_ticket(engine, ticket_id, _customer(opening, email), WRONG_RATE, task_type)
            assert passhat.flush(timeout=20)
        finally:
            handle.uninstrument()
            passhat.shutdown()
            set_current(previous)


def _replay(store: Store) -> ReplayOutcome:
    spec = AgentSpec(lambda context: clinic.ReplayedDesk(context, WRONG_RATE), "clinic desk")
    settings = ReplaySettings(k=4, tickets_per_task_type=50, parallel=2, infer_intent="rules")
    period = week_of(dt.datetime.now(dt.UTC))
    domains = {"clinic": clinic.domain}
    return asyncio.run(replay_period(store, PROJECT, period, spec, domains=domains, settings=settings))


def test_tickets_without_an_intent_are_replayed_and_the_wrong_entity_bug_is_found(
    store: Store, tmp_path: object
) -> None:
    openings = [
        (f"R-{patient_id}", f"Hi, please move my appointment on {first} to 2026-07-0{6 + n % 4}.", email)
        for n, (patient_id, email, first, _) in enumerate(PATIENTS)
    ]
    _send(store, str(tmp_path), openings)
    outcome = _replay(store)

    assert outcome.not_replayable == []
    intents = outcome.run.params["intents"]
    assert set(intents) == {ticket_id for ticket_id, _, _ in openings}
    for n, (patient_id, email, first, _) in enumerate(PATIENTS):
        stored = intents[f"R-{patient_id}"]
        assert stored["source"] == "inferred:rules"
        # Personal values arrive pseudonymised, in the words and the captured rows alike, and match as they are.
        assert stored["intent"]["email"] != email and stored["intent"]["email"].endswith("@example.com")
        # The appointment the customer named, whatever the production agent wrote.
        assert stored["intent"]["appointment_id"] == f"{patient_id}-a"
        assert stored["intent"]["day"] == first and stored["intent"]["new_day"] == f"2026-07-0{6 + n % 4}"
        assert "customer said" in stored["evidence"]["new_day"]
    details = [store.get_ticket(PROJECT, ticket_id) for ticket_id, _, _ in openings]
    wrote_elsewhere = [
        d.ticket_id for d in details if d and any(w.key["appointment_id"].endswith("-b") for w in d.state_writes)
    ]
    assert wrote_elsewhere, "the planted bug should have written to a sibling in production"
    labels = {trial.failure_label for trial in outcome.trials if not trial.passed}
    assert labels == {"wrong_entity"}
    passed = sum(trial.passed for trial in outcome.trials)
    assert 0 < passed < len(outcome.trials)

    # The report and the ticket page say the intent was inferred, and on what evidence.
    report = build_report(report_input_for(store, PROJECT, week_of(dt.datetime.now(dt.UTC)), outcome.run))
    shown = report.to_json()["inferred_intents"]["R-P1"]
    assert shown["source"] == "inferred:rules" and shown["evidence"]["day"].startswith("the customer said")
    assert 'id="inferred-intents"' in render_html(report) and "Inferred intents (8)" in render_markdown(report)
    with running_collector(store, routers=[ui_router()]) as collector:
        headers = {"authorization": f"Bearer {new_key(store, PROJECT)}"}
        page = httpx.get(f"{collector.url}/ui/tickets/R-P1", headers=headers, timeout=30).text
    assert "Intent (inferred:rules)" in page and "the customer said" in page


def test_words_that_fit_two_appointments_or_name_no_day_leave_the_ticket_not_replayable_with_the_reason(
    store: Store, tmp_path: object
) -> None:
    _send(
        store,
        str(tmp_path),
        [
            ("R-twice", "Hi, please move my appointment on 2026-07-03 to 2026-07-08.", TWICE[1]),
            ("R-vague", "Hi, please move my appointment to 2026-07-08.", PATIENTS[0][1]),
        ],
    )
    outcome = _replay(store)
    reasons = {skipped.ticket_id: skipped.reason for skipped in outcome.not_replayable}
    assert set(reasons) == {"R-twice", "R-vague"}
    assert reasons["R-twice"].startswith("no intent was recorded, and none could be inferred: 2 candidates for")
    assert "appointment_id ('P9-a', 'P9-b')" in reasons["R-twice"]
    assert "no evidence for day" in reasons["R-vague"]
    assert outcome.run.params["intents"] == {}


def test_tickets_named_by_an_agent_not_a_task_type_are_classified_before_sampling(
    store: Store, tmp_path: object
) -> None:
    openings = [
        (f"F-{patient_id}", f"Hi, please move my appointment on {first} to 2026-07-09.", email)
        for patient_id, email, first, _ in PATIENTS[:3]
    ]
    _send(store, str(tmp_path), openings, task_type="desk agent")  # what a framework's agent span is named
    outcome = _replay(store)
    assert outcome.population == {"reschedule": 3} and outcome.not_replayable == []
    assert {found["task_type"] for found in outcome.run.params["intents"].values()} == {"reschedule"}
    report_input = report_input_for(store, PROJECT, week_of(dt.datetime.now(dt.UTC)), outcome.run)
    assert {row.task_type for row in report_input.traffic} == {"reschedule"}  # traffic weighting sees them
    assert sum(row.tickets for row in report_input.traffic) == 3
    # The alert rules weigh the overall figure as the report does: the classified tickets count for their type.
    counts = period_counts(store, PROJECT, week_of(dt.datetime.now(dt.UTC)), outcome.run)
    assert counts.weights == {"reschedule": 3.0}
    spec = AgentSpec(lambda context: clinic.ReplayedDesk(context, WRONG_RATE), "clinic desk")
    period = week_of(dt.datetime.now(dt.UTC))
    paired = asyncio.run(
        replay_period(
            store, PROJECT, period, spec, domains={"clinic": clinic.domain},
            settings=ReplaySettings(k=4, tickets_per_task_type=50, parallel=2), same_tickets_as=outcome.run, fresh=True,
        )
    )  # fmt: skip
    assert paired.not_replayable == [] and {t.task_type for t in paired.trials} == {"reschedule"}
