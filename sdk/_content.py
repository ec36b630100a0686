"""Turning application values into attribute strings: JSON, redacted, length-capped."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import heapq
import itertools
import json
import math
import uuid
from typing import Any

from passhat._redact import Redactor


def type_of(value: Any) -> str:
    """How a value that cannot be recorded is recorded: its type, ``<module.QualName>``."""
    kind = type(value)
    return f"<{kind.__module__}.{kind.__qualname__}>"


def _fallback(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:  # text passed as bytes (a raw message body) stays text, so the redaction patterns see it
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(raw).decode("ascii")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    # A framework's context object (pydantic-ai's RunContext holds tasks, clients, the model), a module, a task,
    # a client: recorded by its type. Converting one must never reach the agent as an exception.
    try:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.asdict(value)
        dump = getattr(value, "model_dump", None)  # pydantic models, without importing pydantic
        if callable(dump) and not isinstance(value, type):
            try:
                return dump(mode="json")
            except TypeError:
                return dump()
    except Exception:
        return type_of(value)
    return type_of(value)


def jsonable(value: Any, depth: int = 4) -> Any:
    """A JSON-compatible copy of a value (datetimes, decimals, dataclasses, pydantic models become JSON).

    Never raises: what cannot be converted (a task, a module, a client, a cycle) is recorded by its type; a dict or
    list that fails as a whole is converted entry by entry (``depth`` levels down), so its plain values remain.
    """
    try:
        return json.loads(json.dumps(value, default=_fallback, ensure_ascii=False))
    except Exception:  # a cycle, a key that is not a str, a converter that raised: record what can be recorded
        if depth > 0 and isinstance(value, dict):
            return {str(key): jsonable(item, depth - 1) for key, item in value.items()}
        if depth > 0 and isinstance(value, list | tuple):
            return [jsonable(item, depth - 1) for item in value]
        return type_of(value)


# How far past the cap a value is serialised before the rest is left out. A string cut there is redacted without
# its tail, so a personal value lying across the cut could go unrecognised: the cut stays this far beyond what is
# recorded (at least half of it after redaction, which may shorten the text), further than any built-in kind's
# value is long.
MARGIN = 4096


def to_json(value: Any, redactor: Redactor, limit: int | None = None, *, whole: bool = True) -> str:
    """The redacted JSON text of a value, cut to ``limit`` characters with a marker when longer.

    With a ``limit``, the cost is bounded by it: a value whose JSON would run far past the limit (a list of a
    million items, a megabyte string) is serialised and redacted only up to ``limit + MARGIN`` characters, and the
    marker then says ``…[truncated: more than N chars]`` (the exact count would need the whole text). So it does
    when ``whole`` is False: ``value`` is already the first part of a longer one (a generator tool's first items).
    """
    if limit is None:
        return _dumps(jsonable(value), redactor)
    budget = limit + MARGIN
    if whole and _fits(value, budget, 0) >= 0:  # the usual value: small, of JSON's own types, so JSON as it is
        return cap(_dumps(value, redactor), limit)
    while True:
        pruner = _Pruner(budget)
        try:
            kept = pruner.walk(value, 0)
        except Exception:  # never let the bound cost the agent its call: record the value the old, unbounded way
            kept, pruner.pruned = value, False
        text = _dumps(jsonable(kept), redactor)
        if not pruner.pruned and (whole or len(text) <= limit):
            return cap(text, limit)
        if not pruner.pruned:
            return f"{text[:limit]}…[truncated: more than {len(text) - limit} chars]"
        if len(text) >= limit + MARGIN // 2 + pruner.cut_depth + 2:
            return f"{text[:limit]}…[truncated: more than {len(text) - limit} chars]"
        budget *= 4  # redaction shortened the text (blanking) so much that the cut came close: keep more


def capped_text(redactor: Redactor, text: str, limit: int) -> str:
    """A message's text redacted and cut to ``limit`` characters, redacting no more than ``limit + MARGIN``."""
    if len(text) <= limit + MARGIN:
        return cap(redactor.text(text), limit)
    kept = redactor.text(text[: limit + MARGIN])
    if len(kept) < limit + MARGIN // 2:
        return cap(redactor.text(text), limit)  # redaction shortened it that much: the whole text, as before
    return f"{kept[:limit]}…[truncated: more than {len(kept) - limit} chars]"


def _dumps(data: Any, redactor: Redactor) -> str:
    """The redacted JSON text of a value of JSON's own types (what :func:`jsonable` returns)."""
    if redactor.active:
        data = redactor.value(data)
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or an infinity, which JSON has no token for: the collector would read no JSON at all
        return json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"))


_MAX_DEPTH = 100


def _fits(value: Any, left: int, depth: int) -> int:
    """What is left of ``left`` characters once ``value``'s JSON text is written, or -1: it may not fit, or holds
    something besides dicts with str keys, lists, tuples, str, int, float, bool and None (which :func:`jsonable`
    would convert). Numbers are counted high, escapes not at all: a "yes" means the whole is made JSON at a cost in
    proportion to the cap; a "no" sends the value to :class:`_Pruner`."""
    kind = type(value)
    if kind is dict:
        if depth > 16:
            return -1
        left -= 2
        for key, item in value.items():
            if type(key) is not str:
                return -1
            kind = type(item)
            if kind is str:
                left -= len(key) + len(item) + 6
            elif kind is int or kind is float or item is None or kind is bool:
                left -= len(key) + 28
            else:
                left = _fits(item, left - len(key) - 4, depth + 1)
            if left < 0:
                return -1
        return left
    if kind is list or kind is tuple:
        if depth > 16:
            return -1
        left -= 2
        for item in value:
            kind = type(item)
            if kind is str:
                left -= len(item) + 3
            elif kind is int or kind is float or item is None or kind is bool:
                left -= 25
            else:
                left = _fits(item, left - 1, depth + 1)
            if left < 0:
                return -1
        return left
    if kind is str:
        return left - len(value) - 2
    if kind is float or value is None or kind is bool:
        return left - 24
    if kind is int and -(10**20) < value < 10**20:
        return left - 24
    return -1


_NUMBER = 6  # the characters a number, true, false or null counts for, with its comma


def _bytes_text(raw: bytes) -> str:
    """What :func:`_fallback` makes of bytes, for the first bytes of a longer value (a character cut in two at the
    end is dropped, not taken for binary data)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start >= len(raw) - 3 and error.reason == "unexpected end of data":
            return raw[: error.start].decode("utf-8", errors="replace")
        return base64.b64encode(raw).decode("ascii")


class _Pruner:
    """A copy of a value cut where its JSON text passes ``budget`` characters (the value itself when it fits).

    Only containers, strings and bytes are cut or copied; other values are left for :func:`jsonable`, except those
    it would convert (dataclasses, pydantic models...), converted here so their size is known. Sizes are those of
    the JSON text before redaction, a number's estimated (the bound need not be exact: it only keeps the cost in
    proportion to the cap); what comes after the cut is never looked at.
    """

    __slots__ = ("cut_depth", "left", "path", "pruned")

    def __init__(self, budget: int) -> None:
        self.left = budget
        self.pruned = False
        self.cut_depth = 0
        self.path: set[int] = set()  # the containers being walked: a cycle is left for jsonable

    def _cut(self, depth: int) -> None:
        if not self.pruned:
            self.pruned = True
            self.cut_depth = depth
        self.left = 0

    def walk(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind is str:
            return self._text(value, depth)
        if kind is dict:
            return self._dict(value, depth)
        if kind is list or kind is tuple:
            return self._list(value, depth)
        if value is None or kind is bool or kind is int or kind is float:
            self.left -= _NUMBER
            return value
        if depth > _MAX_DEPTH:
            return value
        if isinstance(value, str):
            return self._text(value, depth)
        if isinstance(value, int | float):
            self.left -= _NUMBER
            return value
        if isinstance(value, dict):
            return self._dict(value, depth)
        if isinstance(value, list | tuple):
            return self._list(value, depth)
        if isinstance(value, set | frozenset):
            if len(value) * 2 <= self.left:
                return self._list(sorted(value, key=repr), depth)
            return self._list(heapq.nsmallest(max(self.left, 1), value, key=repr), depth)
        if isinstance(value, bytes | bytearray | memoryview):
            size = value.nbytes if isinstance(value, memoryview) else len(value)
            if size * 2 + 4 <= self.left:  # its base64 or its text (escapes included) fits: as jsonable makes it
                self.left -= size * 2 + 4
                return value
            return self._text(_bytes_text(bytes(value[: max(self.left, 1) * 4])), depth)
        return self.walk(_fallback(value), depth + 1)

    def _text(self, value: str, depth: int) -> str:
        size = len(value) + 2
        if size <= self.left:
            self.left -= size
            return value
        kept = value[: max(self.left, 1)]
        self._cut(depth)
        return kept

    def _dict(self, value: dict[Any, Any], depth: int) -> Any:
        key = id(value)
        if key in self.path or depth > _MAX_DEPTH:
            return value
        self.path.add(key)
        left = self.left - 2
        copy: dict[Any, Any] | None = None
        try:
            for index, (name, item) in enumerate(value.items()):
                if left <= 0:
                    self._cut(depth)
                    return copy if copy is not None else dict(itertools.islice(value.items(), index))
                left -= len(name) + 3 if type(name) is str else _NUMBER
                kind = type(item)
                if kind is str:
                    if len(item) + 3 <= left:
                        left -= len(item) + 3
                        if copy is not None:
                            copy[name] = item
                        continue
                elif item is None or kind is bool or kind is int or kind is float:
                    left -= _NUMBER
                    if copy is not None:
                        copy[name] = item
                    continue
                self.left = left
                kept = self.walk(item, depth + 1)
                left = self.left
                if kept is not item and copy is None:
                    copy = dict(itertools.islice(value.items(), index))
                if copy is not None:
                    copy[name] = kept
                if self.pruned:
                    return copy if copy is not None else dict(itertools.islice(value.items(), index + 1))
        finally:
            self.path.discard(key)
        self.left = left
        return copy if copy is not None else value

    def _list(self, value: list[Any] | tuple[Any, ...], depth: int) -> Any:
        key = id(value)
        if key in self.path or depth > _MAX_DEPTH:
            return value
        self.path.add(key)
        left = self.left - 2
        copy: list[Any] | None = None
        try:
            for index, item in enumerate(value):
                if left <= 0:
                    self._cut(depth)
                    return copy if copy is not None else list(value[:index])
                kind = type(item)
                if kind is str:
                    if len(item) + 3 <= left:
                        left -= len(item) + 3
                        if copy is not None:
                            copy.append(item)
                        continue
                elif item is None or kind is bool or kind is int or kind is float:
                    left -= _NUMBER
                    if copy is not None:
                        copy.append(item)
                    continue
                self.left = left - 1
                kept = self.walk(item, depth + 1)
                left = self.left
                if kept is not item and copy is None:
                    copy = list(value[:index])
                if copy is not None:
                    copy.append(kept)
                if self.pruned:
                    return copy if copy is not None else list(value[: index + 1])
        finally:
            self.path.discard(key)
        self.left = left
        return copy if copy is not None else value


def _finite(value: Any) -> Any:
    """``value`` with each float JSON cannot write (NaN, infinities) written as its name, a string."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def cap(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut."""
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}…[truncated {len(text) - limit} chars]"
