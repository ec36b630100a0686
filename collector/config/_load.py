"""Loading passhat.toml: TOML parsing, ${ENV} substitution, validation, and one-line errors per problem."""

from __future__ import annotations

import os
import pathlib
import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from passhat.collector.config._model import PasshatConfig

_ENV = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
DEFAULT_CONFIG = "passhat.toml"
_KEYED = re.compile(r"^[a-z_]+(\.[a-z_]+)+: ")


class ConfigError(Exception):
    """passhat.toml has problems; ``problems`` holds one line per problem, each naming its key path."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.source = source
        self.problems = list(problems)
        super().__init__("\n".join(f"{source}: {p}" for p in self.problems))


def _path_text(loc: Sequence[str | int]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _substitute(value: Any, loc: tuple[str | int, ...], env: Mapping[str, str], problems: list[str]) -> Any:
    """Replace ${NAME} (or ${NAME:-default}) in every string with the environment's value; $$ is a literal $."""
    if isinstance(value, dict):
        return {key: _substitute(item, (*loc, key), env, problems) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, (*loc, i), env, problems) for i, item in enumerate(value)]
    if not isinstance(value, str):
        return value

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        problems.append(f"{_path_text(loc)}: environment variable {name} is not set (or write ${{{name}:-default}})")
        return ""

    return _ENV.sub(replace, value)


def _readable_loc(loc: Sequence[str | int], raw: Any) -> list[str | int]:
    """The error location as the user wrote it: drop pydantic's union-tag steps (e.g. the channel `type`)."""
    out: list[str | int] = []
    node = raw
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str) and part not in node and node.get("type") == part:
            continue  # a discriminated-union tag, not a key in the file
        out.append(part)
        if isinstance(node, dict):
            node = node.get(part) if isinstance(part, str) else None
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            node = None
    return out


def _message(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return "unknown key (check the spelling against docs/configuration.md)"
    message = str(error["msg"])
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    value = error.get("input")
    if kind != "value_error" and isinstance(value, str | int | float | bool):
        message += f" (got {value!r})"
    return message


def validate_config(
    data: Mapping[str, Any], *, source: str = DEFAULT_CONFIG, env: Mapping[str, str] | None = None
) -> PasshatConfig:
    """Validate already-parsed TOML data; raises `ConfigError` listing every problem."""
    problems: list[str] = []
    substituted = _substitute(dict(data), (), os.environ if env is None else env, problems)
    try:
        config = PasshatConfig.model_validate(substituted)
    except ValidationError as exc:
        unset = {p.split(": ", 1)[0] for p in problems}  # a missing env var explains its key's other errors
        for error in exc.errors():
            path = _path_text(_readable_loc(error["loc"], substituted))
            message = _message(error)
            if not error["loc"] and _KEYED.match(message):
                problems.append(message)  # a check across tables names its own key
            elif path not in unset:
                problems.append(f"{path}: {message}")
        raise ConfigError(source, problems) from None
    if problems:
        raise ConfigError(source, problems)
    return config


def load_config(path: str | pathlib.Path = DEFAULT_CONFIG, *, env: Mapping[str, str] | None = None) -> PasshatConfig:
    """Read and validate a passhat.toml; raises `ConfigError` (one line per problem) when it is not valid."""
    file = pathlib.Path(path)
    source = str(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(source, ["no such file (create one from examples/passhat.toml)"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(source, [f"cannot read the file: {exc}"]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, [f"invalid TOML: {exc}"]) from None
    config = validate_config(data, source=source, env=env)
    config._base_dir = file.resolve().parent
    return config
