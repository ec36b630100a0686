"""Model-backed participants over the Chat Completions API through the official `openai` client.

Any OpenAI-compatible server works: OpenAI itself, vLLM, Ollama, LiteLLM proxies, given its `base_url`.
`OpenAIAgent` runs the model's tool-calling loop over the trial's MCP tools with the domain's policy as the
system message; `OpenAICustomer` plays the scenario's customer and ends with the same end token as the
Anthropic customer. Both read `OPENAI_API_KEY` and `OPENAI_BASE_URL` like the client does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from passhat import semconv
from passhat.sandbox.agents._anthropic import customer_message, customer_prompt, opening_prompt
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
from passhat.sandbox.domain import DomainError

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from opentelemetry.trace import Tracer

DEFAULT_MODEL = "gpt-4o-mini"
_MAX_TOKENS = 1024


def openai_client(
    client: AsyncOpenAI | None = None, *, base_url: str | None = None, timeout: float = MODEL_TIMEOUT
) -> AsyncOpenAI:
    """The given client (as it is), or one for `base_url` (else `OPENAI_BASE_URL`) with `OPENAI_API_KEY`, whose
    every request may take ``timeout`` seconds (`MODEL_TIMEOUT` by default).

    A local server that needs no key (Ollama, vLLM) works without `OPENAI_API_KEY` once a base URL is set.
    """
    if client is not None:
        return client
    try:
        from openai import AsyncOpenAI
    except ModuleNotFoundError:
        raise DomainError("the openai agent needs the openai extra: pip install 'passhat[openai]'") from None
    base_url = server_url(base_url, "OPENAI_BASE_URL", "Chat Completions", "http://localhost:11434/v1")
    key = os.environ.get("OPENAI_API_KEY")
    if not key and base_url is None:
        raise DomainError(
            "set OPENAI_API_KEY to run the openai agent or customer (or --base-url / OPENAI_BASE_URL for a "
            "local OpenAI-compatible server that needs no key)"
        )
    return AsyncOpenAI(api_key=key or "not-needed", base_url=base_url, timeout=positive_timeout(timeout))


async def _create(tracer: Tracer | None, role: str, client: AsyncOpenAI, model: str, **request: Any) -> Any:
    """One Chat Completions call, traced as a `chat {model}` span (GenAI conventions) when a tracer is given.

    A failed call raises `ModelServerError` naming the server and the model (`ModelServerWatch`)."""
    watch = watch_for("openai", client, model)

    async def create() -> Any:
        return await client.chat.completions.create(model=model, **request)

    if tracer is None:
        return await watch.call(create, client)
    with tracer.start_as_current_span(f"chat {model}") as span:
        span.set_attribute(semconv.OPERATION_NAME, semconv.OP_CHAT)
        span.set_attribute(semconv.PARTICIPANT, role)
        span.set_attribute(semconv.PROVIDER_NAME, "openai")
        span.set_attribute(semconv.REQUEST_MODEL, model)
        response = await watch.call(create, client)
        span.set_attribute(semconv.RESPONSE_MODEL, response.model)
        used = _usage(response)
        span.set_attribute(semconv.USAGE_INPUT_TOKENS, used.input_tokens)
        span.set_attribute(semconv.USAGE_OUTPUT_TOKENS, used.output_tokens)
        span.set_attribute(semconv.RESPONSE_FINISH_REASONS, [str(c.finish_reason) for c in response.choices])
        calls = response.choices[0].message.tool_calls if response.choices else None
        if calls:
            span.set_attribute(semconv.CHAT_TOOL_CALL_IDS, [call.id for call in calls])
        return response


P = TypeVar("P")


def _model_factory(client: AsyncOpenAI, model: str, build: Callable[[TrialContext], P]) -> ModelFactory[P]:
    """``build`` as a factory watching ``client``'s server; its pre-flight lists the server's models (no tokens)."""

    async def list_models() -> Any:
        return await client.with_options(
            max_retries=0, timeout=min(PREFLIGHT_TIMEOUT, request_timeout(client))
        ).models.list()

    return ModelFactory(build, watch_for("openai", client, model), list_models, "GET /models")


def _usage(response: Any) -> Usage:
    usage = getattr(response, "usage", None)  # some compatible servers leave it out
    if usage is None:
        return Usage()
    return Usage(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))


def _choice(response: Any) -> Any:
    if not response.choices:
        raise DomainError("the model returned no choices")
    return response.choices[0].message


def function_tools(listed: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trial's MCP tools as Chat Completions `function` tools."""
    return [
        {
            "type": "function",
            "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]},
        }
        for t in listed
    ]


class OpenAIAgent:
    """An OpenAI-compatible model as the customer-service agent: a tool-calling loop over the trial's MCP tools."""

    def __init__(
        self,
        context: TrialContext,
        *,
        model: str = DEFAULT_MODEL,
        client: AsyncOpenAI | None = None,
        max_tool_rounds: int = 25,
    ) -> None:
        self.label = f"openai:{model}"
        self.model = model
        self.usage = Usage()
        self._client = openai_client(client)
        self._messages: list[dict[str, Any]] = [{"role": "system", "content": context.policy}]
        self._seen = 0
        self._tools: list[dict[str, Any]] | None = None
        self._max_tool_rounds = max_tool_rounds
        self._tracer = context.tracer

    @classmethod
    def factory(
        cls,
        *,
        model: str = DEFAULT_MODEL,
        client: AsyncOpenAI | None = None,
        base_url: str | None = None,
        timeout: float = MODEL_TIMEOUT,
    ) -> ModelFactory[OpenAIAgent]:
        """An AgentFactory for this model (one client shared by every trial), which checks the server before the
        trials (`ModelFactory.check_model_server`)."""
        shared = openai_client(client, base_url=base_url, timeout=timeout)
        return _model_factory(shared, model, lambda context: cls(context, model=model, client=shared))

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """Read the customer's new messages, call tools as the model asks, and return its reply."""
        if self._tools is None:
            self._tools = function_tools(await tools.list_tools())
        for message in conversation[self._seen :]:
            if message.role == "customer":
                self._messages.append({"role": "user", "content": message.text})
        self._seen = len(conversation)
        for _ in range(self._max_tool_rounds):
            request: dict[str, Any] = {"max_tokens": _MAX_TOKENS, "messages": self._messages}
            if self._tools:
                request["tools"] = self._tools
            response = await _create(self._tracer, "agent", self._client, self.model, **request)
            self.usage = self.usage + _usage(response)
            reply = _choice(response)
            calls = list(reply.tool_calls or [])
            said: dict[str, Any] = {"role": "assistant", "content": reply.content or ""}
            if calls:
                said["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.function.name, "arguments": call.function.arguments},
                    }
                    for call in calls
                ]
            self._messages.append(said)
            if not calls:
                return Message("agent", (reply.content or "").strip() or "(no reply)")
            for call in calls:
                try:
                    arguments = json.loads(call.function.arguments or "{}")
                except ValueError:
                    arguments = None
                if not isinstance(arguments, dict):
                    # The model's own mistake: it sees the error, as it would from a server rejecting the call.
                    text = json.dumps({"error": "invalid_argument", "message": "arguments must be a JSON object"})
                else:
                    text = (await tools.call(call.function.name, arguments, call_id=call.id)).text
                self._messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        return Message("agent", "I'm sorry, I could not finish this request.", stop=True)


class OpenAICustomer:
    """An OpenAI-compatible model as the simulated customer: same protocol as ScriptedCustomer, explicit end token."""

    def __init__(self, context: TrialContext, *, model: str = DEFAULT_MODEL, client: AsyncOpenAI | None = None):
        self.model = model
        self.usage = Usage()
        self._client = openai_client(client)
        self._messages: list[dict[str, Any]] = [{"role": "system", "content": customer_prompt(context.script)}]
        self._script = context.script
        self._tracer = context.tracer

    @classmethod
    def factory(
        cls,
        *,
        model: str = DEFAULT_MODEL,
        client: AsyncOpenAI | None = None,
        base_url: str | None = None,
        timeout: float = MODEL_TIMEOUT,
    ) -> ModelFactory[OpenAICustomer]:
        """A CustomerFactory for this model, which checks the server before the trials."""
        shared = openai_client(client, base_url=base_url, timeout=timeout)
        return _model_factory(shared, model, lambda context: cls(context, model=model, client=shared))

    async def _say(self) -> Message:
        request = {"max_tokens": _MAX_TOKENS, "messages": self._messages}
        response = await _create(self._tracer, "customer", self._client, self.model, **request)
        self.usage = self.usage + _usage(response)
        text = (_choice(response).content or "").strip()
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
