"""Every package's `__all__` is sorted, complete and importable (httpx's habit)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import passhat


def _isort_key(symbol: str) -> tuple[int, str]:
    # ruff's RUF022 order: SCREAMING_CASE constants, then CamelCase classes, then everything else.
    if symbol.isupper():
        return (0, symbol)
    return (1, symbol) if symbol[:1].isupper() else (2, symbol)


def packages_with_all() -> list[str]:
    names = ["passhat"]
    for info in pkgutil.walk_packages(passhat.__path__, prefix="passhat."):
        if info.ispkg and not info.name.split(".")[-1].startswith("_") and ".domains." not in info.name:
            names.append(info.name)
    found = []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an optional extra that is not installed
            pytest.fail(f"{name} does not import: {exc}")
        if hasattr(module, "__all__"):
            found.append(name)
    return found


@pytest.mark.parametrize("name", packages_with_all())
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted as ruff's RUF022 sorts"
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    for symbol in exported:
        assert hasattr(module, symbol), f"{name}.__all__ names {symbol}, which does not exist"


@pytest.mark.parametrize("name", packages_with_all())
def test_public_names_are_in_all(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        symbol
        for symbol, value in vars(module).items()
        if not symbol.startswith("_") and getattr(value, "__module__", "").startswith(name + ".")
    }
    missing = public - set(module.__all__)
    assert not missing, f"{name} defines public names missing from __all__: {sorted(missing)}"
