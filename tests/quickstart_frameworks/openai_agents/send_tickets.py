import asyncio

from agents import Runner
from clinic_app import Base, Clinic, Patient, desk
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

import passhat

passhat.configure(service_name="clinic-desk", set_global=True)
OpenAIAgentsInstrumentor().instrument()
engine = create_engine("sqlite:///production.db")
Base.metadata.create_all(engine)
passhat.instrument_sqlalchemy(engine)
with Session(engine) as session:
    session.add_all(
        Patient(id=i, email=f"patient{i}@clinic-mail.org", phone=f"+44 20 7946 {i:04d}") for i in range(1, 9)
    )
    session.commit()


async def main() -> None:
    for number in range(1, 9):
        email, phone = f"patient{number}@clinic-mail.org", f"+44 7700 900{number:03d}"
        intent = {"patient_id": number, "email": email, "phone": phone}
        with passhat.ticket(f"T-{number}", task_type="update_phone", intent=intent) as ticket:
            said = f"Hi, I'm {email}; my new number is {phone}."
            ticket.customer_says(said)
            result = await Runner.run(desk, said, context=Clinic(engine))
            ticket.agent_says(str(result.final_output))
            ticket.resolve()


asyncio.run(main())
assert passhat.flush(30)
