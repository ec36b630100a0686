"""Model-backed participants through the real `anthropic` client: Claude as the agent, and as the customer.

`AnthropicAgent` runs Claude's tool-use loop over the trial's MCP tools with the domain's policy as the
system prompt. `LLMCustomer` plays the scenario's customer and ends with an explicit end token. Both read
`ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL`) like the client does, or take a configured client.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from passhat import semconv
from passhat.checks import ANY_ACTION
from passhat.sandbox.agents._conversation import Message, Toolbox, TrialContext, Usage
from passhat.sandbox.agents._model_server import (
    MODEL_TIMEOUT,
    PREFLIGHT_TIMEOUT,
    ModelFactory,
    positive_timeout,
    request_timeout,
    server_url,
    watch_for,
)
from passhat.sandbox.domain import CustomerScript, DomainError

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from opentelemetry.trace import Tracer

DEFAULT_MODEL = "claude-sonnet-4-5"
END_TOKEN = "###STOP###"
CONSENT_TOKEN = "###CONSENT###"
"""What a customer model writes in the message that agrees to an action the agent proposed: the turn's consent,
recorded as a fact (`Message.consent`) rather than read from its words."""
_MAX_TOKENS = 1024


def _client(
    client: AsyncAnthropic | None, *, base_url: str | None = None, timeout: float = MODEL_TIMEOUT
) -> AsyncAnthropic:
    """The given client (as it is), or one for `base_url` (else `ANTHROPIC_BASE_URL`, else Anthropic's API) with
    `ANTHROPIC_API_KEY`, whose every request may take ``timeout`` seconds; a server of your own given by its URL
    may need no key."""
    if client is not None:
        return client
    try:
        from anthropic import AsyncAnthropic
    except ModuleNotFoundError:
        raise DomainError("the anthropic agent needs the anthropic extra: pip install 'passhat[anthropic]'") from None
    base_url = server_url(base_url, "ANTHROPIC_BASE_URL", "Messages API")
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key and base_url is None:
        raise DomainError(
            "set ANTHROPIC_API_KEY to run the anthropic agent or customer (or --base-url / ANTHROPIC_BASE_URL for "
            "a server of your own that needs no key)"
        )
    return AsyncAnthropic(api_key=key or "not-needed", base_url=base_url, timeout=positive_timeout(timeout))


P = TypeVar("P")


def _model_factory(client: AsyncAnthropic, model: str, build: Callable[[TrialContext], P]) -> ModelFactory[P]:
    """``build`` as a factory watching ``client``'s server; its pre-flight lists the server's models (no tokens)."""

    async def list_models() -> Any:
        return await client.with_options(
            max_retries=0, timeout=min(PREFLIGHT_TIMEOUT, request_timeout(client))
        ).models.list(limit=1)

    return ModelFactory(build, watch_for("anthropic", client, model), list_models, "GET /v1/models")


async def _create(tracer: Tracer | None, role: str, client: AsyncAnthropic, model: str, **request: Any) -> Any:
    """One Messages API call, traced as a `chat {model}` span (GenAI conventions) when a tracer is given.

    `passhat.participant` tells the agent's calls from the simulated customer's (`agent` / `customer`). A failed
    call raises `ModelServerError` naming the server and the model (`ModelServerWatch`).
    """
    watch = watch_for("anthropic", client, model)

    async def create() -> Any:
        return await client.messages.create(model=model, **request)

    if tracer is None:
        return await watch.call(create, client)
    with tracer.start_as_current_span(f"chat {model}") as span:
        span.set_attribute(semconv.OPERATION_NAME, semconv.OP_CHAT)
        span.set_attribute(semconv.PARTICIPANT, role)
        span.set_attribute(semconv.PROVIDER_NAME, "anthropic")
        span.set_attribute(semconv.REQUEST_MODEL, model)
        response = await watch.call(create, client)
        span.set_attribute(semconv.RESPONSE_MODEL, response.model)
        span.set_attribute(semconv.USAGE_INPUT_TOKENS, response.usage.input_tokens)
        span.set_attribute(semconv.USAGE_OUTPUT_TOKENS, response.usage.output_tokens)
        span.set_attribute(semconv.RESPONSE_FINISH_REASONS, [str(response.stop_reason)])
        ids = [block.id for block in response.content if getattr(block, "type", "") == "tool_use"]
        if ids:
            span.set_attribute(semconv.CHAT_TOOL_CALL_IDS, ids)
        return response


def _text(content: Sequence[Any]) -> str:
    return "".join(block.text for block in content if getattr(block, "type", "") == "text").strip()


class AnthropicAgent:
    """Claude as the customer-service agent: a tool-use loop over the trial's MCP tools."""

    def __init__(
        self,
        context: TrialContext,
        *,
        model: str = DEFAULT_MODEL,
        client: AsyncAnthropic | None = None,
        max_tool_rounds: int = 25,
    ) -> None:
        self.label = f"anthropic:{model}"
        self.model = model
        self.usage = Usage()
        self._client = _client(client)
        self._system = context.policy
        self._messages: list[dict[str, Any]] = []
        self._seen = 0
        self._tools: list[dict[str, Any]] | None = None
        self._max_tool_rounds = max_tool_rounds
        self._tracer = context.tracer

    @classmethod
    def factory(
        cls,
        *,
        model: str = DEFAULT_MODEL,
        client: AsyncAnthropic | None = None,
        base_url: str | None = None,
        timeout: float = MODEL_TIMEOUT,
    ) -> ModelFactory[AnthropicAgent]:
        """An AgentFactory for this model (one client shared by every trial), which checks the server before the
        trials (`ModelFactory.check_model_server`)."""
        shared = _client(client, base_url=base_url, timeout=timeout)
        return _model_factory(shared, model, lambda context: cls(context, model=model, client=shared))

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """Read the customer's new messages, use tools as Claude asks, and return Claude's reply."""
        if self._tools is None:
            self._tools = await tools.list_tools()
        for message in conversation[self._seen :]:
            if message.role == "customer":
                self._messages.append({"role": "user", "content": message.text})
        self._seen = len(conversation)
        for _ in range(self._max_tool_rounds):
            response = await _create(
                self._tracer,
                "agent",
                self._client,
                self.model,
                max_tokens=_MAX_TOKENS,
                system=self._system,
                messages=self._messages,
                tools=self._tools,
            )
            self.usage = self.usage + Usage(response.usage.input_tokens, response.usage.output_tokens)
            content = [block.model_dump(exclude_none=True) for block in response.content]
            self._messages.append({"role": "assistant", "content": content})
            uses = [block for block in response.content if block.type == "tool_use"]
            if response.stop_reason != "tool_use" or not uses:
                return Message("agent", _text(response.content) or "(no reply)")
            results = []
            for use in uses:
                arguments = dict(use.input) if isinstance(use.input, dict) else {}
                result = await tools.call(use.name, arguments, call_id=use.id)
                results.append(
                    {"type": "tool_result", "tool_use_id": use.id, "content": result.text, "is_error": not result.ok}
                )
            self._messages.append({"role": "user", "content": results})
        return Message("agent", "I'm sorry, I could not finish this request.", stop=True)


_CUSTOMER_PROMPT = """You are a customer talking to a customer-service agent. Stay in character; write only what
the customer says, in one or two short sentences.

Your goal: {goal}
Facts you know (give one only when the agent asks for it): {facts}
Things you do not know (say so if asked): {unknown}
If your first choice turns out to be impossible, you accept: {fallback}
Persona: {persona}

Do not invent facts. Confirm an action only if it matches your goal. When you agree to an action the agent
proposed (you say yes to it), put {consent} at the end of that message; never write it otherwise. When the agent
has done what you asked, or has clearly refused, thank them and end your message with {end}. Never end before
that."""


def customer_prompt(script: CustomerScript) -> str:
    """The system prompt of a model playing the scenario's customer (any provider)."""
    return _CUSTOMER_PROMPT.format(
        goal=script.goal,
        facts=json.dumps(dict(script.facts), sort_keys=True),
        unknown=", ".join(script.unknown) or "nothing in particular",
        fallback=json.dumps(dict(script.fallback)) if script.fallback else "nothing else",
        persona=script.persona,
        end=END_TOKEN,
        consent=CONSENT_TOKEN,
    )


def customer_message(text: str) -> Message:
    """A customer model's reply as a turn: the end token stops the conversation, the consent token records the
    customer's yes to the proposed action; neither is left in the text."""
    stop = END_TOKEN in text
    consent = ANY_ACTION if CONSENT_TOKEN in text else None
    said = text.replace(END_TOKEN, "").replace(CONSENT_TOKEN, "").strip()
    return Message("customer", said or ("Yes." if consent else "Thanks, bye."), stop=stop, consent=consent)


def opening_prompt(script: CustomerScript) -> str:
    """The first user turn a customer model answers with its opening message."""
    return f"(The agent says: 'Hello, how can I help?' You might say: {script.opening})"


class LLMCustomer:
    """Claude as the simulated customer: same protocol as ScriptedCustomer, explicit end token."""

    def __init__(self, context: TrialContext, *, model: str = DEFAULT_MODEL, client: AsyncAnthropic | None = None):
        self.model = model
        self.usage = Usage()
        self._client = _client(client)
        self._system = customer_prompt(context.script)
        self._script = context.script
        self._messages: list[dict[str, Any]] = []
        self._tracer = context.tracer

    @classmethod
    def factory(
        cls,
        *,
        model: str = DEFAULT_MODEL,
        client: AsyncAnthropic | None = None,
        base_url: str | None = None,
        timeout: float = MODEL_TIMEOUT,
    ) -> ModelFactory[LLMCustomer]:
        """A CustomerFactory for this model, which checks the server before the trials."""
        shared = _client(client, base_url=base_url, timeout=timeout)
        return _model_factory(shared, model, lambda context: cls(context, model=model, client=shared))

    async def _say(self) -> Message:
        response = await _create(
            self._tracer,
            "customer",
            self._client,
            self.model,
            max_tokens=_MAX_TOKENS,
            system=self._system,
            messages=self._messages,
        )
        self.usage = self.usage + Usage(response.usage.input_tokens, response.usage.output_tokens)
        text = _text(response.content)
        if not text:
            raise DomainError("the customer model returned no text")
        self._messages.append({"role": "assistant", "content": text})
        return customer_message(text)

    async def opening(self) -> Message:
        """The customer's first message, in their own words."""
        self._messages.append({"role": "user", "content": opening_prompt(self._script)})
        return await self._say()

    async def respond(self, conversation: Sequence[Message]) -> Message:
        """Answer the agent's last message."""
        self._messages.append({"role": "user", "content": conversation[-1].text})
        return await self._say()
