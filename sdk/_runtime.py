"""The configured SDK: a ``Passhat`` instance owns a tracer, the redactor and usually the export pipeline."""

from __future__ import annotations

import atexit
import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator

from passhat._baggage import TicketBaggageProcessor
from passhat._config import ConfigurationError, resolve
from passhat._export import ExportStats, OtlpHttpExporter, QueueingSpanProcessor
from passhat._redact import RedactCallback, Redactor, key_from_environment
from passhat._span_redaction import RedactingSpanExporter
from passhat._version import __version__

if TYPE_CHECKING:
    from passhat._ticket import Ticket

logger = logging.getLogger("passhat")


class Passhat:
    """A configured passhat SDK. Usually the global one made by :func:`passhat.configure`.

    The module-level functions (``passhat.ticket``, ``passhat.tool``, ``passhat.record_write`` …) use the
    global instance; tests and multi-tenant processes can hold a non-global one (``configure(
    make_global=False)``) and call the same methods on it.
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider,
        owns_provider: bool,
        processor: QueueingSpanProcessor | None,
        service_name: str,
        source: str,
        capture_content: bool,
        redactor: Redactor,
        sample_rate: float,
        max_content_length: int,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.tracer_provider = tracer_provider
        self.tracer = tracer_provider.get_tracer("passhat", __version__)
        self.owns_provider = owns_provider
        self.processor = processor
        self.service_name = service_name
        self.source = source
        self.capture_content = capture_content
        self.redactor = redactor
        self.sample_rate = sample_rate
        self.max_content_length = max_content_length
        self.clock = clock
        self.warned_nested_ticket = False  # the one warning about a ticket opened inside another (passhat._ticket)
        self._closed = False

    def now(self) -> int | None:
        """A timestamp for a span or event: the injected clock in tests, None (the SDK's clock) otherwise."""
        return self.clock() if self.clock is not None else None

    def ticket(self, ticket_id: str, **kwargs: Any) -> Ticket:
        """Open a ticket traced by this instance (arguments as :func:`passhat.ticket`)."""
        from passhat._ticket import Ticket

        return Ticket(self, ticket_id, **kwargs)

    def tool(self, func: Any = None, /, **kwargs: Any) -> Any:
        """Decorate a tool traced by this instance (arguments as :func:`passhat.tool`)."""
        from passhat._tool import tool

        return tool(func, runtime=self, **kwargs) if func is not None else tool(runtime=self, **kwargs)

    def record_write(self, table: str, key: Any, **kwargs: Any) -> None:
        """See :func:`passhat.record_write`."""
        from passhat._state import record_write

        record_write(table, key, runtime=self, **kwargs)

    def stats(self) -> ExportStats | None:
        """Export counters (queued, exported, dropped, failed), or None when passhat does not export."""
        return self.processor.stats() if self.processor is not None else None

    def flush(self, timeout: float = 30.0) -> bool:
        """Export every finished span now; False if the collector did not take them all before ``timeout``."""
        flush = getattr(self.tracer_provider, "force_flush", None)
        if flush is None:
            return True
        return bool(flush(int(timeout * 1000)))

    def shutdown(self) -> None:
        """Flush and stop exporting. Only a provider passhat created is shut down; yours stays yours."""
        if self._closed:
            return
        self._closed = True
        if self.owns_provider:
            shutdown = getattr(self.tracer_provider, "shutdown", None)
            if shutdown is not None:
                shutdown()


_lock = threading.Lock()
_global: Passhat | None = None
_atexit_registered = False


def _default_instance() -> Passhat:
    """Before ``configure()``: spans go to whatever OpenTelemetry provider the process has (often none)."""
    return Passhat(
        tracer_provider=trace.get_tracer_provider(),
        owns_provider=False,
        processor=None,
        service_name="agent",
        source="production",
        capture_content=False,
        redactor=Redactor(),
        sample_rate=1.0,
        max_content_length=4096,
    )


def current() -> Passhat:
    """The global instance (an unconfigured one that exports nothing until ``configure()`` is called)."""
    global _global
    instance = _global
    if instance is None:
        with _lock:
            if _global is None:
                _global = _default_instance()
            instance = _global
    return instance


def set_current(instance: Passhat | None) -> Passhat | None:
    """Install ``instance`` as the global one and return the previous one (used by passhat.testing)."""
    global _global
    with _lock:
        previous, _global = _global, instance
    return previous


def _shutdown_at_exit() -> None:
    instance = _global
    if instance is not None:
        try:
            if instance.processor is not None:
                # The bound is on the agent's whole exit: the interpreter still has to shut down after this.
                instance.processor.reserve_for_interpreter_exit()
            instance.shutdown()
        except Exception as exc:  # exiting: say it, never raise
            logger.warning("passhat: shutdown at exit failed: %r", exc)


def configure(
    *,
    service_name: str | None = None,
    endpoint: str | None = None,
    api_key: str | None = None,
    environment: str | None = None,
    source: str | None = None,
    capture_content: bool | None = None,
    redact: bool | None = None,
    redact_mode: str | None = None,
    redact_blank: Iterable[str] | None = None,
    redact_patterns: Iterable[str | re.Pattern[str]] = (),
    redact_callback: RedactCallback | None = None,
    pseudonym_key: str | None = None,
    pseudonym_key_file: str | None = None,
    sample_rate: float | None = None,
    send: bool | None = None,
    max_queue_size: int | None = None,
    max_export_batch_size: int | None = None,
    export_interval: float | None = None,
    export_timeout: float | None = None,
    max_content_length: int | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    span_processors: Sequence[SpanProcessor] = (),
    id_generator: IdGenerator | None = None,
    clock: Callable[[], int] | None = None,
    make_global: bool = True,
    set_global: bool = False,
) -> Passhat:
    """Set up passhat once at start-up; every argument falls back to its ``PASSHAT_*`` environment variable.

    Personal data found in what passhat records becomes deterministic, format-preserving pseudonyms keyed by
    ``pseudonym_key`` (else the key file), so clear values never leave the process; ``redact_mode="blank"``
    (or a kind or field in ``redact_blank``) writes ``[REDACTED:<kind>]`` instead.

    Builds a TracerProvider exporting OTLP/HTTP protobuf (gzip, ``Authorization: Bearer <api_key>``) to
    ``{endpoint}/v1/traces`` through a bounded queue, unless ``tracer_provider`` is given: then passhat
    traces into that provider and adds no exporter to it (pass ``send=True`` to add one anyway).

    ``set_global=True`` also makes passhat's provider OpenTelemetry's global one, so every instrumented
    framework and client library (pydantic-ai, LangGraph, OpenInference, OpenLLMetry...) exports its spans to
    passhat too. ``make_global`` is about passhat's own module-level functions, not OpenTelemetry.
    """
    global _atexit_registered
    settings = {
        "service_name": resolve("service_name", service_name),
        "endpoint": resolve("endpoint", endpoint),
        "api_key": resolve("api_key", api_key),
        "environment": resolve("environment", environment),
        "source": resolve("source", source),
        "capture_content": resolve("capture_content", capture_content),
        "redact": resolve("redact", redact),
        "redact_mode": resolve("redact_mode", redact_mode),
        "redact_blank": resolve("redact_blank", None if redact_blank is None else tuple(redact_blank)),
        "pseudonym_key": resolve("pseudonym_key", pseudonym_key),
        "pseudonym_key_file": resolve("pseudonym_key_file", pseudonym_key_file),
        "sample_rate": resolve("sample_rate", sample_rate),
        "max_queue_size": resolve("max_queue_size", max_queue_size),
        "max_export_batch_size": resolve("max_export_batch_size", max_export_batch_size),
        "export_interval": resolve("export_interval", export_interval),
        "export_timeout": resolve("export_timeout", export_timeout),
        "max_content_length": resolve("max_content_length", max_content_length),
    }
    if redact_callback is not None and not callable(redact_callback):
        raise ConfigurationError("passhat: redact_callback must be a function taking and returning a str")
    patterns = tuple(redact_patterns) or resolve("redact_patterns", None)
    _check_patterns(patterns, "redact_patterns=" if redact_patterns else "PASSHAT_REDACT_PATTERNS=")
    redactor = Redactor.build(
        builtin=settings["redact"],
        patterns=patterns,
        callback=redact_callback,
        mode=settings["redact_mode"],
        blank=settings["redact_blank"],
        key=key_from_environment(settings["pseudonym_key"], settings["pseudonym_key_file"]),
    )
    if tracer_provider is not None and not isinstance(tracer_provider, trace.TracerProvider):
        raise ConfigurationError(
            f"passhat: tracer_provider must be an OpenTelemetry TracerProvider, got {type(tracer_provider).__name__}"
        )
    owns_provider = tracer_provider is None
    want_send = resolve("send", send) if owns_provider else bool(send)
    processor: QueueingSpanProcessor | None = None
    if tracer_provider is None:
        attributes: dict[str, Any] = {
            "service.name": settings["service_name"],
            "passhat.sdk.version": __version__,
        }
        if settings["environment"]:
            attributes["deployment.environment.name"] = settings["environment"]
        tracer_provider = TracerProvider(
            resource=Resource.create(attributes), id_generator=id_generator, shutdown_on_exit=False
        )
    from passhat._trial_routing import TrialRouting  # (it reads tickets, which import this module)

    # passhat's processors, behind the rule that keeps a replay's trial spans in the trial (_trial_routing).
    routing = TrialRouting(tracer_provider)
    if want_send:
        exporter = OtlpHttpExporter(
            settings["endpoint"], api_key=settings["api_key"], timeout=settings["export_timeout"]
        )
        # Every span leaves redacted, whoever made it (a framework's own instrumentation writes in clear).
        sent: SpanExporter = RedactingSpanExporter(exporter, redactor) if redactor.active else exporter
        processor = QueueingSpanProcessor(
            sent,
            max_queue_size=settings["max_queue_size"],
            max_export_batch_size=settings["max_export_batch_size"],
            interval=settings["export_interval"],
            describe=exporter.url,
        )
        routing.add_span_processor(processor)
    for extra in span_processors:
        routing.add_span_processor(extra)
    if owns_provider or set_global:
        routing.add_span_processor(TicketBaggageProcessor())
    if routing.used:
        _add_processor(tracer_provider, routing)
    if set_global:
        _set_global_provider(tracer_provider)
    instance = Passhat(
        tracer_provider=tracer_provider,
        owns_provider=owns_provider,
        processor=processor,
        service_name=settings["service_name"],
        source=settings["source"],
        capture_content=settings["capture_content"],
        redactor=redactor,
        sample_rate=settings["sample_rate"],
        max_content_length=settings["max_content_length"],
        clock=clock,
    )
    if make_global:
        previous = set_current(instance)
        if previous is not None and previous is not instance:
            previous.shutdown()
        with _lock:
            if not _atexit_registered:
                atexit.register(_shutdown_at_exit)
                _atexit_registered = True
    return instance


def _check_patterns(patterns: Iterable[object], where: str) -> None:
    """Each extra redaction pattern compiles, or one ConfigurationError names the setting and the pattern."""
    for pattern in patterns:
        if isinstance(pattern, re.Pattern):
            continue
        if not isinstance(pattern, str):
            raise ConfigurationError(f"passhat: {where} must hold regular expressions (str), got {pattern!r}")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigurationError(
                f"passhat: {where}{pattern!r} is not valid: not a valid regular expression ({exc})"
            ) from None


def _set_global_provider(provider: trace.TracerProvider) -> None:
    from passhat._trial_routing import TrialsOnlyProvider

    current = trace.get_tracer_provider()
    if current is provider:
        return
    if isinstance(current, TrialsOnlyProvider):  # a replay's worker process: its global keeps trials' spans only
        logger.debug("passhat: set_global=True in a process that runs trials: the global provider stays the trials'")
        return
    if not isinstance(current, trace.ProxyTracerProvider):
        raise ConfigurationError(
            "passhat: OpenTelemetry already has a global tracer provider (set by another library); pass it as "
            "configure(tracer_provider=opentelemetry.trace.get_tracer_provider(), send=True) instead of set_global"
        )
    trace.set_tracer_provider(provider)


def _add_processor(provider: trace.TracerProvider, processor: SpanProcessor) -> None:
    add = getattr(provider, "add_span_processor", None)
    if add is None:
        raise ConfigurationError(
            "passhat: this tracer_provider cannot take span processors; pass an opentelemetry-sdk TracerProvider"
        )
    add(processor)


def flush(timeout: float = 30.0) -> bool:
    """Export every finished span of the global instance now (see :meth:`Passhat.flush`)."""
    return current().flush(timeout)


def shutdown() -> None:
    """Flush and stop the global instance; passhat keeps working afterwards but exports nothing."""
    instance = set_current(None)
    if instance is not None:
        instance.shutdown()
