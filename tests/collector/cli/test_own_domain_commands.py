"""Every command that reads passhat.toml accepts a team's own domain named as `module:attribute`, as replay does:
`passhat config check` and `passhat alerts history` load it from the config's folder; a wrong one is one clear
line and exit status 2, never a traceback."""

from __future__ import annotations

import pathlib
import sys
import uuid
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app

runner = CliRunner()

CLINIC = """
from sqlalchemy import Column, MetaData, String, Table, insert, select

from passhat.checks import all_of, no_other_writes, updated
from passhat.sandbox import CustomerScript, Domain, TaskType

metadata = MetaData()
patients = Table("patients", metadata, Column("id", String, primary_key=True), Column("phone", String))


def seed(connection, seed=0, size="small"):
    connection.execute(insert(patients), [{"id": f"P{i}", "phone": f"+44 20 7946 {i:04d}"} for i in range(5)])


update_phone = TaskType(
    name="update_phone",
    kind="write",
    description="Change a patient's phone number.",
    candidates=lambda connection: [{"id": r.id} for r in connection.execute(select(patients.c.id))],
    script=lambda intent: CustomerScript(goal="New phone.", opening="I have a new phone.", facts={"id": intent["id"]}),
    check=lambda intent: all_of(updated("patients", {"id": intent["id"]}, {"phone": "+1"}), no_other_writes()),
    write_tables=frozenset({"patients"}),
)
domain = Domain(
    name="clinic", description="A clinic", metadata=metadata, seed=seed, task_types={"update_phone": update_phone}
)
"""


@pytest.fixture
def module() -> Iterator[str]:
    name = f"clinic_{uuid.uuid4().hex[:8]}"  # a fresh module per test: imports are cached per process
    yield name
    sys.modules.pop(name, None)


def _project(tmp_path: pathlib.Path, module: str, domains: str) -> pathlib.Path:
    (tmp_path / f"{module}.py").write_text(CLINIC)
    entries = domains.replace("MOD", module)
    (tmp_path / "passhat.toml").write_text(
        f'project = "clinic"\ndomains = {entries}\n[store]\nurl = "sqlite:///{tmp_path / "x.db"}"\n'
    )
    return tmp_path / "passhat.toml"


def test_config_check_accepts_an_own_domain_named_module_attribute(tmp_path: pathlib.Path, module: str) -> None:
    config = _project(tmp_path, module, '["MOD:domain", "retail"]')
    done = runner.invoke(app, ["config", "check", str(config)])
    assert done.exit_code == 0, done.output
    assert f"{module}:domain" in done.output


def test_alerts_history_accepts_an_own_domain_named_module_attribute(tmp_path: pathlib.Path, module: str) -> None:
    config = _project(tmp_path, module, '["MOD:domain"]')
    done = runner.invoke(app, ["alerts", "history", "--config", str(config)])
    assert done.exit_code == 0, done.output
    assert "no sandbox domain" not in done.output


def test_a_wrong_module_attribute_is_one_line_and_status_2(tmp_path: pathlib.Path, module: str) -> None:
    config = _project(tmp_path, module, '["MOD:nothing_here", "MOD:domain"]')
    done = runner.invoke(app, ["config", "check", str(config)])
    assert done.exit_code == 2
    assert "domains[0]" in done.output and "nothing_here" in done.output
    assert "domains[1]" not in done.output


AGENT = """

class ReplayedClinicAgent:
    def __init__(self, context):
        self.context = context


def make_agent(context):
    return ReplayedClinicAgent(context)


settings = {"not": "callable"}
"""


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        ("MOD:ReplayedClinicAgnet", "has no 'ReplayedClinicAgnet'"),  # a typo
        ("MOD:ReplayedClinicAgnet", "did you mean MOD:ReplayedClinicAgent?"),
        ("MOD:settings", "is a dict, not a factory"),
        ("no_such_module_here:make_agent", "cannot import 'no_such_module_here'"),
        # It passed the check, then every trial ended as a harness failure ("missing 1 required positional ...").
        ("MOD:needs_two", "cannot be called as each trial calls it, MOD:needs_two(context)"),
    ],
)
def test_config_check_resolves_the_agent_factory_as_replay_would(
    tmp_path: pathlib.Path, module: str, factory: str, expected: str
) -> None:
    config = _project(tmp_path, module, '["MOD:domain"]')
    (tmp_path / f"{module}.py").write_text(CLINIC + AGENT + "\n\ndef needs_two(context, extra):\n    return None\n")
    expected = expected.replace("MOD", module)
    for name, code in ((factory, 2), ("MOD:make_agent", 0), ("MOD:ReplayedClinicAgent", 0)):
        text = config.read_text().replace("[store]", f'[agent]\nfactory = "{name.replace("MOD", module)}"\n[store]')
        (tmp_path / "agent.toml").write_text(text)
        done = runner.invoke(app, ["config", "check", str(tmp_path / "agent.toml")])
        assert done.exit_code == code, done.output
        if code == 2:
            assert "agent.factory" in done.output and expected in done.output and "Traceback" not in done.output
            as_json = runner.invoke(app, ["config", "check", str(tmp_path / "agent.toml"), "--json"])
            assert as_json.exit_code == 2 and expected in as_json.output
