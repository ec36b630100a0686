"""The frozen suite: a fixed set of tasks over the five shipped domains, and the manifest that pins it.

A suite version fixes everything a task is: the seeded data (one database per domain, from the version's data
seed), and for each task its id, its scenario (the customer's script and the intent its check is built from)
and its check. Tasks are derived deterministically from (version, task id): the task type's scenario draw at the
version's seed, in order. The manifest hashes all of that content (every row of every domain's starting data,
every task's intent, script and check spec), so a code change that alters any task (a seed generator, a
scenario draw, a check) changes the hash and fails the pin test: a new suite needs a new version.

The mix follows the seed's benchmark: the deep domains carry more tasks (consulting the most, retail the
fewest), and about 6% of the tasks are graded on the final response as well as the state (a disclosure, a
refusal, a confidentiality rule), the rest on the backend's state alone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import functools
import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passhat.sandbox import Domain, DomainError, Scenario, build_database, load_domain

if TYPE_CHECKING:
    from sqlalchemy import Connection

SUITE_VERSION = "v1"
"""The current suite version (`passhat suite run` runs it unless told otherwise)."""


@dataclass(frozen=True)
class SuiteSpec:
    """What a version is made of: the data seed and size, and the tasks each domain carries."""

    version: str
    data_seed: int
    size: str
    domains: Mapping[str, int]
    """Tasks per domain (the deep domains carry more)."""
    response_share: float
    """The share of a domain's tasks whose check also reads the final response (spread over its task types
    that read it; the rest go to the state-graded task types)."""


SPECS: Mapping[str, SuiteSpec] = {
    "v1": SuiteSpec(
        version="v1",
        data_seed=507,
        size="small",
        domains={"retail": 80, "travel": 92, "banking": 95, "insurance": 110, "consulting": 130},
        response_share=0.06,
    ),
}

MANIFEST_HASHES: Mapping[str, str] = {
    "v1": "16850c072d276e99ab199acb4b600c1630536f77c0bbea68fc9ad449ae4299ce",
}
"""The content hash each released version must keep (`tests/suite/test_suite_tasks.py` holds it too)."""


@dataclass(frozen=True)
class SuiteTask:
    """One task: a fixed scenario of one task type, graded by its check (and the final response if flagged)."""

    task_id: str
    domain: str
    task_type: str
    kind: str
    scenario: Scenario
    response_check: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id, "domain": self.domain, "task_type": self.task_type, "kind": self.kind,
            "response_check": self.response_check,
        }  # fmt: skip


@dataclass(frozen=True)
class Suite:
    """A built suite version: its tasks and the hash of their content."""

    spec: SuiteSpec
    tasks: tuple[SuiteTask, ...]
    content_hash: str

    @property
    def version(self) -> str:
        return self.spec.version

    def select(self, *, domains: Sequence[str] = (), task_types: Sequence[str] = ()) -> list[SuiteTask]:
        """The tasks of these domains and task types (every one when empty); unknown names raise `SuiteError`."""
        known_domains = {t.domain for t in self.tasks}
        known_types = {t.task_type for t in self.tasks}
        for name in domains:
            if name not in known_domains:
                raise SuiteError(f"suite {self.version} has no domain {name!r}; its domains: {_names(known_domains)}")
        for name in task_types:
            if name not in known_types:
                raise SuiteError(
                    f"suite {self.version} has no task type {name!r}; `passhat suite list` shows its task types"
                )
        return [
            t
            for t in self.tasks
            if (not domains or t.domain in domains) and (not task_types or t.task_type in task_types)
        ]

    def manifest(self) -> dict[str, Any]:
        """Version, hash, and per domain its task types with their task counts (`passhat suite list --json`)."""
        domains: dict[str, dict[str, Any]] = {}
        for task in self.tasks:
            entry = domains.setdefault(task.domain, {"tasks": 0, "task_types": {}})
            entry["tasks"] += 1
            kinds = entry["task_types"].setdefault(
                task.task_type, {"kind": task.kind, "tasks": 0, "response_check": task.response_check}
            )
            kinds["tasks"] += 1
        return {
            "version": self.version,
            "content_hash": self.content_hash,
            "tasks": len(self.tasks),
            "response_checked": sum(t.response_check for t in self.tasks),
            "data_seed": self.spec.data_seed,
            "size": self.spec.size,
            "domains": domains,
        }


class SuiteError(ValueError):
    """A suite version, domain or task type that does not exist (the message lists what does)."""


def _names(names: set[str]) -> str:
    return ", ".join(sorted(names))


def versions() -> list[str]:
    """The suite versions this passhat knows."""
    return list(SPECS)


def spec_of(version: str) -> SuiteSpec:
    try:
        return SPECS[version]
    except KeyError:
        raise SuiteError(f"no suite version {version!r}; known: {', '.join(SPECS)}") from None


def load_suite(version: str = SUITE_VERSION) -> Suite:
    """Build a suite version's tasks from the shipped domains (seconds: each domain's data is seeded once; the
    suite is kept for the process after)."""
    return _build(spec_of(version).version)


@functools.cache
def _build(version: str) -> Suite:
    spec = spec_of(version)
    tasks: list[SuiteTask] = []
    digest = hashlib.sha256(f"passhat-suite/{version}/{spec.data_seed}/{spec.size}".encode())
    for name, count in spec.domains.items():
        domain = load_domain(name)
        with tempfile.TemporaryDirectory(prefix="passhat-suite-") as folder:
            path = Path(folder) / f"{name}.sqlite"
            build_database(domain, path, seed=spec.data_seed, size=spec.size)
            digest.update(_data_hash(path).encode())
            from sqlalchemy import create_engine

            engine = create_engine(f"sqlite:///{path}")
            try:
                with engine.connect() as connection:
                    found = _domain_tasks(domain, connection, spec, count)
            finally:
                engine.dispose()
        for task in found:
            digest.update(_canonical(_task_content(domain, task)).encode())
        tasks.extend(found)
    return Suite(spec, tuple(tasks), digest.hexdigest())


def _domain_tasks(domain: Domain, connection: Connection, spec: SuiteSpec, count: int) -> list[SuiteTask]:
    """``count`` tasks of one domain: its response share over the task types whose check reads the final
    response, the rest spread evenly over the state-graded ones (capped by the scenarios the data allows, the
    remainder to those with room)."""
    names = sorted(domain.task_types)
    pools = {name: domain.task_types[name].candidates(connection) for name in names}
    response = {name: _reads_response(domain, name, pools[name]) for name in names}
    readers = [name for name in names if response[name]]
    share = max(len(readers), round(spec.response_share * count)) if readers else 0
    wanted = {name: share // len(readers) + (index < share % len(readers)) for index, name in enumerate(readers)}
    state = [name for name in names if not response[name]]
    left = count - sum(wanted.values())
    while left > 0:
        room = [name for name in state if wanted.get(name, 0) < len(pools[name])]
        if not room:
            raise DomainError(f"the {domain.name} data (seed {spec.data_seed}) cannot give {count} suite tasks")
        for name in room[:left]:
            wanted[name] = wanted.get(name, 0) + 1
        left = count - sum(wanted.values())
    tasks = []
    for name in names:
        drawn = domain.task_types[name].scenarios(domain.name, connection, wanted.get(name, 0), seed=spec.data_seed)
        for index, scenario in enumerate(drawn):
            task_id = f"suite-{spec.version}/{domain.name}/{name}/{index:02d}"
            tasks.append(
                SuiteTask(
                    task_id, domain.name, name, domain.task_types[name].kind,
                    dataclasses.replace(scenario, scenario_id=task_id), response[name],
                )
            )  # fmt: skip
    return tasks


def _reads_response(domain: Domain, task_type: str, pool: list[dict[str, Any]]) -> bool:
    """Whether the task type's check reads the agent's final response (a disclosure, a refusal, a secret)."""
    if not pool:
        return False
    text = _canonical(check_spec(domain.task_types[task_type].check(pool[0])))
    return '"response_contains"' in text or '"response_omits"' in text


def check_spec(check: object) -> Any:
    """A check as JSON-able data: its registered spec, else its members' specs (a composed callable)."""
    try:
        spec = getattr(check, "spec", None)
    except Exception:  # a registered check whose arguments do not encode (its members still do)
        spec = None
    if isinstance(spec, Mapping):
        return dict(spec)
    members = getattr(check, "members", None)
    if isinstance(members, list):
        return {"check": getattr(check, "name", type(check).__name__), "members": [check_spec(m) for m in members]}
    return {"callable": getattr(check, "__qualname__", type(check).__qualname__)}


def _task_content(domain: Domain, task: SuiteTask) -> dict[str, Any]:
    scenario = task.scenario
    return {
        "task_id": task.task_id,
        "task_type": task.task_type,
        "intent": scenario.intent,
        "script": dataclasses.asdict(scenario.script),
        "write_tables": sorted(scenario.expected_write_tables),
        "check": check_spec(domain.task_types[task.task_type].check(scenario.intent)),
        "consent": {tool: list(keys) for tool, keys in sorted(domain.consent.items())},
        "response_check": task.response_check,
    }


def _data_hash(path: Path) -> str:
    """Every row of every table of the domain's starting data (the SQLite file), hashed in rowid order."""
    digest = hashlib.sha256()
    connection = sqlite3.connect(path)
    try:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in sorted(tables):
            digest.update(name.encode())
            for row in connection.execute(f'SELECT * FROM "{name}" ORDER BY rowid'):
                digest.update(_canonical(list(row)).encode())
    finally:
        connection.close()
    return digest.hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=_plain, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime, dt.time, decimal.Decimal)):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value, key=repr)
    if isinstance(value, bytes):
        return value.hex()
    return repr(value)
