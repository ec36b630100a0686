"""The package's public surface: an __all__ that matches what the package exposes."""

from __future__ import annotations

import types

import passhat
import passhat.testing

# The order of every __all__ is one rule (ruff's RUF022), checked for all packages by tests/test_public_api.py.


def test_every_name_in_all_exists() -> None:
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
    for name in passhat.testing.__all__:
        assert hasattr(passhat.testing, name), name
