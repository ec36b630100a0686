"""The one rule for trials the harness broke: never the agent's failure, left out of every figure, shown by cause.

A trial whose failure signature is `infra_error` (the harness, a tool server, the agent's service or a check
broke) or `simulator_error` (the simulated customer failed) says nothing about the agent. Every estimator
(pass@1, pass@k, pass^k, curves, mixture, traffic, alerts, comparisons) reads trials through `agent_trials`;
what was left out is reported by `harness_failures`, grouped by the error's type and message with a fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from passhat.checks import NOT_AGENT_FAULT

HARNESS_SIGNATURES: frozenset[str] = frozenset(NOT_AGENT_FAULT)
"""The failure signatures of trials the harness broke: `infra_error` and `simulator_error`."""


class SignedTrial(Protocol):
    """What the rule reads of a trial: its failure signature and the signature's evidence (the error)."""

    @property
    def failure_label(self) -> str | None: ...

    @property
    def failure_evidence(self) -> str | None: ...


T = TypeVar("T", bound=SignedTrial)


def is_harness_failure(trial: SignedTrial) -> bool:
    """Whether the harness, not the agent, ended this trial (signature `infra_error` or `simulator_error`).

    A stored row also says so by its error columns (``infra_error``, ``simulator_error``), which its signature
    always matches when the runner wrote it; either is enough.
    """
    if trial.failure_label in HARNESS_SIGNATURES:
        return True
    return bool(getattr(trial, "infra_error", None) or getattr(trial, "simulator_error", None))


def agent_trials(trials: Iterable[T]) -> list[T]:
    """The trials that speak about the agent: every estimator's input."""
    return [trial for trial in trials if not is_harness_failure(trial)]


@dataclass(frozen=True)
class HarnessFailure:
    """Trials the harness broke for one cause: the signature, the error's type and message, and what fixes it."""

    signature: str
    error_type: str
    message: str
    trials: int
    fix: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "error_type": self.error_type,
            "message": self.message,
            "trials": self.trials,
            "fix": self.fix,
        }

    @property
    def summary(self) -> str:
        """One line: how many trials, the error's type and message."""
        return f"{self.trials} trial(s), {self.signature}: {self.error_type}: {self.message}"


_RAISED = re.compile(
    r"^(?P<where>[\w ]+?)(?: raised|: raised| failed(?: to open)?(?: on \w+)?:)\s*"
    r"(?P<type>[A-Za-z_][\w.]*)\((?P<args>.*)\)\s*$",
    re.S,
)
_RAISED_BY = re.compile(r"^(?P<where>\S.*?) raised [A-Za-z_][\w.]*\(", re.S)
_QUOTED = re.compile(r"^(['\"])(?P<text>.*)\1$", re.S)
_VOLATILE = re.compile(r"\b[0-9a-f]{8,}\b|(?<=[:#/])\d{2,}\b|\b\d+(?:\.\d+)?\s*(?:ms|s)\b")


def parse_error(signature: str, evidence: str | None) -> tuple[str, str]:
    """(error type, message) of a harness failure's evidence, e.g. ``agent raised UserError('...')``."""
    text = (evidence or "").strip()
    if not text:
        return ("unknown", "no message was recorded")
    found = _RAISED.match(text)
    if found is not None:
        args = found.group("args").strip()
        quoted = _QUOTED.match(args)
        message = quoted.group("text") if quoted else args
        return found.group("type").rsplit(".", 1)[-1], _unescape(message) or found.group("where")
    named = re.match(r"^(?P<type>[A-Z]\w*(?:Error|Exception|Timeout))\s*[:(]\s*(?P<message>.*?)\)?$", text, re.S)
    if named is not None:
        return named.group("type"), named.group("message").strip()
    return ("SimulatorError" if signature == "simulator_error" else "InfrastructureError"), text


def _column_of(trial: SignedTrial) -> str:
    return "infra_error" if getattr(trial, "infra_error", None) else "simulator_error"


def _unescape(text: str) -> str:
    return text.replace("\\'", "'").replace('\\"', '"').replace("\\n", "\n").strip()


def harness_failures(trials: Iterable[SignedTrial], *, limit: int = 500) -> list[HarnessFailure]:
    """The trials the harness broke, grouped by (signature, error type, message), the most frequent first.

    Parts of a message that differ from trial to trial (ports, ids, durations) do not split a group; the
    message shown is the first trial's. ``limit`` caps the characters of a message shown.
    """
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for trial in trials:
        if not is_harness_failure(trial):
            continue
        stored = getattr(trial, "infra_error", None) or getattr(trial, "simulator_error", None)
        signature = str(trial.failure_label if trial.failure_label in HARNESS_SIGNATURES else _column_of(trial))
        evidence = stored or trial.failure_evidence
        error_type, message = parse_error(signature, evidence)
        key = (signature, error_type, _VOLATILE.sub("…", message))
        entry = groups.setdefault(key, [message, 0, _raised_by(evidence)])
        entry[1] += 1
    found = [
        HarnessFailure(
            signature, error_type, message[:limit], count, error_fix(signature, error_type, message, raised_by=by)
        )
        for (signature, error_type, _), (message, count, by) in groups.items()
    ]
    return sorted(found, key=lambda group: (-group.trials, group.signature, group.error_type, group.message))


_URL = re.compile(r"(https?://[^\s'\",)]+[^\s'\",):.])")
_TOOL_NAME = re.compile(r"conflicts with existing tool[^:]*:\s*'(?P<name>[^']+)'")


_MODEL_API_ERRORS = frozenset(
    {
        "APIConnectionError", "APIStatusError", "APIResponseValidationError", "InternalServerError",
        "RateLimitError", "AuthenticationError", "PermissionDeniedError", "NotFoundError", "BadRequestError",
        "UnprocessableEntityError", "ConflictError", "OverloadedError", "ServiceUnavailableError",
        "GatewayTimeoutError",
    }
)  # fmt: skip
"""The errors of the `openai` and `anthropic` clients (the same names in both) when the model's API failed."""


_MODEL_SERVER_ERRORS = frozenset({"ModelServerError", "ModelServerUnusableError"})
"""A model agent's or customer's failed call, naming its server (`passhat.sandbox.ModelServerError`)."""


def _model_server_fix(signature: str, lowered: str, where: str) -> str:
    whose = "the simulated customer's model server (--customer)" if signature == "simulator_error" else (
        "the agent's model server"
    )  # fmt: skip
    if "could not be reached" in lowered:
        return (
            f"{whose} at {where} could not be reached: is it running? Start it, or give the URL it listens on "
            "(--base-url, agent.base_url, OPENAI_BASE_URL or ANTHROPIC_BASE_URL)"
        )
    if "refused the key" in lowered:
        return f"{whose} at {where} refused the key: check OPENAI_API_KEY or ANTHROPIC_API_KEY for this server"
    if "answered 404" in lowered:
        return (
            f"{whose} at {where} answered 404: check the URL's path (an OpenAI-compatible server's usually ends "
            "in /v1) and the model's name (--model, agent.model)"
        )
    if "did not answer in time" in lowered:
        return f"{whose} at {where} did not answer in time: lower --parallel, or check the server's load"
    return (
        f"{whose} at {where} failed: its own log says why (the message quotes what it answered); check its key, "
        "model name and quota"
    )


_BROKEN_CHECK = re.compile(r"\bthe check .+? (?:raised|returned) \w", re.S)
"""How the grader words a check that broke (`passhat.checks.evaluate`): "the check NAME raised ValueError: ..." or
"the check NAME returned NoneType; ...". Any other message that says "check" (an adapter's "check the names")
is not a check's."""


def _raised_by(evidence: str | None) -> str:
    """Who raised, as the evidence names it: "agent" (mid-conversation), "the agent factory NAME"...; "" if none."""
    found = _RAISED_BY.match((evidence or "").strip())
    return found.group("where") if found is not None else ""


def error_fix(signature: str, error_type: str, message: str, *, raised_by: str = "") -> str:
    """What to do about a harness failure, from its type and message (and who raised it, when the evidence says:
    ``agent`` for an exception out of the agent's turn, ``the agent factory NAME`` for one before the trial)."""
    text = f"{error_type}: {message}"
    lowered = text.lower()
    url = _URL.search(message)
    where = url.group(1) if url else "its URL"
    conflict = _TOOL_NAME.search(message)
    if error_type in _MODEL_SERVER_ERRORS:
        return _model_server_fix(signature, lowered, url.group(1) if url else "the URL given")
    if conflict is not None or ("usererror" in lowered and "conflict" in lowered):
        name = conflict.group("name") if conflict else "the same name"
        return (
            f"the agent already has a tool named {name}: give the framework adapter the agent without its own "
            "tools, or let the trial's tools replace them by name (docs/agents.md)"
        )
    if "could not be reached" in lowered or "connection refused" in lowered or "connecterror" in lowered:
        return f"is the agent service running at {where}? Start it, or pass the URL it listens on with --agent"
    if "closed the connection before answering" in lowered:
        return (
            f"the agent service at {where} hung up in the middle of a turn: it crashed or restarted while "
            "answering; its own log says why"
        )
    if re.search(r"answered 404\b", lowered):
        return f"the agent at {where} answered 404: passhat POSTs each turn to the URL given, check its path"
    if re.search(r"answered [45]\d\d\b", lowered):
        return f"the agent at {where} answered an error status: its own log says why (the body is quoted above)"
    if "did not answer json" in lowered or "must answer" in lowered or "content type" in lowered:
        return 'the agent service must answer each turn with JSON {"text": str, "final": bool} (docs/agents.md)'
    if "timed out" in lowered or "timeout" in lowered:
        return (
            "something the trial waited on never answered: the agent service, its model, or a tool call over "
            "MCP; check the agent's log, lower --parallel, or raise the agent's own timeout"
        )
    if signature == "simulator_error":
        return "the simulated customer failed: check the customer model's key, endpoint and quota (--customer)"
    if error_type in _MODEL_API_ERRORS:
        return (
            "the agent's model API failed: is its server running at the URL given (--base-url, OPENAI_BASE_URL or "
            "ANTHROPIC_BASE_URL)? Check its key, model name and quota; the message says what it answered"
        )
    if "tool server" in lowered:
        return "the trial's tool server failed: run the domain's tools alone (passhat sandbox serve) to see why"
    if _BROKEN_CHECK.search(message):
        return "the task type's check raised: fix the check (the message names it)"
    if raised_by == "agent":
        return (
            "the agent raised an exception on its turn (from its adapter's settings, its own code, a tool of its "
            "own or its model client): the message says what; fix it and replay again. If this is how the agent "
            "gives up in production too, raise passhat.sandbox.AgentError so such trials count as its failures "
            "(docs/agents.md)"
        )
    return "the agent's setup failed before it could work: the message says what; fix it and replay again"
