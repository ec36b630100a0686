"""A team replays its own agent on its own backend, as a new user would, with the SDK's default PII protection.

The team's project folder (copied from billing_project/, never installed) holds its existing agent module, its
SQLAlchemy backend (integer ``id`` keys, an ``email`` column) and a small passhat domain module. Production
tickets go through the collector over HTTP with default SDK settings; ``passhat replay --period`` names the
domain and the agent as ``module:attribute`` in ``passhat.toml``. Every ticket is replayed, the agent's planted
bug shows up at its rate under the right signature, and no planted email, phone or card reaches the collector.
"""

from __future__ import annotations

import datetime as dt
import json
import pathlib
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

import passhat
from passhat._runtime import set_current
from passhat.collector.store import open_store, week_of
from tests.collector.embedded import running_collector
from tests.collector.server import new_key

PROJECT = pathlib.Path(__file__).parent / "billing_project"
FORGET_RATE = 0.3
K = 8
CUSTOMERS = [
    ("Ada Lovelace", "ada.lovelace@analytical-engines.co.uk", "+44 20 7946 0101", "4111 1111 1111 1111"),
    ("Grace Hopper", "grace.hopper@cobol-navy.com", "+1 (202) 555-0142", "5500 0000 0000 0004"),
    ("Alan Turing", "alan.turing@bletchley.org", "+44 1908 640404", "3782 822463 10005"),
    ("Katherine Johnson", "kjohnson@langley-research.com", "+1 (757) 555-0199", "6011 0009 9013 9424"),
    ("Edsger Dijkstra", "ewd@eindhoven-tue.nl", "+31 40 247 9111", "4012 8888 8888 1881"),
    ("Barbara Liskov", "liskov@clu-lang.org", "+1 (617) 555-0123", "4222 2222 2222 2"),
]
PLANS = ["team", "pro", "team", "pro", "team", "team"]


@pytest.fixture
def project(tmp_path: pathlib.Path) -> Iterator[pathlib.Path]:
    """The team's folder: their agent module and domain module, beside the passhat.toml written later."""
    folder = tmp_path / "billing"
    shutil.copytree(PROJECT, folder, ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(folder))  # the agent's own process imports its modules from its folder
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        for name in ("billing_app", "billing_domain"):
            sys.modules.pop(name, None)


def _production_database(folder: pathlib.Path) -> object:
    from billing_app import Base, Customer, Invoice, Plan, Subscription  # type: ignore[import-not-found]

    engine = create_engine(f"sqlite:///{folder / 'production.db'}")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([Plan(code="basic", monthly_cents=900), Plan(code="pro", monthly_cents=2900)])
        session.add(Plan(code="team", monthly_cents=9900))
        for number, (name, email, phone, card) in enumerate(CUSTOMERS, start=1):
            session.add(Customer(id=number, name=name, email=email, phone=phone, card_number=card))
            session.add(Subscription(id=number, customer_id=number, plan_code="basic"))
            session.add(Invoice(id=number, customer_id=number, amount_cents=900))
        session.commit()
    return engine


def _customer(opening: str, email: str) -> Callable[[str | None], str]:
    def next_message(agent_said: str | None) -> str:
        if agent_said is None:
            return opening
        return f"Sure, it's {email}. My phone is on file too."

    return next_message


def _send_production_tickets(folder: pathlib.Path, url: str, key: str) -> int:
    from billing_app import handle_ticket  # type: ignore[import-not-found]

    engine = _production_database(folder)
    previous = set_current(None)
    passhat.configure(endpoint=url, api_key=key, service_name="billing-agent")  # the documented defaults
    handle = passhat.instrument_sqlalchemy(engine)
    sent = 0
    try:
        for number, ((_, email, _, _), plan) in enumerate(zip(CUSTOMERS, PLANS, strict=True), start=1):
            opening = f"Hi, please switch my subscription to the {plan} plan."
            handle_ticket(engine, f"B-{number}", _customer(opening, email), forget_rate=FORGET_RATE)
            sent += 1
        for number, (_, email, _, _) in enumerate(CUSTOMERS[:3], start=1):
            handle_ticket(engine, f"C-{number}", _customer("Hi, please close my account.", email))
            sent += 1
        assert passhat.flush(timeout=20)
    finally:
        handle.uninstrument()
        passhat.shutdown()
        set_current(previous)
    return sent


def _passhat(folder: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(pathlib.Path(sys.executable).parent / "passhat"), *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_a_team_replays_its_own_agent_with_pseudonymised_data(project: pathlib.Path) -> None:
    store_url = f"sqlite:///{project / 'collector' / 'passhat.db'}"
    (project / "collector").mkdir()
    store = open_store(store_url)
    try:
        with running_collector(store) as collector:
            sent = _send_production_tickets(project, collector.url, new_key(store, "billing"))
    finally:
        store.close()
    period = week_of(dt.datetime.now(dt.UTC))
    (project / "passhat.toml").write_text(
        'project = "billing"\n'
        'domains = ["billing_domain:domain"]\n'
        "[agent]\n"
        'factory = "billing_domain:make_agent"\n'
        f"options = {{ forget_rate = {FORGET_RATE} }}\n"
        f'[store]\nurl = "{store_url}"\n'
        f"[replay]\nk = {K}\ntickets_per_task_type = 50\n"
        '[report]\nout_dir = "reports"\n'
    )

    done = _passhat(project, "replay", "--period", period.name, "--config", "passhat.toml", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["not_replayable"] == [] and result["measured"] is True
    rows = {row["task_type"]: row for row in result["task_types"]}
    assert rows["change_plan"]["tickets"] == len(CUSTOMERS) and rows["close_account"]["tickets"] == 3
    assert sent == len(CUSTOMERS) + 3

    report = json.loads(pathlib.Path(result["report"]["json"]).read_text())
    assert report["not_replayable"] == []
    by_type = {row["task_type"]: row for row in report["task_types"]}
    assert by_type["close_account"]["pass_at_1"] == 1.0
    # The planted bug: a plan change confirmed but never made, in about 30% of trials (48 trials: +-0.15).
    assert by_type["change_plan"]["pass_at_1"] == pytest.approx(1 - FORGET_RATE, abs=0.15)
    assert set(rows["change_plan"]["signatures"]) == {"no_write"}
    failures = rows["change_plan"]["signatures"]["no_write"]
    assert failures == round((1 - by_type["change_plan"]["pass_at_1"]) * len(CUSTOMERS) * K)

    # Each trial's trace (what the UI's trial page shows) holds the agent's own @passhat.tool calls, as the trial
    # record does: the agent's module configured passhat for production, and the trials traced into the replay's.
    store = open_store(store_url)
    try:
        trials = store.list_tickets("billing", source="sandbox", replay_run_id=result["run_id"], limit=1000)
        assert len(trials) == sent * K
        details = store.get_tickets("billing", [t.ticket_id for t in trials[:12]], source="sandbox")
        for detail in details.values():
            names = {call.tool_name for call in detail.tool_calls}
            assert "find_customer" in names, (detail.ticket_id, names)
    finally:
        store.close()

    stored = b"".join(path.read_bytes() for path in (project / "collector").iterdir() if path.is_file())
    for _, email, phone, card in CUSTOMERS:
        for clear in (email, phone, re.sub(r"\D", "", phone), card, card.replace(" ", "")):
            assert clear.encode() not in stored, clear
