"""The model server behind a model agent or customer (`--agent openai|anthropic`, `--customer openai|anthropic`).

Every failed call names the server (its URL, never its key) and the model: ``ModelServerError``, which a trial
records as its `infra_error` (or `simulator_error` for the customer). One `ModelServerWatch` per server sees every
call of a run's trials: when the first calls all fail the same way that says the server itself is unusable (it
cannot be reached, answers 5xx, refuses the key, or has no such URL or model) and none was answered, it raises
`ModelServerUnusableError`, which stops the whole run instead of grinding every trial through the client's retries and
the harness's. A server that answers some calls (a flaky one) does not stop a run: its failures stay the harness's
failures of their trials, retried and left out of the figures as before. One that answered, then fails
`STOP_AFTER_ANSWERED` calls in a row the same decisive way (it died, hung or lost its model mid-run) stops it too:
the trials stored are kept, and the same command resumes the run once the server is back.
"""

from __future__ import annotations

import collections
import math
import os
import re
import urllib.parse
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from passhat.sandbox.agents._conversation import TrialContext
from passhat.sandbox.domain import DomainError

STOP_AFTER = 5
"""Calls failed the same decisive way, none answered, after which a model server is taken as unusable."""

STOP_AFTER_ANSWERED = 20
"""Calls in a row failed the same decisive way after the server had answered, after which it is taken as gone (it
died, hung or lost its model mid-run). Far more than a flaky server fails in a row: one failing every other call
does so 20 times running once in a million runs of 20."""

MODEL_TIMEOUT = 120.0
"""Seconds one request to a model server may take by default (`agent.options.timeout`, `passhat bench --timeout`),
the same bound as one turn of an agent service. The clients' own default (600 s, tried three times) left a run
against a server that took connections and never answered waiting half an hour a call, and never stopping."""

PREFLIGHT_TIMEOUT = 10.0
"""Seconds the pre-flight request (the server's model list) may take; a slower answer proves nothing."""

_SECRET = re.compile(r"\b(?:sk|key|api|ak)-[A-Za-z0-9_\-*]{8,}", re.IGNORECASE)


def positive_timeout(value: object, setting: str = "timeout") -> float:
    """Seconds a model request may take: a number above 0, else a `DomainError` naming ``setting``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise DomainError(f"{setting} is the seconds one model request may take, a number above 0; got {value!r}")
    return float(value)


def request_timeout(client: Any) -> float:
    """The seconds one request of ``client`` may take (its ``timeout``: a number, or httpx's Timeout's read bound),
    `MODEL_TIMEOUT` when it says none."""
    timeout = getattr(client, "timeout", None)
    seconds = getattr(timeout, "read", timeout)
    return float(seconds) if isinstance(seconds, int | float) and not isinstance(seconds, bool) else MODEL_TIMEOUT


def public_url(url: object) -> str:
    """A server's URL fit to print: no user, password, query or fragment (where keys hide), no trailing slash."""
    parts = urllib.parse.urlsplit(str(url))
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def server_url(base_url: str | None, env: str, server: str, example: str = "") -> str | None:
    """The model server's URL: ``base_url``, else the ``env`` variable's, else None (the provider's own API). One
    without http:// or https:// is a `DomainError` naming where it may come from."""
    url = base_url or os.environ.get(env) or None
    if url is not None and not url.lower().startswith(("http://", "https://")):
        raise DomainError(
            f"the {server} server's URL (--base-url, {env} or agent.base_url) starts with http:// or https://"
            f"{f', e.g. {example}' if example else ''}; got {url!r}"
        )
    return url


@dataclass(frozen=True)
class ModelEndpoint:
    """Which model server, and which model on it: what every error about it names."""

    provider: str  # "openai" (any Chat Completions server) or "anthropic"
    base_url: str  # `public_url` of the client's base URL
    model: str

    def __str__(self) -> str:
        return f"the {self.provider} model server at {self.base_url} (model {self.model!r})"

    @classmethod
    def of(cls, provider: str, client: Any, model: str) -> ModelEndpoint:
        return cls(provider, public_url(getattr(client, "base_url", "") or "?"), model)


def _scrub(text: str, client: Any) -> str:
    key = getattr(client, "api_key", None)
    if isinstance(key, str) and len(key) >= 8:
        text = text.replace(key, "***")
    return _SECRET.sub("***", text)


class ModelServerError(DomainError):
    """A call to a model server failed: the message names the server's URL, the model and what went wrong.

    ``kind`` says whether the failure says the server itself is unusable for every call ("unreachable",
    "status 503", "status 401", "timeout", ...) or only this call (None: a rate limit, a request it refused). Such
    failures stop a run when the run's first calls all ended so, none answered, or when `STOP_AFTER_ANSWERED` calls
    in a row did after answers (`ModelServerWatch`)."""

    def __init__(self, message: str, *, endpoint: ModelEndpoint | None = None, kind: str | None = None) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.kind = kind


class ModelServerUnusableError(ModelServerError):
    """The model server failed every call of the run's first ones the same way, none answered, or it answered and then
    failed its last `STOP_AFTER_ANSWERED` calls in a row the same way (it went away mid-run): the run stops (no trial
    can work), rather than every trial failing through its retries. Never a trial's own outcome."""


def _status(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def _names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


def _cause(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    if cause is None or not str(cause):
        return ""
    return f" ({type(cause).__name__}: {cause})"


def describe(error: BaseException, endpoint: ModelEndpoint, client: Any = None) -> ModelServerError:
    """A `ModelServerError` naming ``endpoint`` for an `openai` / `anthropic` client error (the same class names in
    both), with its ``kind``; any other error is returned wrapped all the same, kind None."""
    names, status = _names(error), _status(error)
    said = _scrub(f"{type(error).__name__}: {error}", client)[:400]
    if "APITimeoutError" in names:
        what, kind = f"did not answer in time: {said}", "timeout"
    elif "APIConnectionError" in names:
        what, kind = f"could not be reached: {said}{_scrub(_cause(error), client)[:200]}", "unreachable"
    elif status in (401, 403):
        what, kind = f"refused the key (status {status}): {said}", f"status {status}"
    elif status == 404:
        what, kind = f"answered 404, no such path or model: {said}", "status 404"
    elif status == 402 or (
        status == 429 and "insufficient_quota" in (getattr(error, "code", None), getattr(error, "type", None))
    ):
        # The account's quota or credit is spent (OpenAI's 429 insufficient_quota, a 402): no call works until it is
        # topped up, unlike a rate limit's 429, which passes.
        what, kind = f"answered {status}, no quota or credit left: {said}", "quota"
    elif status == 529:  # Anthropic's "overloaded": busy for a while, as a rate limit is, not down
        what, kind = f"answered {status} (overloaded): {said}", None
    elif status is not None and status >= 500:
        what, kind = f"answered {status}: {said}", f"status {status}"
    elif status is not None:
        what, kind = f"answered {status}: {said}", None
    else:
        what, kind = f"failed: {said}", None
    return ModelServerError(f"{endpoint} {what}", endpoint=endpoint, kind=kind)


_FIXES = {
    "unreachable": "is it running? Start it, or give the URL it listens on (--base-url, agent.base_url in "
    "passhat.toml, or OPENAI_BASE_URL / ANTHROPIC_BASE_URL)",
    "status 401": "check its key (OPENAI_API_KEY or ANTHROPIC_API_KEY) and that it is the key of this server",
    "status 403": "check its key (OPENAI_API_KEY or ANTHROPIC_API_KEY): this key may not use this model",
    "timeout": "it takes connections but answered none of these calls in time (each call may take "
    "agent.options.timeout seconds in passhat.toml, or passhat bench --timeout; 120 by default): is the model still "
    "loading, or the server stuck? Its own log says; a model this slow needs a longer timeout",
    "quota": "the key's account has no quota or credit left: top it up or raise its limit (the provider's billing "
    "page), or use another key (OPENAI_API_KEY or ANTHROPIC_API_KEY)",
    "status 404": "check the URL's path (an OpenAI-compatible server's usually ends in /v1) and the model's name "
    "(--model or agent.model) against the server's list of models",
}


def fix_for(kind: str) -> str:
    """What to do about a model server that fails every call this way."""
    return _FIXES.get(
        kind, "the server is up but fails every call: its own log says why (a model that did not load, out of memory)"
    )


class ModelServerWatch:
    """Every call one run's participants make to one model server (shared by the trials of one factory).

    ``stop_after`` calls failed the same decisive way (`ModelServerError.kind`) while none was answered: the server
    is unusable, and this call and every later one raise `ModelServerUnusableError`. Once a call was answered, only
    ``stop_after_answered`` calls in a row failed the same decisive way stop the run (the server went away mid-run);
    any answer, or any other failure (429, 400: the server is there), starts the count again. A flaky server's
    failures are its trials' harness failures, as always."""

    def __init__(
        self, endpoint: ModelEndpoint, *, stop_after: int = STOP_AFTER, stop_after_answered: int = STOP_AFTER_ANSWERED
    ) -> None:
        if stop_after < 1 or stop_after_answered < 1:
            raise ValueError(
                f"stop_after and stop_after_answered must be at least 1, got {stop_after} and {stop_after_answered}"
            )
        self.endpoint = endpoint
        self.stop_after = stop_after
        self.stop_after_answered = stop_after_answered
        self.answered = 0
        self.failed: collections.Counter[str] = collections.Counter()
        self.streak: tuple[str | None, int] = (None, 0)  # since the last answer: the kind failed in a row, how often
        self.unusable: ModelServerUnusableError | None = None
        self.checked = False

    def _stop(self, kind: str, first: str, calls: int) -> ModelServerUnusableError:
        return self._unusable(
            kind,
            f"{first}; {'its first' if calls > 1 else 'a first'} {calls} call{'s' if calls > 1 else ''} all failed "
            f"this way and none was answered, so the run stopped rather than retry every trial: {fix_for(kind)}",
        )

    def _gone(self, kind: str, first: str, calls: int) -> ModelServerUnusableError:
        return self._unusable(
            kind,
            f"{first}; it had answered {self.answered} call{'s' if self.answered != 1 else ''}, then its last "
            f"{calls} calls in a row all failed this way, so the run stopped rather than fail every trial left: "
            f"{fix_for(kind)}",
        )

    def _unusable(self, kind: str, message: str) -> ModelServerUnusableError:
        self.unusable = ModelServerUnusableError(message, endpoint=self.endpoint, kind=kind)
        return self.unusable

    def _again(self) -> ModelServerUnusableError:
        assert self.unusable is not None
        return ModelServerUnusableError(str(self.unusable), endpoint=self.endpoint, kind=self.unusable.kind)

    async def call(self, request: Callable[[], Awaitable[Any]], client: Any = None) -> Any:
        """Make one call through the watch: its answer, or `ModelServerError` naming the server (or
        `ModelServerUnusableError` once the server is taken as unusable)."""
        if self.unusable is not None:
            raise self._again()
        try:
            answer = await request()
        except Exception as exc:
            if not _names(exc) & {"APIError", "OpenAIError", "AnthropicError"}:
                raise  # not the client's error: the caller's own bug or a cancellation, as it was
            error = describe(exc, self.endpoint, client)
            if error.kind is not None and not self.answered and self.unusable is None:
                self.failed[error.kind] += 1
                if self.failed[error.kind] >= self.stop_after:
                    raise self._stop(error.kind, str(error), self.failed[error.kind]) from exc
            elif self.answered and self.unusable is None:
                kind, count = self.streak
                self.streak = (error.kind, count + 1 if error.kind == kind else 1)
                if error.kind is not None and self.streak[1] >= self.stop_after_answered:
                    raise self._gone(error.kind, str(error), self.streak[1]) from exc
            if self.unusable is not None:
                raise self._again() from exc
            raise error from exc
        self.answered += 1
        self.streak = (None, 0)
        return answer

    async def preflight(self, request: Callable[[], Awaitable[Any]], path: str, client: Any = None) -> None:
        """One cheap request before any trial (``path``, e.g. the server's model list) that stops the run only
        when the server cannot be reached at all: another answer (404 from a server without that route, 401 from a
        key that may not list models, a slow answer) proves nothing about the calls the trials make. Once per
        watch."""
        if self.checked or self.unusable is not None:
            return
        self.checked = True
        try:
            await request()
        except Exception as exc:
            names = _names(exc)
            if "APIConnectionError" in names and "APITimeoutError" not in names:
                error = describe(exc, self.endpoint, client)
                message = f"{error} (a first request, {path}, got no answer)"
                raise self._stop_before(message) from exc

    def _stop_before(self, first: str) -> ModelServerUnusableError:
        self.unusable = ModelServerUnusableError(
            f"{first}; no trial ran: {fix_for('unreachable')}", endpoint=self.endpoint, kind="unreachable"
        )
        return self.unusable


_watches: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], ModelServerWatch]] = weakref.WeakKeyDictionary()


def watch_for(provider: str, client: Any, model: str) -> ModelServerWatch:
    """The one watch of ``client``'s server for ``model``, shared by every participant built on that client."""
    try:
        kept = _watches.setdefault(client, {})
    except TypeError:  # a client that cannot be weakly referenced: a watch of its own
        return ModelServerWatch(ModelEndpoint.of(provider, client, model))
    key = (provider, model)
    if key not in kept:
        kept[key] = ModelServerWatch(ModelEndpoint.of(provider, client, model))
    return kept[key]


P = TypeVar("P")


class ModelFactory(Generic[P]):
    """An agent or customer factory for one model server: builds each trial's participant on the shared client,
    and checks the server before the trials (`check_model_server`)."""

    def __init__(
        self,
        build: Callable[[TrialContext], P],
        watch: ModelServerWatch,
        preflight: Callable[[], Awaitable[Any]] | None = None,
        preflight_path: str = "",
    ) -> None:
        self.build = build
        self.watch = watch
        self._preflight = preflight
        self._preflight_path = preflight_path

    def __call__(self, context: TrialContext) -> P:
        return self.build(context)

    async def check_model_server(self) -> None:
        """Stop before any trial (`ModelServerUnusableError`) when the server cannot be reached at all."""
        if self._preflight is not None:
            await self.watch.preflight(self._preflight, self._preflight_path)

    def __repr__(self) -> str:
        return f"ModelFactory({self.watch.endpoint})"


async def check_model_servers(*factories: object) -> None:
    """Check the model server of each factory that has one (`ModelFactory`) before trials run: raises
    `ModelServerUnusableError` when one cannot be reached at all. Other factories are left alone."""
    for factory in factories:
        check = getattr(factory, "check_model_server", None)
        if check is not None:
            await check()
