"""The quickstart and the README say what `make demo` really does: which extras it installs, and that `passhat`
is `.venv/bin/passhat` (or on PATH once the virtual environment is activated) before any bare `passhat`."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```(?:bash|console|sh)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
PAGES = ["README.md", "docs/quickstart.md"]


@pytest.mark.parametrize("page", PAGES)
def test_no_bare_passhat_before_the_page_puts_it_on_path(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    activated = False
    for block in BLOCK.findall(text):
        for line in block.splitlines():
            command = line.strip().removeprefix("$ ")
            if command.startswith("source .venv/bin/activate"):
                activated = True
            assert activated or not command.startswith("passhat "), f"{page}: {command!r} before activating .venv"


def test_the_quickstart_names_the_extras_make_demo_installs() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    extras = re.search(r"^DEMO_EXTRAS \?= (\S+)$", makefile, re.MULTILINE)
    assert extras is not None
    quickstart = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    assert f"passhat[{extras[1]}]" in quickstart
    assert "all extras" not in quickstart and "every extra" not in quickstart.split("make test", 1)[0]
