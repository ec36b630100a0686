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
    """Every folder with files, modules or data alike (`collector/ui/static`), as setuptools sees it: one that is
    importable but not listed makes the build print a page-long warning on every install."""
    setuptools_cfg = _pyproject()["tool"]["setuptools"]  # type: ignore[index]
    package_dir: dict[str, str] = setuptools_cfg["package-dir"]
    listed = set(setuptools_cfg["packages"])
    on_disk: set[str] = set()
    for package, folder in package_dir.items():
        base = ROOT / folder
        for path in [base, *base.rglob("*")]:
            if not path.is_dir() or "__pycache__" in path.parts or not any(p.is_file() for p in path.iterdir()):
                continue
            on_disk.add(".".join((package, *path.relative_to(base).parts)))
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
