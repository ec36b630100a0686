"""A team's own clinic desk: its SQLAlchemy backend, its agent (with a planted wrong-entity bug), and the small
passhat domain that replays it. The agent records no intent: it never held the request as parameters.

The bug: at ``wrong_rate`` the agent moves the patient's *other* appointment (a sibling row) instead of the one
the patient named.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, String, insert, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import passhat
from passhat.checks import Check, all_of, no_other_writes, updated
from passhat.sandbox import CustomerScript, Domain, Message, TaskType, Toolbox, TrialContext
from passhat.sandbox.domain import derived, free_text, in_column

OPEN_DAYS = tuple(f"2026-07-{day:02d}" for day in range(6, 11))
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class Base(DeclarativeBase):
    pass


class Patient(Base):
    __tablename__ = "patients"
    patient_id: Mapped[str] = mapped_column(String, primary_key=True)
    email: Mapped[str] = mapped_column(String, unique=True)
    name: Mapped[str] = mapped_column(String)


class Appointment(Base):
    __tablename__ = "appointments"
    appointment_id: Mapped[str] = mapped_column(String, primary_key=True)
    patient_id: Mapped[str] = mapped_column(String)
    day: Mapped[str] = mapped_column(String)


# -- the team's tools and agent ------------------------------------------------------------------------------
@passhat.tool
def find_patient(session: Session, email: str) -> str | None:
    patient = session.scalars(select(Patient).where(Patient.email == email)).first()
    return None if patient is None else patient.patient_id


@passhat.tool
def list_appointments(session: Session, patient_id: str) -> list[dict[str, str]]:
    rows = session.scalars(select(Appointment).where(Appointment.patient_id == patient_id)).all()
    return [{"appointment_id": row.appointment_id, "day": row.day} for row in rows]


@passhat.tool
def move_appointment(session: Session, appointment_id: str, new_day: str) -> str:
    appointment = session.get(Appointment, appointment_id)
    if appointment is None:
        return "no such appointment"
    appointment.day = new_day
    session.commit()
    return "moved"


def desk_reply(engine: Engine, said: Sequence[str], rng: random.Random, wrong_rate: float) -> str:
    """The agent's next reply, from everything the customer said so far."""
    emails = [word.strip(".,") for text in said for word in text.split() if "@" in word]
    if not emails:
        return "Happy to help. What is the email on your file?"
    days = _DATE.findall(said[0])
    with Session(engine) as session:
        patient_id = find_patient(session, emails[-1])
        if patient_id is None or len(days) != 2:
            return "I could not find your appointment."
        booked = list_appointments(session, patient_id)
        named = [a for a in booked if a["day"] == days[0]]
        others = [a for a in booked if a["day"] != days[0]]
        if not named:
            return "I could not find an appointment on that day."
        target = others[0] if others and rng.random() < wrong_rate else named[0]  # the planted bug
        move_appointment(session, target["appointment_id"], days[1])
    return f"Done: your appointment is now on {days[1]}."


def handle_ticket(
    engine: Engine,
    ticket_id: str,
    customer: Callable[[str | None], str],
    wrong_rate: float,
    task_type: str = "reschedule",
) -> None:
    """One production conversation, traced: no intent recorded, the customer's messages captured."""
    rng = random.Random(ticket_id)
    with passhat.ticket(ticket_id, task_type=task_type) as ticket:
        said = [customer(None)]
        ticket.customer_says(said[0])
        while True:
            reply = desk_reply(engine, said, rng, wrong_rate)
            ticket.agent_says(reply)
            if not reply.endswith("?"):
                return
            said.append(customer(reply))
            ticket.customer_says(said[-1])


# -- the team's passhat domain --------------------------------------------------------------------------------
def seed(connection: Connection, seed: int = 0, size: str = "small") -> None:
    """Synthetic patients, two appointments each: replayed tickets lay their own rows over these."""
    connection.execute(
        insert(Patient), [{"patient_id": f"S{i}", "email": f"s{i}@clinic.test", "name": f"P {i}"} for i in range(20)]
    )
    connection.execute(
        insert(Appointment),
        [
            {"appointment_id": f"S{i}-{n}", "patient_id": f"S{i}", "day": f"2026-07-0{1 + (i + n) % 5}"}
            for i in range(20)
            for n in range(2)
        ],
    )


def candidates(connection: Connection) -> list[dict[str, Any]]:
    """Every (appointment, open day) a patient may ask to move it to."""
    rows = connection.execute(
        select(Appointment.appointment_id, Appointment.day, Patient.patient_id, Patient.email).join(
            Patient, Patient.patient_id == Appointment.patient_id
        )
    ).all()
    return [
        {
            "email": row.email,
            "patient_id": row.patient_id,
            "appointment_id": row.appointment_id,
            "day": row.day,
            "new_day": new_day,
        }
        for row in rows
        for new_day in OPEN_DAYS
        if new_day != row.day
    ]


def script(intent: Mapping[str, Any]) -> CustomerScript:
    return CustomerScript(
        goal=f"Move my appointment of {intent['day']} to {intent['new_day']}.",
        opening=f"Hi, please move my appointment on {intent['day']} to {intent['new_day']}.",
        facts={"email": intent["email"]},
    )


def check(intent: Mapping[str, Any]) -> Check:
    return all_of(
        updated("appointments", {"appointment_id": intent["appointment_id"]}, {"day": intent["new_day"]}),
        no_other_writes(),
    )


domain = Domain(
    name="clinic",
    description="A clinic's appointment desk.",
    metadata=Base.metadata,
    seed=seed,
    task_types={
        "reschedule": TaskType(
            name="reschedule",
            kind="write",
            description="Move one appointment to another day.",
            candidates=candidates,
            script=script,
            check=check,
            write_tables=frozenset({"appointments"}),
            intent_fields={
                "email": in_column("patients.email"),
                "patient_id": in_column("patients.patient_id"),
                "appointment_id": derived(),
                "day": in_column("appointments.day", type="date"),
                "new_day": free_text(type="date"),
            },
        )
    },
    lookup_tools=frozenset({"find_patient", "list_appointments"}),
    write_tools=frozenset({"move_appointment"}),
    grade="light",
)


class ReplayedDesk:
    """The same agent in a trial, on the trial's database, with the same bug at the same rate."""

    def __init__(self, context: TrialContext, wrong_rate: float) -> None:
        self.rng = random.Random(f"{context.scenario.scenario_id}#{context.attempt}")
        self.wrong_rate = wrong_rate

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        said = [message.text for message in conversation if message.role == "customer"]
        assert tools.engine is not None
        text = await asyncio.to_thread(desk_reply, tools.engine, said, self.rng, self.wrong_rate)
        return Message("agent", text, final=not text.endswith("?"))
