"""An agent running as an HTTP service, in any language: passhat drives it turn by turn.

For each agent turn passhat POSTs the trial and the conversation so far to the service's URL, with the trial's
own streamable-HTTP MCP endpoint and its bearer token, and takes the agent's message back. The service calls
the trial's tools over MCP; those calls are the trial's calls, recorded and graded like any other.
"""

from __future__ import annotations

import functools
import json
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

from passhat.sandbox.agents._conversation import Message, Toolbox, TrialContext
from passhat.sandbox.domain import DomainError


def is_service_url(spec: str) -> bool:
    """Whether an agent spec names an HTTP service (`http://...` or `https://...`) rather than a factory."""
    return spec.lower().startswith(("http://", "https://"))


def checked_service_url(url: str) -> str:
    """`url` if passhat can POST to it, else a DomainError saying what is wrong (before any trial runs)."""
    parts = urllib.parse.urlsplit(url.strip())
    if not parts.hostname:
        raise DomainError(f"the agent service URL {url!r} names no host: give http(s)://host:port/path")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when it is read
    except ValueError:
        raise DomainError(f"the agent service URL {url!r} has no valid port (1 to 65535)") from None
    return url.strip()


class ServiceAgent:
    """An agent behind an HTTP endpoint: `POST url` per turn with the request documented in docs/agents.md.

    Request: `{"trial_id", "domain", "task_type", "policy", "conversation": [{"role", "text"}], "mcp_url",
    "mcp_token"}`; answer: `{"text": str, "final": bool}` (and optionally `"stop": true` to end the
    conversation). A service that cannot be reached, answers an error status or another shape fails the
    trial as an infrastructure error, never as the agent's failure.
    """

    def __init__(
        self, context: TrialContext, url: str, *, timeout: float = 120.0, headers: dict[str, str] | None = None
    ) -> None:
        self.label = url
        self._url = url
        self._timeout = timeout
        self._headers = dict(headers or {})
        self._context = context
        self._trial_id = f"{context.run_id}:{context.scenario.scenario_id}#{context.attempt}"
        self._http: Any = None

    @classmethod
    def factory(cls, url: str, *, timeout: float = 120.0) -> Callable[[TrialContext], ServiceAgent]:
        """An AgentFactory for the service at `url`."""
        if not is_service_url(url):
            raise DomainError(f"an agent service URL starts with http:// or https://, got {url!r}")
        return functools.partial(
            cls, url=checked_service_url(url), timeout=timeout
        )  # pickles: worker processes build it themselves

    async def respond(self, conversation: Sequence[Message], tools: Toolbox) -> Message:
        """POST the turn to the service and return its message."""
        import httpx2  # mcp's HTTP client library, installed with the sandbox

        endpoint = await tools.http_endpoint()
        request = {
            "trial_id": self._trial_id,
            "domain": self._context.domain.name,
            "task_type": self._context.scenario.task_type,
            "policy": self._context.policy,
            "conversation": [{"role": m.role, "text": m.text} for m in conversation],
            "mcp_url": endpoint.url,
            "mcp_token": endpoint.token,
        }
        if self._http is None:
            self._http = httpx2.AsyncClient(timeout=self._timeout, headers=self._headers)
        try:
            response = await self._http.post(self._url, json=request)
        except httpx2.TimeoutException as exc:  # running, but slow: not "could not be reached"
            raise DomainError(
                f"the agent at {self._url} timed out: no answer to the turn within {self._timeout:g} s ({exc!r})"
            ) from None
        except (httpx2.RemoteProtocolError, httpx2.ReadError) as exc:  # it was reached, then hung up mid-turn
            raise DomainError(f"the agent at {self._url} closed the connection before answering: {exc!r}") from None
        except httpx2.HTTPError as exc:
            raise DomainError(f"the agent at {self._url} could not be reached: {exc!r}") from None
        if response.status_code != 200:
            raise DomainError(f"the agent at {self._url} answered {response.status_code}: {_described(response)}")
        return parse_reply(response.content, self._url, content_type=response.headers.get("content-type", ""))

    async def aclose(self) -> None:
        """Close the HTTP client (the runner calls this when the trial ends)."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None


BODY_SHOWN = 200
"""How many characters of a bad answer's body a trial's error quotes."""


def _described(response: Any) -> str:
    """A bad answer as the trial's error shows it: content type and the first bytes of the body."""
    kind = response.headers.get("content-type") or "no content type"
    return f"{kind}, body {_first_bytes(response.content)}"


def _first_bytes(body: bytes) -> str:
    text = body[:BODY_SHOWN].decode("utf-8", errors="replace")
    return repr(text) + (f" (first {BODY_SHOWN} of {len(body)} bytes)" if len(body) > BODY_SHOWN else "")


def parse_reply(body: bytes, source: str, *, content_type: str = "application/json") -> Message:
    """The agent's message from a service's JSON answer, or a DomainError saying what is wrong with it."""
    kind = content_type or "no content type"
    try:
        data = json.loads(body)
    except ValueError:
        raise DomainError(
            f"the agent at {source} did not answer JSON (content type {kind}, body {_first_bytes(body)}): "
            'it must answer {"text": str, "final": bool}'
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise DomainError(
            f'the agent at {source} must answer {{"text": str, "final": bool}}, got content type {kind}, '
            f"body {_first_bytes(body)}"
        )
    final, stop = data.get("final", False), data.get("stop", False)
    if not isinstance(final, bool) or not isinstance(stop, bool):
        raise DomainError(
            f'the agent at {source} must answer {{"text": str, "final": bool}}: "final" and "stop" must be true or '
            f"false, got {_first_bytes(body)}"
        )
    return Message("agent", data["text"], final=final, stop=stop)
