"""The distribution's layout: every package folder on disk is listed in pyproject, and the SDK stays light."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _pyproject() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)


def test_every_package_folder_is_listed_in_pyproject() -> None:
    setuptools_cfg = _pyproject()["tool"]["setuptools"]  # type: ignore[index]
    package_dir: dict[str, str] = setuptools_cfg["package-dir"]
    listed = set(setuptools_cfg["packages"])
    on_disk: set[str] = set()
    for package, folder in package_dir.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            relative = init.parent.relative_to(base).parts
            on_disk.add(".".join((package, *relative)))
    assert on_disk == listed, f"on disk but not listed: {on_disk - listed}; listed but absent: {listed - on_disk}"


def test_every_package_has_py_typed() -> None:
    package_dir: dict[str, str] = _pyproject()["tool"]["setuptools"]["package-dir"]  # type: ignore[index]
    for folder in package_dir.values():
        assert (ROOT / folder / "py.typed").exists(), folder


def test_import_passhat_stays_light() -> None:
    code = (
        "import sys, passhat\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "{'fastapi', 'sqlalchemy', 'clickhouse_connect', 'chdb', 'numpy', 'scipy', 'typer', 'starlette', "
        "'mcp', "
        "'anthropic', 'passhat.collector'} or m.startswith('passhat.collector')]\n"
        "print(','.join(sorted(heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == ""


def test_version_is_exposed() -> None:
    import passhat

    assert passhat.__version__ == "0.1.0"
