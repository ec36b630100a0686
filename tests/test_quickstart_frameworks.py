"""docs/quickstart.md's "From zero" with a LangGraph agent and with an OpenAI Agents SDK agent, as the page says it
goes: the same steps, two of them different. In step 2 the agent's tools read their database from what the
framework hands them (LangGraph's runtime context through a `ToolRuntime` parameter, the Agents SDK's run context
as ``ctx.context``; production passes ``context=``), and its spans reach passhat through OpenInference's
instrumentor; in step 4 `langgraph_agent(desk, context=...)` or `openai_agents_agent(desk, context=...)` takes
the place of `pydantic_ai_agent(desk, deps=...)`. The team's files are in tests/quickstart_frameworks/<framework>/;
the domain, the config and the commands are the page's own."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import sys

import pytest

from tests.test_quickstart import BLOCK, _free_port, from_zero

APPS = pathlib.Path(__file__).resolve().parent / "quickstart_frameworks"


@pytest.mark.slow
@pytest.mark.parametrize(
    "framework, adapter", [("langgraph", "langgraph_agent"), ("openai_agents", "openai_agents_agent")]
)
def test_a_framework_agent_goes_from_zero_to_a_replayed_week(
    tmp_path: pathlib.Path, framework: str, adapter: str
) -> None:
    port = _free_port()
    (tmp_path / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    for name in ("clinic_app.py", "send_tickets.py"):
        shutil.copy(APPS / framework / name, tmp_path / name)
    script = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    for language, name, body in BLOCK.findall(from_zero()):
        if name == "clinic_domain.py":  # step 4, as the page says for the other frameworks
            body = body.replace("import Base, Patient, desk", "import Base, Clinic, Patient, desk")
            body = body.replace("import pydantic_ai_agent", f"import {adapter}")
            swapped = body.replace(
                "pydantic_ai_agent(desk, deps=lambda context, tools: tools.engine)",
                f"{adapter}(desk, context=lambda context, tools: Clinic(tools.engine))",
            )
            assert swapped != body, "the page's step 4 no longer names pydantic_ai_agent(desk, deps=...)"
            (tmp_path / name).write_text(swapped, encoding="utf-8")
        elif name == "passhat.toml":
            (tmp_path / name).write_text(body, encoding="utf-8")
        elif language == "bash" and "send_tickets.py" not in body:
            body = body.replace("127.0.0.1:4318", f"127.0.0.1:{port}")
            script.append(body.replace("serve --data-dir passhat-data", f"serve --data-dir passhat-data --port {port}"))
        elif language == "bash":
            script.append(".venv/bin/python send_tickets.py")
    env = {**os.environ, "PASSHAT_ENDPOINT": f"http://127.0.0.1:{port}", "PYTHONPATH": str(tmp_path)}
    env.pop("PASSHAT_CONFIG", None)
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # The configured adapter (its context a lambda) reaches the worker processes by its name: every core ran trials.
    assert "on one core" not in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-3000:]
    [report_json] = tmp_path.glob("reports/*/report.json")
    report = json.loads(report_json.read_text())
    assert report["not_replayable"] == []
    [row] = report["task_types"]
    assert row["task_type"] == "update_phone" and row["tickets_sampled"] == 8 and row["trials"] == 32
    assert row["pass_at_1"] == 1.0
    # The replay's trials wrote to their own copies: production keeps what production traffic wrote.
    with sqlite3.connect(tmp_path / "production.db") as production:
        phones = dict(production.execute("SELECT id, phone FROM patients").fetchall())
    assert phones == {number: f"+44 7700 900{number:03d}" for number in range(1, 9)}
    stored = b"".join(p.read_bytes() for p in (tmp_path / "passhat-data").iterdir() if p.is_file())
    for number in range(1, 9):  # the framework's spans carry the messages: none in clear in the collector's data
        assert f"patient{number}@clinic-mail.org".encode() not in stored
        assert f"+44 7700 900{number:03d}".encode() not in stored
