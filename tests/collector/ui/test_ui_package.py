"""The UI's templates and assets travel in the wheel: every file of the package is a module or matches one of
its package-data patterns in pyproject.toml (a file that matches none would be missing from an installed UI)."""

from __future__ import annotations

import fnmatch
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[3]
UI = ROOT / "collector" / "ui"


def test_every_template_and_asset_is_declared_as_package_data() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]
    files = [p.relative_to(UI).as_posix() for p in UI.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    data = [f for f in files if not f.endswith(".py") and f != "py.typed"]
    assert {"templates/base.html", "static/htmx.min.js", "static/ui.css", "static/ui.js"} <= set(data)

    def declared(name: str) -> bool:
        folder, _, file = name.rpartition("/")
        package = ".".join(["passhat.collector.ui", *filter(None, folder.split("/"))])
        return any(fnmatch.fnmatch(file, pattern) for pattern in package_data.get(package, []))

    assert [f for f in data if not declared(f)] == []


def test_the_vendored_htmx_is_the_npm_release_with_its_licence() -> None:
    htmx = (UI / "static" / "htmx.min.js").read_text(encoding="utf-8")
    assert 'version:"2.0.11"' in htmx.replace(" ", "")
    assert "Zero-Clause BSD" in (UI / "static" / "htmx.LICENSE.txt").read_text(encoding="utf-8")
