"""Objects a config names as ``module:attribute`` (a user's own domain or adapter), imported without packaging.

The module is looked up on ``PYTHONPATH`` and in the config file's folder, so a team can keep its domain beside
its ``passhat.toml`` without writing a ``pyproject.toml`` for it.
"""

from __future__ import annotations

import importlib
import pathlib
import sys
from typing import Any


class ObjectImportError(ValueError):
    """A ``module:attribute`` in the config cannot be imported; the message says where passhat looked."""


def add_to_import_path(folder: pathlib.Path) -> None:
    """Let modules in ``folder`` be imported (appended: PYTHONPATH and installed packages win)."""
    text = str(folder.resolve())
    if text not in sys.path:
        sys.path.append(text)


def import_object(spec: str, base_dir: pathlib.Path) -> Any:
    """The object ``module:attribute`` names (``attribute`` may be dotted), from PYTHONPATH or ``base_dir``."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ObjectImportError(f"{spec!r} is not module:attribute")
    add_to_import_path(base_dir)
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ObjectImportError(
            f"cannot import {module_name!r} for {spec!r} (looked in {base_dir} and on PYTHONPATH): {exc}"
        ) from None
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise ObjectImportError(f"module {module_name!r} has no attribute {attribute!r} (for {spec!r})") from None
    return found
