"""The domain contract: what every sandbox domain provides, and how domains are found.

A domain is a folder `passhat/sandbox/domains/<name>/` with the same files (`models.py`, `seed.py`,
`tools.py`, `policy.md`, `tasks.py`) and a module-level `domain` object of type `Domain`, registered in the
`passhat.domains` entry-point group. Listing domains reads entry-point metadata only; a domain's modules are
imported when it is loaded.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata, resources
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from sqlalchemy import Connection, Engine, MetaData

    from passhat.checks import Check

ENTRY_POINT_GROUP = "passhat.domains"

ReferencePlan = Callable[[Any], Awaitable[None]]
"""A task type's procedure for the ReferenceAgent: a coroutine function given the agent's
``passhat.sandbox.ReferenceRun`` (typed ``Any`` here: the authoring API sits below the agents)."""

TaskKind = Literal["write", "read_only", "refuse", "confidentiality", "chain"]

FAILURE_MODES: tuple[str, ...] = (
    "skip_precondition",
    "empty_lookup",
    "error_not_retried",
    "wrong_entity",
    "unresolved",
    "no_write",
)
"""The failure modes the ReferenceAgent can inject, in the order the paper lists them."""

EXPECTED_SIGNATURE: Mapping[str, str] = {
    "skip_precondition": "tool_usage.precondition",
    "empty_lookup": "tool_usage.empty_lookup",
    "error_not_retried": "tool_usage.error_not_retried",
    "wrong_entity": "wrong_entity",
    "unresolved": "unresolved",
    "no_write": "no_write",
}
"""The failure signature the classifier should name for a trial where a mode was injected."""


class DomainError(Exception):
    """A domain, task type or scenario that does not exist or cannot be built."""


@dataclass(frozen=True)
class CustomerScript:
    """What the simulated customer knows and wants; the agent must find out everything else.

    `facts` are things the customer can tell when asked (email, name and zip, an order number, which items).
    `unknown` names what the customer does not know (ids, balances): they say so when asked.
    `stated` names the facts already given in the opening message.
    `fallback` holds second choices the customer accepts when the first fails (another payment method).
    """

    goal: str
    opening: str
    facts: Mapping[str, Any]
    stated: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    persona: str = "polite, brief, answers exactly what is asked"
    fallback: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    """One concrete ticket of a task type: the starting state, the customer's script and the check inputs.

    `intent` holds every parameter the check needs (ids, expected values), computed from the starting state
    and the customer's goal, never from what an agent did.
    """

    domain: str
    task_type: str
    scenario_id: str
    intent: Mapping[str, Any]
    script: CustomerScript
    expected_write_tables: frozenset[str] = frozenset()


@dataclass(frozen=True)
class TaskType:
    """A kind of ticket: how scenarios are drawn, what the customer says, and how a trial is graded."""

    name: str
    kind: TaskKind
    description: str
    candidates: Callable[[Connection], list[dict[str, Any]]]
    script: Callable[[Mapping[str, Any]], CustomerScript]
    check: Callable[[Mapping[str, Any]], Check]
    reference: ReferencePlan | None = None
    """The ReferenceAgent's procedure: needed only to run this task type with the offline ReferenceAgent."""
    failure_modes: frozenset[str] = frozenset()
    """The modes the ReferenceAgent may inject here (see `FAILURE_MODES`); only used with the ReferenceAgent."""
    write_tables: frozenset[str] = frozenset()
    needs_initial: bool = True
    """Whether checks get `CheckContext.initial` (the starting snapshot): on by default, since primitives such
    as `updated` and `no_other_writes` use it to tell the right row from a sibling. A task type whose checks
    carry every expected value (computed at scenario generation) may turn it off to grade a little faster."""

    def scenarios(self, domain: str, connection: Connection, count: int, *, seed: int = 0) -> list[Scenario]:
        """Draw `count` distinct scenarios (fewer if the data has fewer), reproducibly from `seed`."""
        pool = self.candidates(connection)
        if not pool:
            raise DomainError(f"task type {domain}/{self.name} has no eligible data in this seed")
        rng = random.Random(f"{domain}/{self.name}/{seed}")
        chosen = rng.sample(pool, min(count, len(pool)))
        return [
            Scenario(
                domain=domain,
                task_type=self.name,
                scenario_id=f"{domain}/{self.name}/{seed}/{index:04d}",
                intent=intent,
                script=self.script(intent),
                expected_write_tables=self.write_tables,
            )
            for index, intent in enumerate(chosen)
        ]


@dataclass(frozen=True)
class Domain:
    """A sandbox backend: tables, a seed generator, an MCP tool server factory, a policy and task types.

    `build_server(engine)` returns a fresh `MCPServer` whose tools act on that one trial's database and
    keep their session state (who was identified) per server; a domain whose agents use the database directly
    leaves it out. `lookup_tools` / `write_tools` classify the tools (MCP ones or the agent's own
    `@passhat.tool` functions) so a trial record can tell an empty lookup from a rejected write.
    """

    name: str
    description: str
    metadata: MetaData
    seed: Callable[[Connection, int, str], None]
    task_types: Mapping[str, TaskType]
    build_server: Callable[[Engine], MCPServer] | None = None
    """None for a backend without MCP tools: its agents use the trial's database (`Toolbox.engine`) directly."""
    lookup_tools: frozenset[str] = frozenset()
    write_tools: frozenset[str] = frozenset()
    policy_resource: tuple[str, str] | None = None
    policy_text: str = ""
    sizes: tuple[str, ...] = ("small", "default")

    @property
    def policy(self) -> str:
        """The written policy (markdown) the agent must follow: package data (`policy_resource`) or text."""
        if self.policy_resource is None:
            return self.policy_text
        package, name = self.policy_resource
        return resources.files(package).joinpath(name).read_text(encoding="utf-8")

    def task_type(self, name: str) -> TaskType:
        """The task type called `name`, or a DomainError listing the ones that exist."""
        try:
            return self.task_types[name]
        except KeyError:
            known = ", ".join(sorted(self.task_types))
            raise DomainError(f"domain {self.name!r} has no task type {name!r}; known: {known}") from None


def available_domains() -> list[str]:
    """Names of the installed domains (entry-point metadata only: nothing is imported)."""
    return sorted({ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)})


_loaded: dict[str, Domain] = {}


def load_domain(name: str) -> Domain:
    """Import and return the domain registered as `name`, or a DomainError naming the installed ones."""
    if name in _loaded:
        return _loaded[name]
    matches = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not matches:
        known = ", ".join(available_domains()) or "none"
        raise DomainError(f"no sandbox domain named {name!r}; installed: {known}")
    loaded = matches[0].load()
    if not isinstance(loaded, Domain):
        raise DomainError(f"entry point {name!r} in {ENTRY_POINT_GROUP} is not a passhat.sandbox.Domain")
    _loaded[name] = loaded
    return loaded
