"""Framework adapters load their framework only when used, and say which extra to install when it is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from passhat.sandbox import DomainError
from passhat.sandbox.agents._framework import agent_reply, require


def test_importing_the_agents_loads_no_framework() -> None:
    code = (
        "import sys, passhat.sandbox.agents\n"
        "frameworks = ('pydantic_ai', 'agents', 'langgraph', 'langchain_core', 'openai')\n"
        "print(sorted(m for m in frameworks if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_missing_framework_names_the_extra_to_install() -> None:
    with pytest.raises(DomainError, match=r"pip install 'passhat\[langgraph\]'"):
        require("no_such_framework_package", "langgraph")


def test_a_missing_framework_is_named_by_its_package_not_its_import_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Agents SDK imports as `agents`: "this adapter needs agents" named no package one can install."""
    monkeypatch.setitem(sys.modules, "agents", None)  # as if not installed
    with pytest.raises(DomainError, match=r"needs the openai-agents package: pip install 'passhat\[openai-agents\]'"):
        require("agents", "openai-agents")


def test_a_question_is_not_a_final_turn_and_a_statement_is() -> None:
    assert not agent_reply("What is your email?").final
    assert agent_reply("Done: the order is cancelled.").final
    assert agent_reply("   ").text == "(no reply)"


def test_the_adapters_refuse_what_they_cannot_run() -> None:
    from passhat.sandbox.agents import langgraph_agent, openai_agents_agent, pydantic_ai_agent

    with pytest.raises(TypeError, match=r"pydantic_ai\.Agent or a factory"):
        pydantic_ai_agent(42)
    with pytest.raises(TypeError, match=r"agents\.Agent or a factory"):
        openai_agents_agent("support")
    with pytest.raises(TypeError, match="builds it per trial"):
        langgraph_agent(object())  # type: ignore[arg-type]
