"""passhat's settings: each ``configure()`` argument, its environment variable and default, in one table."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final


class ConfigurationError(ValueError):
    """A passhat setting has a value passhat cannot use; the message names the setting and what it accepts."""


def _parse_bool(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError("expected true or false")


def _parse_rate(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError("expected a number between 0 and 1")
    return value


def _parse_positive_int(raw: str) -> int:
    value = int(raw)
    if value <= 0:
        raise ValueError("expected a positive integer")
    return value


def _parse_positive_float(raw: str) -> float:
    value = float(raw)
    if not math.isfinite(value) or value <= 0:  # nan and inf pass ``> 0`` checks, then break the export thread
        raise ValueError("expected a positive number")
    return value


def _parse_source(raw: str) -> str:
    if raw not in {"production", "sandbox"}:
        raise ValueError("expected production or sandbox")
    return raw


def _parse_endpoint(raw: str) -> str:
    value = raw.strip().rstrip("/")
    if not value.startswith(("http://", "https://")):
        raise ValueError("expected an http:// or https:// URL, e.g. http://127.0.0.1:4318")
    return value


def _parse_text(raw: str) -> str:
    return raw


def _parse_api_key(raw: str) -> str:
    value = raw.strip()  # a key read from a CRLF .env file ends in "\r": no key has whitespace around it
    if any(char.isspace() or not char.isprintable() for char in value):
        raise ValueError("expected the project key alone, without spaces or control characters")
    return value


def _parse_redact_mode(raw: str) -> str:
    value = raw.strip().lower()
    if value not in {"pseudonym", "blank"}:
        raise ValueError("expected pseudonym or blank")
    return value


def _parse_names(raw: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in raw.split(",") if name.strip())


def _parse_patterns(raw: str) -> tuple[str, ...]:
    if not raw.lstrip().startswith("["):
        return (raw,)
    try:
        loaded = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"expected one regular expression or a JSON list of them ({exc.msg})") from None
    if not isinstance(loaded, list) or not all(isinstance(item, str) for item in loaded):
        raise ValueError("expected one regular expression or a JSON list of them")
    return tuple(loaded)


def _parse_key(raw: str) -> str:
    if len(raw.encode("utf-8")) < 16:
        raise ValueError("expected a secret of at least 16 characters (e.g. `openssl rand -hex 32`)")
    return raw


@dataclass(frozen=True)
class Setting:
    """One row of the settings table."""

    name: str
    env: str
    default: Any
    parse: Callable[[str], Any]
    help: str


SETTINGS: Final[tuple[Setting, ...]] = (
    Setting("service_name", "PASSHAT_SERVICE_NAME", "agent", _parse_text, "service.name of the agent"),
    Setting(
        "endpoint",
        "PASSHAT_ENDPOINT",
        "http://127.0.0.1:4318",
        _parse_endpoint,
        "collector base URL (OTLP/HTTP)",
    ),
    Setting("api_key", "PASSHAT_API_KEY", None, _parse_api_key, "project key, sent as Authorization: Bearer"),
    Setting("environment", "PASSHAT_ENVIRONMENT", None, _parse_text, "deployment.environment.name"),
    Setting("source", "PASSHAT_SOURCE", "production", _parse_source, "default passhat.source of tickets"),
    Setting("capture_content", "PASSHAT_CAPTURE_CONTENT", False, _parse_bool, "record messages, tool args/results"),
    Setting("redact", "PASSHAT_REDACT", True, _parse_bool, "apply the built-in personal-data patterns"),
    Setting(
        "redact_mode",
        "PASSHAT_REDACT_MODE",
        "pseudonym",
        _parse_redact_mode,
        "pseudonym (format-preserving, keyed) or blank ([REDACTED:kind])",
    ),
    Setting(
        "redact_blank",
        "PASSHAT_REDACT_BLANK",
        (),
        _parse_names,
        "kinds or fields blanked instead of pseudonymised (comma-separated)",
    ),
    Setting(
        "redact_patterns",
        "PASSHAT_REDACT_PATTERNS",
        (),
        _parse_patterns,
        "extra regular expressions (one, or a JSON list)",
    ),
    Setting(
        "pseudonym_key",
        "PASSHAT_PSEUDONYM_KEY",
        None,
        _parse_key,
        "secret keying the pseudonyms; never exported (default: the key file)",
    ),
    Setting(
        "pseudonym_key_file",
        "PASSHAT_PSEUDONYM_KEY_FILE",
        None,
        _parse_text,
        "key file, created on first use (default ~/.config/passhat/pseudonym.key)",
    ),
    Setting("sample_rate", "PASSHAT_SAMPLE_RATE", 1.0, _parse_rate, "share of production tickets traced"),
    Setting("send", "PASSHAT_SEND", True, _parse_bool, "export to the endpoint (false: no exporter)"),
    Setting("max_queue_size", "PASSHAT_MAX_QUEUE_SIZE", 2048, _parse_positive_int, "spans held while exporting"),
    Setting(
        "max_export_batch_size",
        "PASSHAT_MAX_EXPORT_BATCH_SIZE",
        512,
        _parse_positive_int,
        "spans per request",
    ),
    Setting(
        "export_interval",
        "PASSHAT_EXPORT_INTERVAL",
        1.0,
        _parse_positive_float,
        "seconds between export batches",
    ),
    Setting(
        "export_timeout",
        "PASSHAT_EXPORT_TIMEOUT",
        5.0,
        _parse_positive_float,
        "seconds per export request, connecting included",
    ),
    Setting(
        "max_content_length",
        "PASSHAT_MAX_CONTENT_LENGTH",
        4096,
        _parse_positive_int,
        "characters kept per content attribute",
    ),
)

_BY_NAME: Final[Mapping[str, Setting]] = {setting.name: setting for setting in SETTINGS}


def resolve(name: str, explicit: Any, environ: Mapping[str, str] | None = None) -> Any:
    """A setting's value: the explicit argument if given, else its environment variable, else the default."""
    setting = _BY_NAME[name]
    env = os.environ if environ is None else environ
    if explicit is not None:
        if isinstance(explicit, str) and setting.parse is not _parse_text:
            return _parse(setting, explicit, f"{name}=")
        return _validate(setting, explicit)
    raw = env.get(setting.env)
    if raw is None or raw == "":
        if name == "service_name" and env.get("OTEL_SERVICE_NAME"):
            return env["OTEL_SERVICE_NAME"]
        return setting.default
    return _parse(setting, raw, f"{setting.env}=")


_SECRETS: Final[frozenset[str]] = frozenset({"pseudonym_key", "api_key"})
"""Settings whose value an error message must not repeat (a wrong secret is still someone's secret)."""


def _parse(setting: Setting, raw: str, where: str) -> Any:
    try:
        return setting.parse(raw)
    except ValueError as exc:
        shown = f"<{len(raw)} characters, not shown>" if setting.name in _SECRETS else repr(raw)
        raise ConfigurationError(f"passhat: {where}{shown} is not valid: {exc}") from None


def _validate(setting: Setting, value: Any) -> Any:
    default = setting.default
    if isinstance(default, tuple):
        if isinstance(value, str):
            return _parse(setting, value, f"{setting.name}=")
        items = tuple(value) if isinstance(value, list | tuple | set | frozenset) else None
        if items is None or not all(isinstance(item, str) for item in items):
            raise ConfigurationError(f"passhat: {setting.name} must be a list of strings, got {value!r}")
        return items
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigurationError(f"passhat: {setting.name} must be True or False, got {value!r}")
        return value
    if isinstance(default, int | float) and not isinstance(default, bool):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigurationError(f"passhat: {setting.name} must be a number, got {value!r}")
        return _parse(setting, str(value), f"{setting.name}=")
    if not isinstance(value, str):
        raise ConfigurationError(f"passhat: {setting.name} must be a string, got {value!r}")
    return _parse(setting, value, f"{setting.name}=")
