import re
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, ToolRuntime, tools_condition
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


class DeskModel(BaseChatModel):
    """Stands in for your LLM: find the patient by email, change the phone, confirm."""

    def bind_tools(self, tools, **kwargs):
        return self

    @property
    def _llm_type(self) -> str:
        return "desk"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        said = " ".join(str(m.content) for m in messages if isinstance(m, HumanMessage))
        returned = [m for m in messages if isinstance(m, ToolMessage)]
        email, phone = EMAIL.search(said), PHONE.search(said)
        if email is None or phone is None:
            answer = AIMessage("What is your email, and your new phone number?")
        elif not returned:
            answer = AIMessage("", tool_calls=[{"name": "find_patient", "args": {"email": email.group(0)}, "id": "c1"}])
        elif len(returned) == 1:
            args = {"patient_id": int(returned[0].content), "phone": phone.group(0)}
            answer = AIMessage("", tool_calls=[{"name": "update_phone", "args": args, "id": "c2"}])
        else:
            answer = AIMessage("Done: your phone number is updated.")
        return ChatResult(generations=[ChatGeneration(message=answer)])


@tool
@passhat.tool(kind="lookup")
def find_patient(email: str, runtime: ToolRuntime[Clinic]) -> int | None:
    """The id of the patient with this email."""
    with Session(runtime.context.engine) as session:  # the whole row: passhat captures it as the ticket read it
        patient = session.scalars(select(Patient).where(Patient.email == email)).first()
        return None if patient is None else patient.id


@tool
@passhat.tool(kind="write")
def update_phone(patient_id: int, phone: str, runtime: ToolRuntime[Clinic]) -> str:
    """Change a patient's phone number."""
    with Session(runtime.context.engine) as session:
        session.get_one(Patient, patient_id).phone = phone
        session.commit()
    return phone


model = DeskModel().bind_tools([find_patient, update_phone])


def think(state: MessagesState):
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState, context_schema=Clinic)
builder.add_node("model", think)
builder.add_node("tools", ToolNode([find_patient, update_phone]))
builder.add_edge(START, "model")
builder.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
builder.add_edge("tools", "model")
desk = builder.compile(name="front_desk")
