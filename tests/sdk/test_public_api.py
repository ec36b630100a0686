"""The package's public surface: a sorted __all__ that matches what the package exposes."""

from __future__ import annotations

import types

import passhat
import passhat.testing


def _isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then the rest, each alphabetical."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_and_every_name_exists() -> None:
    assert passhat.__all__ == sorted(passhat.__all__, key=_isort_key)
    for name in passhat.__all__:
        assert hasattr(passhat, name), name


def test_every_public_attribute_is_in_all() -> None:
    public = {
        name
        for name, value in vars(passhat).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(passhat.__all__) - {"__version__"}


def test_the_testing_module_exports_what_it_documents() -> None:
    assert passhat.testing.__all__ == sorted(passhat.testing.__all__, key=_isort_key)
    for name in passhat.testing.__all__:
        assert hasattr(passhat.testing, name), name
