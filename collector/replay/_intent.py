"""A ticket's intent when the app recorded none: inferred from its customer's words and the rows it read.

``replay.infer_intent`` picks the extractor (``rules``, the offline default; ``model``; ``off``). The words are
the ticket's customer messages (``t.customer_says`` with content capture on, or a framework's user messages);
the rows are the ticket's starting state: the domain's seed with the ticket's captured before-images laid over
it. The production agent's writes are never read. Anything short of one evidenced intent makes the ticket not
replayable, with the field that decided it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from passhat import semconv
from passhat.collector.store import Store, TicketDetail, TicketRow
from passhat.sandbox import Domain, DomainError, RowImage, Sandbox
from passhat.sandbox.inference import (
    CustomerWords,
    InferredIntent,
    IntentNotInferredError,
    ModelExtractor,
    RuleExtractor,
)

InferMode = Literal["rules", "model", "off"]
INFER_MODES: tuple[str, ...] = ("rules", "model", "off")

SandboxFor = Callable[[Domain, Sequence[RowImage]], Sandbox]
"""The sandbox holding a ticket's starting state (a `SandboxPool.for_ticket`)."""
Release = Callable[[Sandbox], None]


def _user_texts(value: Any) -> Iterable[str]:
    """User-role texts in an OpenTelemetry GenAI message list (``gen_ai.input.messages``), JSON or decoded."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return
    if not isinstance(value, list):
        return
    for message in value:
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            yield content
        for part in message.get("parts") or ():
            if isinstance(part, Mapping) and isinstance(part.get("content"), str):
                yield part["content"]


def customer_messages(detail: TicketDetail, attempt: TicketRow | None = None) -> list[str]:
    """What the customer said in a ticket's attempt, in order: its customer-message events, else the user
    messages its framework's LLM spans carry (each said once)."""
    trace = attempt.trace_id if attempt is not None else None
    spans = sorted(
        (span for span in detail.spans if trace is None or span.trace_id == trace), key=lambda s: s.start_time_ns
    )
    said: list[str] = []
    for span in spans:
        for event in span.events:
            content = event.attributes.get(semconv.MESSAGE_CONTENT)
            if event.name == semconv.EVENT_CUSTOMER_MESSAGE and isinstance(content, str):
                said.append(content)
    if said:
        return said
    for span in spans:
        texts = [*_user_texts(span.attributes.get(semconv.INPUT_MESSAGES)), *_flattened_user_texts(span.attributes)]
        for text in texts:
            if text not in said:
                said.append(text)
    return said


_FLATTENED = (
    # OpenInference (LangChain / LangGraph, the OpenAI Agents SDK...): llm.input_messages.0.message.role, its
    # .content, or its parts' .contents.1.message_content.text
    ("llm.input_messages.", ".message.role", (".message.content",), ".message.contents.", ".message_content.text"),
    # OpenLLMetry: gen_ai.prompt.0.role, gen_ai.prompt.0.content
    ("gen_ai.prompt.", ".role", (".content",), None, None),
)


def _flattened_user_texts(attributes: Mapping[str, Any]) -> list[str]:
    """User-role texts in the flattened message attributes of OpenInference and OpenLLMetry LLM spans, in their
    messages' order. Those instrumentations record content by default, whatever passhat's ``capture_content``."""
    found: list[tuple[int, int, str]] = []
    for prefix, role_key, content_keys, parts_key, part_text in _FLATTENED:
        for key, role in attributes.items():
            if not (key.startswith(prefix) and key.endswith(role_key)) or role != "user":
                continue
            index = key[len(prefix) : -len(role_key)]
            if not index.isdigit():
                continue
            base = f"{prefix}{index}"
            for content_key in content_keys:
                content = attributes.get(base + content_key)
                if isinstance(content, str) and content:
                    found.append((int(index), -1, content))
            if parts_key is None or part_text is None:
                continue
            start = base + parts_key
            for part, text in attributes.items():
                number = part[len(start) : -len(part_text)]
                if part.startswith(start) and part.endswith(part_text) and number.isdigit() and isinstance(text, str):
                    found.append((int(index), int(number), text))
    return [text for _, _, text in sorted(found)]


@dataclass
class IntentInference:
    """Infers the intent of tickets that recorded none, and keeps what it inferred (to store with the run)."""

    mode: InferMode
    sandbox_for: SandboxFor
    release: Release
    model: ModelExtractor | None = None
    inferred: dict[str, InferredIntent] = field(default_factory=dict)
    # One extractor per starting state (its row index is built once): the domain's seed serves most tickets.
    _extractors: dict[str, RuleExtractor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in INFER_MODES:
            raise ValueError(f"replay.infer_intent must be one of {', '.join(INFER_MODES)}, got {self.mode!r}")
        if self.mode == "model" and self.model is None:
            raise ValueError("replay.infer_intent = 'model' needs an [intent] section (provider, model, base_url)")

    def infer(
        self, domain: Domain, task_type: str, ticket: TicketRow, detail: TicketDetail, images: Sequence[RowImage]
    ) -> InferredIntent:
        """The ticket's intent, or `IntentNotInferredError` with the reason (never a guess)."""
        if self.mode == "off":
            raise IntentNotInferredError(
                "no intent was recorded (intent inference is off: replay.infer_intent = 'off')",
                fix="pass intent={...} to passhat.ticket(...), or set replay.infer_intent = 'rules' in passhat.toml",
            )
        known = self.inferred.get(ticket.ticket_id)
        if known is not None and known.task_type == task_type:
            return known
        task = domain.task_type(task_type)
        words = CustomerWords(customer_messages(detail, ticket))
        try:
            sandbox = self.sandbox_for(domain, images)
        except DomainError as exc:  # the overlay refused the captured rows: replay would too, with this reason
            raise IntentNotInferredError(
                f"the ticket's captured rows do not fit the {domain.name} tables: {exc}",
                fix="capture rows of the domain's own tables (the same names and columns)",
            ) from None
        try:
            if self.mode == "model" and self.model is not None:
                with sandbox.template.connect() as connection:
                    found = self.model.infer(domain, task, words, connection, sandbox.initial)
            else:
                key = str(sandbox.template_path)
                if key not in self._extractors:
                    self._extractors[key] = RuleExtractor(domain, sandbox.initial)
                with sandbox.template.connect() as connection:
                    found = self._extractors[key].infer(task, words, connection)
        except IntentNotInferredError:
            raise
        except Exception as exc:  # the domain's own code (its candidates) failed on this starting state
            raise IntentNotInferredError(
                f"task type {task_type!r} could not list its cases in the ticket's starting state: "
                f"{type(exc).__name__}: {exc}",
                fix=f"fix the candidates function of task type {task_type!r}, or record intent={{...}}",
            ) from None
        finally:
            self.release(sandbox)
            if not sandbox.template_path.exists():  # a ticket's own starting state, now gone
                self._extractors.pop(str(sandbox.template_path), None)
        self.inferred[ticket.ticket_id] = found
        return found

    def classify(
        self, domains: Sequence[Domain], ticket: TicketRow, detail: TicketDetail, images: Sequence[RowImage]
    ) -> InferredIntent:
        """The one task type (of ``domains``) whose intent the ticket's words name, with that intent."""
        found: list[InferredIntent] = []
        for domain in domains:
            for name, task in domain.task_types.items():
                if not task.intent_fields:
                    continue
                try:
                    found.append(self.infer(domain, name, ticket, detail, images))
                except IntentNotInferredError:
                    continue
        self.inferred.pop(ticket.ticket_id, None)
        if len(found) != 1:
            names = ", ".join(sorted(f.task_type for f in found)) or "none"
            raise IntentNotInferredError(
                f"the ticket names no task type and {len(found)} task types fit its customer's words ({names})",
                fix="pass task_type='...' to passhat.ticket(...)",
            )
        self.inferred[ticket.ticket_id] = found[0]
        return found[0]


def intent_inference(settings: Any, pool: Any) -> IntentInference | None:
    """The inference a replay uses (None when ``settings.infer_intent`` is ``off``); ``pool`` is the replay's
    `SandboxPool`, whose per-ticket sandboxes hold each ticket's starting state."""
    if settings.infer_intent == "off":
        return None
    model = ModelExtractor(settings.intent_model) if settings.intent_model is not None else None
    return IntentInference(settings.infer_intent, pool.for_ticket, pool.release, model=model)


def classify_unnamed(
    store: Store,
    project: str,
    tickets: Sequence[TicketRow],
    known: Collection[str],
    domains: Mapping[str, Domain],
    inference: IntentInference,
) -> dict[str, str]:
    """Ticket id -> task type, for tickets whose trace names no task type the configured domains have, classified
    by the extractor (the one task type whose intent their customer's words name); the others stay as they are."""
    from passhat.collector.replay._adapters import row_images  # the adapters import this module

    classified: dict[str, str] = {}
    for ticket in tickets:
        if ticket.task_type in known or ticket.ticket_id in classified:
            continue
        detail = store.get_ticket(project, ticket.ticket_id, source="production")
        if detail is None:
            continue
        candidates = [d for d in domains.values() if ticket.domain in (None, d.name)]
        try:
            found = inference.classify(candidates, ticket, detail, row_images(detail))
        except IntentNotInferredError:
            continue
        classified[ticket.ticket_id] = found.task_type
    return classified


def classified_traffic(tickets: Sequence[TicketRow], classified: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """Per UTC day, how many tickets moved from each unnamed task type to each classified one
    (``{"2026-06-01": {"unknown->renew_loan": 3}}``), so traffic weighting can move them too."""
    moved: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    for ticket in tickets:
        target = classified.get(ticket.ticket_id)
        if target is None or ticket.ticket_id in seen:
            continue
        seen.add(ticket.ticket_id)
        day = moved.setdefault(ticket.day.isoformat(), {})
        key = f"{ticket.task_type}->{target}"
        day[key] = day.get(key, 0) + 1
    return moved


def inferred_intents(inference: IntentInference | None, tickets: Sequence[TicketRow]) -> dict[str, Any]:
    """What a run stores of the intents it inferred: ticket id -> source, task type, intent, evidence per field."""
    if inference is None:
        return {}
    return {
        t.ticket_id: inference.inferred[t.ticket_id].to_dict() for t in tickets if t.ticket_id in inference.inferred
    }
