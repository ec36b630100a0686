"""The one tool-outcome rule: how a tool call came out (``ok``, ``error`` or ``empty``).

Every place that labels a call uses this function: ``@passhat.tool``, the MCP integration, the sandbox's
Toolbox (the trial record) and trace, and the collector's normaliser (spans that carry no outcome). So the
stored trace and the graded record of the same call always agree.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

logger = logging.getLogger("passhat")

ToolOutcome = Literal["ok", "error", "empty"]
"""How a tool call came out."""

ToolKind = Literal["lookup", "write", "other"]
"""What a tool does: reads state (``lookup``), changes it (``write``), or neither (``other``: a hand-off, a
calculator)."""

TOOL_KINDS: tuple[ToolKind, ...] = ("lookup", "write", "other")

EmptyPredicate = Callable[[Any], bool]

NOT_FOUND = "not_found"
"""The ``error.type`` of a call that asked for something that does not exist."""

_EMPTY_CONTAINERS = (str, bytes, list, tuple, dict, set, frozenset)


def _is_nothing(result: Any) -> bool:
    return result is None or (isinstance(result, _EMPTY_CONTAINERS) and len(result) == 0)


def outcome_of(
    result: Any = None,
    empty: EmptyPredicate | None = None,
    *,
    error_type: str | None = None,
    kind: ToolKind | None = None,
) -> ToolOutcome:
    """The outcome of one tool call, from what it returned, how it failed (``error_type``) and its kind.

    - A failed call (``error_type`` given) is ``error``, except a ``not_found`` failure of a lookup or of a
      call of unknown kind (``kind=None``), which is ``empty``: it looked for something and found nothing.
      A write's ``not_found`` is an ``error``: it was asked to change something that is not there.
    - A call that returned is ``empty`` when it is a lookup or of unknown kind and returned nothing
      (None, an empty string or collection), or when ``empty(result)`` says so whatever its kind; else ``ok``.
      A write or other tool that returns nothing did its job: ``ok``.
    """
    looks_up = kind is None or kind == "lookup"
    if error_type is not None:
        return "empty" if looks_up and error_type == NOT_FOUND else "error"
    if looks_up and _is_nothing(result):
        return "empty"
    if empty is not None:
        try:
            if empty(result):
                return "empty"
        except Exception as exc:  # a broken predicate must not break the tool
            logger.debug("passhat: empty predicate raised %r", exc)
    return "ok"
