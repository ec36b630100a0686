import re
from dataclasses import dataclass

from agents import Agent, RunContextWrapper, Usage, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.testing import assistant_message, function_call
from sqlalchemy import Engine, String, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import passhat


class Base(DeclarativeBase):
    pass


class Patient(Base):
    __tablename__ = "patients"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String, unique=True)
    phone: Mapped[str] = mapped_column(String)


@dataclass
class Clinic:
    engine: Engine


EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"\+\d[\d ()-]{7,}\d")


class DeskModel(Model):
    """Stands in for your LLM: find the patient by email, change the phone, confirm."""

    async def get_response(
        self, system_instructions, input, model_settings, tools, output_schema, handoffs, tracing, **kwargs
    ):
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        said = " ".join(str(i.get("content", "")) for i in items if isinstance(i, dict) and i.get("role") == "user")
        returned = [i["output"] for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
        email, phone = EMAIL.search(said), PHONE.search(said)
        if email is None or phone is None:
            out = assistant_message("What is your email, and your new phone number?")
        elif not returned:
            out = function_call("find_patient", {"email": email.group(0)}, call_id=f"c{len(items)}")
        elif len(returned) == 1:
            out = function_call(
                "update_phone", {"patient_id": int(returned[0]), "phone": phone.group(0)}, call_id=f"c{len(items)}"
            )
        else:
            out = assistant_message("Done: your phone number is updated.")
        return ModelResponse(output=[out], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("this stand-in model answers whole turns only: Runner.run never streams")


@function_tool
@passhat.tool(kind="lookup")
def find_patient(ctx: RunContextWrapper[Clinic], email: str) -> int | None:
    """The id of the patient with this email."""
    with Session(ctx.context.engine) as session:  # the whole row: passhat captures it as the ticket read it
        patient = session.scalars(select(Patient).where(Patient.email == email)).first()
        return None if patient is None else patient.id


@function_tool
@passhat.tool(kind="write")
def update_phone(ctx: RunContextWrapper[Clinic], patient_id: int, phone: str) -> str:
    """Change a patient's phone number."""
    with Session(ctx.context.engine) as session:
        session.get_one(Patient, patient_id).phone = phone
        session.commit()
    return phone


desk = Agent(name="front_desk", model=DeskModel(), tools=[find_patient, update_phone])
