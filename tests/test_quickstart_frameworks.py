"""docs/quickstart.md's "From zero" with a LangGraph agent and with an OpenAI Agents SDK agent, as the page says it
goes: the same steps, two of them different. In step 2 the agent's tools read their database from what the
framework hands them (LangGraph's runtime context through a `ToolRuntime` parameter, the Agents SDK's run context
as ``ctx.context``; production passes ``context=``), and its spans reach passhat through OpenInference's
instrumentor; in step 4 `langgraph_agent(desk, context=...)` or `openai_agents_agent(desk, context=...)` takes
the place of `pydantic_ai_agent(desk, deps=...)`. The team's files are in tests/quickstart_frameworks/<framework>/;
the domain, the config and the commands are the page's own."""

from __future__ import annotations

import pathlib
import sqlite3

import pytest

from tests.test_quickstart import assert_the_week_was_replayed, run_from_zero

APPS = pathlib.Path(__file__).resolve().parent / "quickstart_frameworks"


@pytest.mark.slow
@pytest.mark.parametrize(
    "framework, adapter", [("langgraph", "langgraph_agent"), ("openai_agents", "openai_agents_agent")]
)
def test_a_framework_agent_goes_from_zero_to_a_replayed_week(
    tmp_path: pathlib.Path, framework: str, adapter: str
) -> None:
    def saved(name: str, body: str) -> str:
        if name in ("clinic_app.py", "send_tickets.py"):  # steps 2 and 3: the team's own, on this framework
            return (APPS / framework / name).read_text(encoding="utf-8")
        if name != "clinic_domain.py":
            return body
        body = body.replace("import Base, Patient, desk", "import Base, Clinic, Patient, desk")
        body = body.replace("import pydantic_ai_agent", f"import {adapter}")
        swapped = body.replace(  # step 4, as the page says for the other frameworks
            "pydantic_ai_agent(desk, deps=lambda context, tools: tools.engine)",
            f"{adapter}(desk, context=lambda context, tools: Clinic(tools.engine))",
        )
        assert swapped != body, "the page's step 4 no longer names pydantic_ai_agent(desk, deps=...)"
        return swapped

    assert_the_week_was_replayed(tmp_path, run_from_zero(tmp_path, saved))
    # The replay's trials wrote to their own copies: production keeps what production traffic wrote.
    with sqlite3.connect(tmp_path / "production.db") as production:
        phones = dict(production.execute("SELECT id, phone FROM patients").fetchall())
    assert phones == {number: f"+44 7700 900{number:03d}" for number in range(1, 9)}
