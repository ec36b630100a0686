"""The domain contract: what every sandbox domain provides, and how domains are found.

A domain is a package `passhat/sandbox/domains/<name>/` (or any package of yours) with its tables, seed, a
module or package per system, `policy.md`, its task families, and a module-level `domain` object of type
`Domain`, registered in the `passhat.domains` entry-point group. Listing domains reads entry-point metadata
only; a domain's modules are imported when it is loaded.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib import metadata, resources
from typing import TYPE_CHECKING, Any, Literal

from passhat.checks import ERROR_CATEGORIES, with_consent
from passhat.sandbox.domain._identity import IdentityCheck
from passhat.sandbox.domain._intent import IntentField
from passhat.sandbox.domain._systems import System, SystemsServer
from passhat.sandbox.domain._toolkit import STANDARD_ERRORS

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from sqlalchemy import Connection, Engine, MetaData

    from passhat.checks import Check
    from passhat.sandbox.domain._in_process import InProcessTools, ServerTools

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
    "act_before_confirm",
)
"""The failure modes the ReferenceAgent can inject, in the order the paper lists them (and acting before the
customer's yes, which applies by itself to every write task of a domain whose policy asks for consent)."""

CONVERSATIONAL_MODES: frozenset[str] = frozenset({"empty_lookup", "unresolved"})
"""The modes of a task with no write: give up after a mistyped lookup, or close without an answer."""

KIND_FAILURE_MODES: Mapping[TaskKind, frozenset[str]] = {
    "write": frozenset(FAILURE_MODES),
    "chain": frozenset(FAILURE_MODES),
    "read_only": CONVERSATIONAL_MODES,
    "refuse": CONVERSATIONAL_MODES,
    "confidentiality": CONVERSATIONAL_MODES,
}
"""A task type's failure modes by its kind: every mode where the agent writes, the conversational ones elsewhere."""

EXPECTED_SIGNATURE: Mapping[str, str] = {
    "skip_precondition": "tool_usage.precondition",
    "empty_lookup": "tool_usage.empty_lookup",
    "error_not_retried": "tool_usage.error_not_retried",
    "wrong_entity": "wrong_entity",
    "unresolved": "unresolved",
    "no_write": "no_write",
    "act_before_confirm": "policy_violation",
}
"""The failure signature the classifier should name for a trial where a mode was injected."""


class DomainError(Exception):
    """A domain, task type or scenario that does not exist or cannot be built."""


@dataclass(frozen=True)
class CustomerScript:
    """What the simulated customer knows and wants; the agent must find out everything else.

    `facts` are things the customer can tell when asked (an email, an employee id, a card's last four digits).
    `asked_as` gives, per fact, the words an agent may use to ask for it in free text ("employee id", "staff
    number"); a fact without an entry is asked for by its key's words ("card_last_four": "card last four").
    `unknown` names what the customer does not know (ids, balances): they say so when asked.
    `stated` names the facts already given in the opening message.
    `fallback` holds second choices the customer accepts when the first fails (another payment method).
    `subject` names whom the ticket is about when the caller is someone else (a manager calling for an
    employee: the caller's own facts verify the requester, `subject` the person whose records change); empty
    when the caller asks about themselves.
    """

    goal: str
    opening: str
    facts: Mapping[str, Any]
    stated: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    persona: str = "polite, brief, answers exactly what is asked"
    fallback: Mapping[str, Any] = field(default_factory=dict)
    asked_as: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    subject: Mapping[str, Any] = field(default_factory=dict)

    def words_for(self, key: str) -> tuple[str, ...]:
        """The words that, in an agent's question, ask for the fact `key`."""
        return self.asked_as.get(key) or (key.replace("_", " "),)


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
    """The modes the ReferenceAgent may inject here (see `FAILURE_MODES`); only used with the ReferenceAgent.
    Left out (or empty), they follow from `kind` (`KIND_FAILURE_MODES`), less `without_modes`."""
    write_tables: frozenset[str] = frozenset()
    needs_initial: bool = True
    """Whether checks get `CheckContext.initial` (the starting snapshot): on by default, since primitives such
    as `updated` and `no_other_writes` use it to tell the right row from a sibling. A task type whose checks
    carry every expected value (computed at scenario generation) may turn it off to grade a little faster."""
    intent_fields: Mapping[str, IntentField] = field(default_factory=dict)
    """The intent's fields by path (``in_column`` / ``in_enum`` / ``free_text`` / ``derived`` of
    ``passhat.sandbox.domain``): what
    lets the collector infer the intent of a ticket that recorded none. Empty: such tickets are not replayable."""

    without_modes: frozenset[str] = frozenset()
    """Modes the kind implies that cannot happen here, e.g. `wrong_entity` when every row the task touches is
    the only one of its kind (no sibling to confuse it with)."""

    def __post_init__(self) -> None:
        if self.kind not in KIND_FAILURE_MODES:
            raise DomainError(f"task type {self.name!r} has kind {self.kind!r}; known: {', '.join(KIND_FAILURE_MODES)}")
        unknown = sorted((self.failure_modes | self.without_modes) - set(FAILURE_MODES))
        if unknown:
            raise DomainError(
                f"task type {self.name!r} names unknown failure modes {unknown}; known: {', '.join(FAILURE_MODES)}"
            )
        modes = self.failure_modes or KIND_FAILURE_MODES[self.kind]
        # Frozen: the derived modes are set once, here.
        object.__setattr__(self, "failure_modes", frozenset(modes - self.without_modes))

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
    """A sandbox backend: tables, a seed generator, its systems' tools over MCP, a policy and task types.

    `systems` are the domain's backends, each with its own tables and `@tool` methods; from them the domain
    derives `build_server(engine)` (a fresh `MCPServer` per trial, every system's tools on it, each described
    with its system, keeping session state such as who was identified per server), `lookup_tools` and
    `write_tools`. A domain may instead give `build_server` and the two tool sets by hand (contract v1), or
    leave out both systems and `build_server` when its agents use the trial's database directly; then
    `lookup_tools` / `write_tools` classify the agent's own `@passhat.tool` functions, so a trial record can
    still tell an empty lookup from a rejected write. `errors` is the domain's error vocabulary: each error type
    its tools return, mapped onto the classifier's categories (`passhat.checks.ERROR_CATEGORIES`). `identity`
    says how a caller is verified (one factor, two factors, or a requester's authority over the subject); the
    ReferenceAgent's `identify` follows it. `grade` is `benchmark` (every contract property, reference plans
    included) or `light` (a user's own domain without reference plans: the properties that need no
    ReferenceAgent). `consent` is the policy's rule "change nothing before the customer's yes": each write tool
    that needs consent, with the arguments whose values the agent must state when it proposes the action (values the
    customer recognises: an order number, an amount; empty when any proposal will do); every task type is then
    graded with `confirmed_before`.
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
    systems: tuple[System, ...] = ()
    errors: Mapping[str, str] = field(default_factory=lambda: dict(STANDARD_ERRORS))
    identity: IdentityCheck | None = None
    grade: Literal["benchmark", "light"] = "benchmark"
    consent: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    instructions: str = ""
    policy_resource: tuple[str, str] | None = None
    policy_text: str = ""
    sizes: tuple[str, ...] = ("small", "default")

    def __post_init__(self) -> None:
        unknown = sorted({c for c in self.errors.values() if c not in ERROR_CATEGORIES})
        if unknown:
            raise DomainError(
                f"domain {self.name!r} maps error types onto unknown categories {unknown}; "
                f"known: {', '.join(ERROR_CATEGORIES)}"
            )
        if not self.systems:
            return
        server = SystemsServer(
            f"passhat-{self.name}", self.instructions or f"{self.description} (passhat sandbox)", self.systems
        )
        kinds = server.tool_kinds
        # Frozen: the derived fields are set once, here, from the systems' declarations.
        object.__setattr__(self, "build_server", server.build)
        object.__setattr__(self, "lookup_tools", frozenset(n for n, k in kinds.items() if k == "lookup"))
        object.__setattr__(self, "write_tools", frozenset(n for n, k in kinds.items() if k == "write"))
        object.__setattr__(self, "_tool_systems", server.tool_systems)
        object.__setattr__(self, "_systems_server", server)

    def in_process_tools(self, engine: Engine) -> InProcessTools | ServerTools | None:
        """The domain's tools on `engine`'s database, called in this process without the MCP protocol.

        The trusted path for agents in the trial's own process (None for a domain without MCP tools)."""
        server: SystemsServer | None = getattr(self, "_systems_server", None)
        if server is not None:
            return server.bind(engine)
        if self.build_server is None:
            return None
        from passhat.sandbox.domain._in_process import ServerTools

        return ServerTools(self.build_server(engine))

    @property
    def tool_systems(self) -> Mapping[str, str]:
        """Tool name -> the system it belongs to (empty for a domain without declared systems)."""
        systems: Mapping[str, str] = getattr(self, "_tool_systems", {})
        return systems

    def system(self, name: str) -> System:
        """The system called `name`, or a DomainError listing the domain's systems."""
        for system in self.systems:
            if system.name == name:
                return system
        known = ", ".join(s.name for s in self.systems) or "none"
        raise DomainError(f"domain {self.name!r} has no system {name!r}; systems: {known}")

    @property
    def policy(self) -> str:
        """The written policy (markdown) the agent must follow: package data (`policy_resource`) or text."""
        if self.policy_resource is None:
            return self.policy_text
        package, name = self.policy_resource
        return resources.files(package).joinpath(name).read_text(encoding="utf-8")

    def check_for(self, task_type: str, intent: Mapping[str, Any]) -> Check:
        """The check a trial of `task_type` is graded with: the task type's own check for this intent and, when
        the policy asks for consent (`consent`), the customer's yes before each of those writes."""
        own = self.task_type(task_type).check(intent)
        if not self.consent:
            return own
        return with_consent(own, {tool: list(keys) for tool, keys in self.consent.items()})

    def failure_modes_of(self, task_type: str) -> frozenset[str]:
        """The modes the ReferenceAgent may inject in `task_type`: its own, and acting before the customer's yes
        in every write task of a domain whose policy asks for consent."""
        task = self.task_type(task_type)
        if self.consent and task.kind in ("write", "chain"):
            return task.failure_modes | {"act_before_confirm"}
        return task.failure_modes

    def task_type(self, name: str) -> TaskType:
        """The task type called `name`, or a DomainError listing the ones that exist."""
        try:
            return self.task_types[name]
        except KeyError:
            known = ", ".join(sorted(self.task_types))
            raise DomainError(f"domain {self.name!r} has no task type {name!r}; known: {known}") from None


def declare_intents(
    task_types: Mapping[str, TaskType], fields: Mapping[str, Mapping[str, IntentField]]
) -> dict[str, TaskType]:
    """``task_types`` with each one's intent fields from ``fields`` (task type name -> field path -> field)."""
    unknown = sorted(set(fields) - set(task_types))
    if unknown:
        raise DomainError(f"intent fields declared for unknown task types {unknown}; known: {sorted(task_types)}")
    return {
        name: replace(task, intent_fields=dict(fields[name])) if name in fields else task
        for name, task in task_types.items()
    }


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
