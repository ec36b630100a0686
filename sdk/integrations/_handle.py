"""What every ``instrument_*`` shares: a lazy import that names the extra to install, and an undo handle."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType


class MissingExtraError(ImportError):
    """An integration's library is not installed; the message names the ``pip install`` to run."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install 'passhat[extra]'``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise MissingExtraError(
            f"passhat.instrument_{extra} needs the {module!r} package, which is not installed. "
            f"Run: pip install 'passhat[{extra}]'"
        ) from exc


class Instrumentation:
    """What an ``instrument_*`` call returns: ``uninstrument()`` (or leaving its ``with`` block) undoes it."""

    def __init__(self, name: str, undo: Callable[[], None]) -> None:
        self.name = name
        self._undo: Callable[[], None] | None = undo

    @property
    def active(self) -> bool:
        """Whether the instrumentation is still in place."""
        return self._undo is not None

    def uninstrument(self) -> None:
        """Remove the instrumentation; calling it twice is harmless."""
        undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    def __enter__(self) -> Instrumentation:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.uninstrument()

    def __repr__(self) -> str:
        return f"<passhat instrumentation {self.name} {'active' if self.active else 'removed'}>"
