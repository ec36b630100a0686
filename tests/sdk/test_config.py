"""configure(): keyword-only settings with PASSHAT_* fallbacks, clear errors, and an existing provider."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import passhat
from passhat._config import resolve
from passhat._runtime import set_current
from passhat.testing import OtlpReceiver


def test_every_setting_has_a_passhat_environment_variable() -> None:
    assert all(setting.env == f"PASSHAT_{setting.name.upper()}" for setting in passhat.CONFIG_SETTINGS)


def test_environment_variables_are_the_fallback(monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver) -> None:
    monkeypatch.setenv("PASSHAT_ENDPOINT", receiver.url + "/")
    monkeypatch.setenv("PASSHAT_API_KEY", "from-env\r")  # a CRLF .env file: the key is sent without the \r
    monkeypatch.setenv("PASSHAT_SERVICE_NAME", "env-agent")
    monkeypatch.setenv("PASSHAT_CAPTURE_CONTENT", "true")
    monkeypatch.setenv("PASSHAT_SAMPLE_RATE", "0.5")
    instance = passhat.configure(make_global=False)
    try:
        assert instance.capture_content is True
        assert instance.sample_rate == 0.5
        with instance.ticket("T-1", task_type="refund", source="sandbox"):
            pass
        instance.flush()
        (span,) = receiver.wait_for_spans(1)
        assert span.resource["service.name"] == "env-agent"
        assert receiver.requests[0].headers["Authorization"] == "Bearer from-env"
    finally:
        instance.shutdown()


def test_an_explicit_argument_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSHAT_SAMPLE_RATE", "0.5")
    assert resolve("sample_rate", 0.25) == 0.25
    assert resolve("sample_rate", None) == 0.5


@pytest.mark.parametrize(
    ("env", "value", "message"),
    [
        ("PASSHAT_SAMPLE_RATE", "lots", "PASSHAT_SAMPLE_RATE='lots' is not valid"),
        ("PASSHAT_SAMPLE_RATE", "2", "between 0 and 1"),
        ("PASSHAT_ENDPOINT", "collector:4318", "expected an http:// or https:// URL"),
        ("PASSHAT_CAPTURE_CONTENT", "maybe", "expected true or false"),
        ("PASSHAT_SOURCE", "staging", "expected production or sandbox"),
        ("PASSHAT_MAX_QUEUE_SIZE", "-1", "expected a positive integer"),
        ("PASSHAT_EXPORT_TIMEOUT", "inf", "expected a positive number"),
        ("PASSHAT_EXPORT_TIMEOUT", "nan", "expected a positive number"),
        ("PASSHAT_EXPORT_INTERVAL", "inf", "expected a positive number"),
        ("PASSHAT_REDACT_PATTERNS", "(unclosed", "PASSHAT_REDACT_PATTERNS=.*not a valid regular expression"),
    ],
)
def test_a_bad_environment_value_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, message: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(passhat.ConfigurationError, match=message):
        passhat.configure(make_global=False, send=False)


def test_a_bad_argument_is_one_clear_error() -> None:
    with pytest.raises(passhat.ConfigurationError, match=r"capture_content=.yes please. is not valid"):
        passhat.configure(capture_content="yes please", send=False, make_global=False)  # type: ignore[arg-type]
    with pytest.raises(passhat.ConfigurationError, match="tracer_provider must be an OpenTelemetry"):
        passhat.configure(tracer_provider=object(), make_global=False)  # type: ignore[arg-type]
    with pytest.raises(passhat.ConfigurationError, match=r"redact_patterns=.*not a valid regular expression"):
        passhat.configure(redact_patterns=["(unclosed"], send=False, make_global=False)
    with pytest.raises(passhat.ConfigurationError, match=r"export_timeout=.inf. is not valid"):
        passhat.configure(export_timeout=float("inf"), send=False, make_global=False)


def test_a_malformed_api_key_is_refused_without_being_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSHAT_API_KEY", "ph_1234 secret-part")
    with pytest.raises(passhat.ConfigurationError, match="without spaces or control characters") as raised:
        passhat.configure(make_global=False)
    assert "secret-part" not in str(raised.value)
    with pytest.raises(passhat.ConfigurationError, match="api_key=<11 characters, not shown>"):
        passhat.configure(api_key="ph\nsecret-2", make_global=False)


def test_configure_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        passhat.configure("agent")  # type: ignore[misc]


def test_an_existing_tracer_provider_is_used_as_is() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instance = passhat.configure(tracer_provider=provider, make_global=False)
    assert instance.stats() is None  # passhat added no exporter of its own
    with instance.ticket("T-1", task_type="refund", source="sandbox"):
        pass
    instance.shutdown()  # the provider is the caller's: still open afterwards
    with instance.ticket("T-2", task_type="refund", source="sandbox"):
        pass
    assert [s.attributes["passhat.ticket.id"] for s in exporter.get_finished_spans()] == ["T-1", "T-2"]  # type: ignore[index]


def test_configure_installs_a_global_instance_and_replaces_the_previous_one() -> None:
    first = passhat.configure(send=False)
    second = passhat.configure(send=False)
    try:
        assert passhat.current() is second
        assert first is not second
    finally:
        passhat.shutdown()
        set_current(None)
