"""The model extractor: a language model reads the customer's words into the intent's fields (structured output
against the fields' schema), and the values it gives must match one case of the task type.

Any Anthropic endpoint (the Messages API, a forced tool call whose input schema is the fields) or
OpenAI-compatible endpoint (Chat Completions with a JSON-schema response format) works. The model is trusted
for nothing on its own: each value must come with a quote of the customer's words that holds it, a field it
leaves empty must be evidenced as the rules extractor would (a row the customer's words lead to), and the
values together must pick out exactly one of the task type's candidates in the ticket's starting state.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Connection

from passhat.checks import Snapshot
from passhat.sandbox.domain import Domain, DomainError, IntentField, TaskType, leaves
from passhat.sandbox.inference._result import InferredIntent, IntentNotInferredError
from passhat.sandbox.inference._rules import RuleExtractor, field_for
from passhat.sandbox.inference._said import CustomerWords, said_form

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[str, ...] = ("anthropic", "openai")
TOOL_NAME = "record_intent"

_INSTRUCTIONS = (
    "You read a customer-service conversation and record what the CUSTOMER asked for, field by field. Use only "
    "the customer's own words: for each field give the value(s) they stated and a short verbatim quote of their "
    "words holding it; give an empty list of values and an empty quote when they did not state it. Never guess."
)

_JSON_TYPES = {"str": "string", "date": "string", "int": "integer", "float": "number", "bool": "boolean"}


def _asked(task: TaskType) -> dict[str, IntentField]:
    """The fields the model is asked for: every one that needs evidence."""
    return {path: spec for path, spec in task.intent_fields.items() if spec.needs_evidence}


def intent_schema(task: TaskType) -> dict[str, Any]:
    """The JSON schema of the model's answer: per field, the values the customer stated and the quote."""
    properties: dict[str, Any] = {}
    for path, spec in _asked(task).items():
        item: dict[str, Any] = {"type": _JSON_TYPES.get(spec.type, "string")}
        if spec.source == "enum":
            item = {"type": "string", "enum": list(spec.values)}
        where = {"column": f"a value of {spec.column}", "enum": "one of the listed values", "text": "as stated"}
        properties[path] = {
            "type": "object",
            "description": where.get(spec.source, ""),
            "properties": {"values": {"type": "array", "items": item}, "quote": {"type": "string"}},
            "required": ["values", "quote"],
            "additionalProperties": False,
        }
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


INTENT_TIMEOUT = 120.0
"""Seconds one request to the intent model may take (the model agents' bound too): the clients' own default, 600 s
tried three times, kept a replay waiting half an hour a ticket on a server that took connections and never
answered."""


@dataclass(frozen=True)
class ModelSettings:
    """Where the model extractor's model runs: ``provider`` (anthropic | openai), ``model``, ``base_url``."""

    provider: Provider
    model: str
    base_url: str | None = None
    api_key: str | None = None

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ValueError(f"intent.provider must be one of {', '.join(PROVIDERS)}, got {self.provider!r}")
        if not self.model:
            raise ValueError("intent.model must name the model to ask (e.g. claude-haiku-4-5 or gpt-4o-mini)")


class ModelExtractor:
    """Infers a ticket's intent with a language model, checked against the customer's words and the candidates."""

    source = "inferred:model"

    def __init__(self, settings: ModelSettings, *, client: Any = None) -> None:
        self.settings = settings
        self._client = client

    def infer(
        self, domain: Domain, task: TaskType, words: CustomerWords, connection: Connection, snapshot: Snapshot
    ) -> InferredIntent:
        """The one candidate of ``task`` the model's reading of the customer's words names."""
        if not task.intent_fields:
            raise IntentNotInferredError(
                f"task type {task.name!r} declares no intent fields, so its intent cannot be inferred",
                fix=f"declare intent_fields on task type {task.name!r}",
            )
        if words.empty:
            raise IntentNotInferredError("no customer message was captured, so nothing names the intent")
        answer = self.ask(task, words)
        stated: dict[str, list[str]] = {}
        evidence: dict[str, str] = {}
        for path in _asked(task):
            entry = answer.get(path) or {}
            values = [v for v in (entry.get("values") or []) if v is not None]
            quote = str(entry.get("quote") or "")
            if not values:
                continue
            if not quote or words.message_of(quote) is None:
                raise IntentNotInferredError(
                    f"the model's value for {path} ({values[0]!r}) comes with no quote of the customer's words",
                    fix="use the rules extractor (replay.infer_intent = 'rules'), or a stronger model",
                )
            stated[path] = sorted(said_form(v) for v in values)
            evidence[path] = f"the model read {values!r} from the customer's words: {quote!r}"
        rules = RuleExtractor(domain, snapshot)
        matches: list[tuple[dict[str, Any], dict[str, str]]] = []
        lacking: set[str] = set()
        for candidate in task.candidates(connection):
            if not _agrees(task, candidate, stated):
                continue
            reading = rules.read(task, candidate, words)
            missing = [p for p in reading.missing if _declared_path(task, p) not in stated]
            if missing:
                lacking.update(missing)
                continue
            found = {path: evidence.get(_declared_path(task, path), how) for path, how in reading.evidence.items()}
            matches.append((dict(candidate), found))
        unique = {json.dumps(c, sort_keys=True, default=str): (c, e) for c, e in matches}
        if len(unique) == 1:
            intent, found = next(iter(unique.values()))
            return InferredIntent(intent, "inferred:model", found, task.name)
        if len(unique) > 1:
            raise IntentNotInferredError(
                f"{len(unique)} candidates fit the model's reading of the customer's words",
                fix="record intent={...} on passhat.ticket(...) for such tickets",
            )
        if lacking:
            raise IntentNotInferredError(f"no evidence for {', '.join(sorted(lacking)[:4])}")
        raise IntentNotInferredError(
            "the model's reading of the customer's words matches no case of the task type in the starting state"
        )

    def ask(self, task: TaskType, words: CustomerWords) -> dict[str, Any]:
        """The model's structured answer (field path -> values and quote)."""
        schema = intent_schema(task)
        conversation = "\n".join(f"CUSTOMER: {message}" for message in words.messages)
        prompt = f"Task type: {task.name} ({task.description})\n\nThe customer's messages:\n{conversation}"
        try:
            if self.settings.provider == "anthropic":
                return self._anthropic(schema, prompt)
            return self._openai(schema, prompt)
        except IntentNotInferredError:
            raise
        except Exception as exc:  # the endpoint failed: the ticket is not replayable for now, with the cause
            raise IntentNotInferredError(
                f"the intent model ({self.settings.provider} {self.settings.model}) failed: {type(exc).__name__}: "
                f"{exc}",
                fix="check [intent] provider, model and base_url in passhat.toml, and the endpoint's key",
            ) from None

    def _anthropic(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        client = self._client or _anthropic_client(self.settings)
        response = client.messages.create(
            model=self.settings.model,
            max_tokens=1024,
            system=_INSTRUCTIONS,
            messages=[{"role": "user", "content": prompt}],
            tools=[{"name": TOOL_NAME, "description": "Record the intent's fields.", "input_schema": schema}],
            tool_choice={"type": "tool", "name": TOOL_NAME},
        )
        for block in response.content:
            if getattr(block, "type", "") == "tool_use" and block.name == TOOL_NAME:
                return dict(block.input)
        raise IntentNotInferredError("the intent model answered without recording the fields")

    def _openai(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        client = self._client or _openai_client(self.settings)
        response = client.chat.completions.create(
            model=self.settings.model,
            messages=[{"role": "system", "content": _INSTRUCTIONS}, {"role": "user", "content": prompt}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": TOOL_NAME, "schema": schema, "strict": True},
            },
        )
        content = response.choices[0].message.content or ""
        try:
            answer = json.loads(content)
        except ValueError:
            raise IntentNotInferredError(f"the intent model's answer is not JSON: {content[:80]!r}") from None
        if not isinstance(answer, Mapping):
            raise IntentNotInferredError("the intent model's answer is not a JSON object")
        return dict(answer)


def _declared_path(task: TaskType, path: str) -> str:
    """The declared field path covering a leaf path (the leaf path itself when none does)."""
    for declared, spec in task.intent_fields.items():
        if field_for(task, path) is spec:
            return declared
    return path


def _agrees(task: TaskType, candidate: Mapping[str, Any], stated: Mapping[str, list[str]]) -> bool:
    """Whether the candidate holds exactly the values the model read for each field it gave."""
    held: dict[str, list[str]] = {}
    for path, value in leaves(candidate):
        if value is not None:
            held.setdefault(_declared_path(task, path), []).append(said_form(value))
    return all(sorted(held.get(path, [])) == values for path, values in stated.items())


def _anthropic_client(settings: ModelSettings) -> Any:
    try:
        from anthropic import Anthropic
    except ModuleNotFoundError:
        raise DomainError("the model intent extractor needs: pip install 'passhat[anthropic]'") from None
    key = settings.api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key and settings.base_url is None:
        raise DomainError("set ANTHROPIC_API_KEY for intent.provider = 'anthropic' (or [intent] base_url)")
    return Anthropic(api_key=key or "not-needed", base_url=settings.base_url, timeout=INTENT_TIMEOUT)


def _openai_client(settings: ModelSettings) -> Any:
    try:
        from openai import OpenAI
    except ModuleNotFoundError:
        raise DomainError("the model intent extractor needs: pip install 'passhat[openai]'") from None
    key = settings.api_key or os.environ.get("OPENAI_API_KEY")
    if not key and settings.base_url is None:
        raise DomainError("set OPENAI_API_KEY for intent.provider = 'openai' (or [intent] base_url)")
    return OpenAI(api_key=key or "not-needed", base_url=settings.base_url, timeout=INTENT_TIMEOUT)
