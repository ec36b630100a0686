"""Loading passhat.toml: TOML parsing, ${ENV} substitution, validation, and one-line errors per problem."""

from __future__ import annotations

import datetime as dt
import difflib
import json
import math
import os
import pathlib
import re
import tomllib
import types
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from passhat.collector.config._model import PasshatConfig
from passhat.collector.config._tables import REPORTED, CheckError, EnvText

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
    """Replace ${NAME} (or ${NAME:-default}) in every string with the environment's value; $$ is a literal $. A
    string a reference was replaced in is an `EnvText`, read as its key's type (the environment has strings only)."""
    if isinstance(value, dict):
        return {key: _substitute(item, (*loc, key), env, problems) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, (*loc, i), env, problems) for i, item in enumerate(value)]
    if not isinstance(value, str):
        return value
    referenced = False

    def replace(match: re.Match[str]) -> str:
        nonlocal referenced
        if match.group(0) == "$$":
            return "$"
        referenced = True
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        problems.append(f"{_path_text(loc)}: environment variable {name} is not set (or write ${{{name}:-default}})")
        return ""

    text = _ENV.sub(replace, value)
    return EnvText(text) if referenced else text


def _readable_loc(loc: Sequence[str | int], raw: Any) -> list[str | int]:
    """The error location as the user wrote it: drop pydantic's union-tag steps (e.g. the channel `type`)."""
    out: list[str | int] = []
    node = raw
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str) and part not in node and node.get("type") == part:
            continue  # a discriminated-union tag, not a key in the file
        out.append(part)
        node = _child(node, part)
    return out


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, dict):
        return node.get(part) if isinstance(part, str) else None
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return None


#: What a strict type error expects, as a TOML writer says it.
_EXPECTED = {
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}
_TRUE, _FALSE = ("true", "yes", "on", "1", "y", "t"), ("false", "no", "off", "0", "n", "f")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


def _written(value: Any) -> str:
    """A value as TOML writes it, and what kind of value that is."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {json.dumps(str(value), ensure_ascii=False)}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dt.date | dt.time):
        return f"the date or time {value.isoformat()}"
    return repr(value)


def _as_meant(kind: str, value: Any) -> tuple[bool, Any]:
    """The value of the expected type a value of the wrong one plainly means (the string "2" the integer 2, "yes"
    true, true the integer 1), as passhat read it before types were checked; (False, None) when there is none."""
    text = value.strip().lower() if isinstance(value, str) else None
    if kind == "int_type":
        if isinstance(value, bool) or (isinstance(value, float) and value.is_integer()):
            return True, int(value)
        if text is not None and _INTEGER.match(text):
            return True, int(text)
    if kind == "float_type":
        if isinstance(value, bool):
            return True, float(value)
        if text is not None:
            try:
                number = float(text)
            except ValueError:
                return False, None
            return math.isfinite(number), number
    if kind == "bool_type" and text is not None and text in _TRUE + _FALSE:
        return True, text in _TRUE
    return False, None


def _type_message(kind: str, value: Any) -> str:
    message = f"must be {_EXPECTED[kind]}, got {_written(value)}"
    meant, as_meant = _as_meant(kind, value)
    if meant and isinstance(value, str) and not isinstance(value, EnvText):
        written = str(as_meant).lower() if isinstance(as_meant, bool) else str(as_meant)
        message += f" (write {written}, without quotes)"
    elif kind == "int_type" and isinstance(value, float) and value.is_integer():
        message += f" (write {int(value)})"
    elif kind == "string_type" and isinstance(value, dt.time):
        message += f' (write it in quotes: "{value.strftime("%H:%M" if not value.second else "%H:%M:%S")}")'
    elif kind == "string_type" and isinstance(value, int | float | dt.date) and not isinstance(value, bool):
        message += f' (write it in quotes: "{value.isoformat() if isinstance(value, dt.date) else value}")'
    if isinstance(value, EnvText):
        message += " (from the environment, through ${...})"
    return message


def _message(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return "unknown key (check the spelling against docs/configuration.md)"
    if kind in _EXPECTED:
        return _type_message(kind, error.get("input"))
    message = str(error["msg"])
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    value = error.get("input")
    if kind != "value_error" and isinstance(value, str | int | float | bool):
        message += f" (got {value!r})"
    return message


Path = tuple[str | int, ...]


def _is_table(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _resolved(annotation: Any, node: Any) -> Any:
    """``annotation`` without Annotated and None; a union of tables tagged by `type` as the table ``node`` is."""
    while True:
        if get_origin(annotation) is Annotated:
            annotation = get_args(annotation)[0]
            continue
        if get_origin(annotation) in (Union, types.UnionType):
            options = [each for each in get_args(annotation) if each is not type(None)]
            if len(options) == 1:
                annotation = options[0]
                continue
            if isinstance(node, dict) and all(_is_table(each) for each in options):
                for table in options:
                    tag = table.model_fields.get("type")
                    if tag is not None and node.get("type") in get_args(tag.annotation):
                        return table
        return annotation


def _closest_key(path: Path, data: Any) -> str | None:
    """ "unknown key: did you mean KEY?" for a misspelt key of a table, when one of its keys is close; else None."""
    table = _shape_at(path[:-1], data)
    if not path or not isinstance(path[-1], str) or not _is_table(table):
        return None
    close = difflib.get_close_matches(path[-1], list(table.model_fields), n=1, cutoff=0.7)
    return f"unknown key: did you mean {close[0]}? (docs/configuration.md lists them)" if close else None


def _shape_at(path: Path, data: Any) -> Any:
    """What passhat.toml expects at ``path``: a table's model, a dict or list annotation, a scalar type; None when
    the path leads nowhere in the model."""
    annotation: Any = PasshatConfig
    node = data
    for part in path:
        annotation = _resolved(annotation, node)
        if _is_table(annotation):
            field = annotation.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return None
            annotation = field.annotation
        elif get_origin(annotation) in (dict, list):
            annotation = get_args(annotation)[-1]
        else:
            return None
        node = _child(node, part)
    return _resolved(annotation, node)


def _key_to_drop(path: Path, data: Any) -> Path | None:
    """The key whose value is at fault for an error at ``path``: the key itself when it belongs to a table, the
    list holding an item at fault; None for an entry of a table of names (a channel of alerts.channels), which
    other keys refer to."""
    for end in range(len(path), 0, -1):
        if isinstance(path[end - 1], str):
            return path[:end] if _is_table(_shape_at(path[: end - 1], data)) else None
    return None


def _parent(data: Any, path: Path) -> Any:
    """The table or list holding the value at ``path`` (None when the path leads nowhere)."""
    parent = data
    for part in path[:-1]:
        parent = _child(parent, part)
    return parent


def _drop(data: Any, path: Path) -> Any:
    parent = _parent(data, path)
    if isinstance(parent, dict) and path[-1] in parent:
        return parent.pop(path[-1])
    return None


def _set(data: Any, path: Path, value: Any) -> None:
    parent = _parent(data, path)
    if isinstance(parent, dict):
        parent[path[-1]] = value


#: At most this many passes of validation (each after dropping what the last found at fault): a file with more
#: layers of problems than this gets the first ones.
_PASSES = 50


def _validated(data: dict[str, Any], problems: list[str], unset: set[str]) -> PasshatConfig | None:
    """Validate, then validate again without what was found at fault, until no new problem is found: each problem
    goes into ``problems`` (a line naming its key), so one run lists all of them rather than one layer at a time.

    Between passes, an unknown key is dropped; a value of the wrong type that plainly means one of the right type
    ("2", true for an integer) is read as that; another value at fault is dropped, its default standing in (a check
    across keys that reads it is then not reported: it would judge the default); a check across keys that failed is
    skipped, so the checks after it and those of the tables around it run. Values written in the file are validated
    strictly (TOML has types: true is no integer, "2" no number), those of ${NAME} references as their keys' types
    (`EnvText`)."""
    reported: set[str] = set()
    dropped: set[Path] = set()
    seen = set(problems)
    for _ in range(_PASSES):
        try:
            return PasshatConfig.model_validate(data, strict=True, context={REPORTED: reported})
        except ValidationError as exc:
            errors = exc.errors()
        changed = False
        for error in errors:
            path = tuple(_readable_loc(error["loc"], data))
            kind = error["type"]
            failed = error.get("ctx", {}).get("error")
            across = kind in ("value_error", "assertion_error") and _is_table(_shape_at(path, data))
            text, message = _path_text(path), _message(error)
            if kind == "extra_forbidden":
                message = _closest_key(path, data) or message
            line = message if not path and _KEYED.match(message) else f"{text}: {message}"
            quiet = (
                text in unset
                or (kind == "missing" and path in dropped)
                or (across and _judges_a_default(path, failed, dropped))
            )
            if not quiet and line not in seen:
                seen.add(line)
                problems.append(line)
            if across:  # skipped from now on, reported or not: the checks after it and around it get their turn
                check = str(failed if failed is not None else message)
                changed |= check not in reported
                reported.add(check)
                continue
            key = None if kind == "missing" else _key_to_drop(path, data)
            if key is None:
                continue
            meant, value = _as_meant(kind, _child_at(data, path)) if key == path else (False, None)
            if meant:
                _set(data, key, value)
            else:
                _drop(data, key)
                if kind != "extra_forbidden":  # an unknown key is no value of the table: nothing stands in for it
                    dropped.add(key)
            changed = True
        if not changed:
            break
    return None


def _judges_a_default(table: Path, failed: Any, dropped: set[Path]) -> bool:
    """Whether a check across keys of ``table`` read a key whose value was dropped (or the table or list around
    it), its default standing in: its problem may be the default's, not the file's. A check that does not say
    which keys it reads (not a `CheckError`) is taken to read every key of its table."""
    if not isinstance(failed, CheckError):
        return any(gone[: len(table)] == table for gone in dropped)
    read = [(*table, *key.split(".")) for key in failed.keys]
    return any(key[: len(gone)] == gone for key in read for gone in dropped)


def _child_at(data: Any, path: Path) -> Any:
    node = data
    for part in path:
        node = _child(node, part)
    return node


def validate_config(
    data: Mapping[str, Any], *, source: str = DEFAULT_CONFIG, env: Mapping[str, str] | None = None
) -> PasshatConfig:
    """Validate already-parsed TOML data; raises `ConfigError` listing every problem."""
    problems: list[str] = []
    substituted = _substitute(dict(data), (), os.environ if env is None else env, problems)
    unset = {p.split(": ", 1)[0] for p in problems}  # a missing env var explains its key's other errors
    config = _validated(substituted, problems, unset)
    if problems or config is None:
        raise ConfigError(source, problems or ["not a valid configuration"])
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
