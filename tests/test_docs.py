"""Every ```python snippet in docs/ runs: a page's blocks in order, in one namespace, in a temporary folder."""

from __future__ import annotations

import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def pages_with_snippets() -> list[pathlib.Path]:
    return sorted(p for p in DOCS.glob("*.md") if FENCE.search(p.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", pages_with_snippets(), ids=lambda p: p.name)
def test_snippets_run(page: pathlib.Path, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}  # as `python snippet.py` runs it
    for number, block in enumerate(FENCE.findall(page.read_text(encoding="utf-8")), start=1):
        # As a file of its own runs it: not under this module's `from __future__ import annotations` (annotations
        # left as text are then resolved against the real __main__, not the page's names).
        code = compile(block, f"{page.name} [python block {number}]", "exec", dont_inherit=True)
        exec(code, namespace)


def test_docs_pages_link_to_each_other() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for page in DOCS.glob("*.md"):
        if page.name != "index.md":
            assert f"({page.name})" in index, f"docs/index.md does not link {page.name}"


def test_snippet_fence_is_found() -> None:
    assert FENCE.search("```python\nx = 1\n```\n")
    assert not FENCE.search("```text\nx = 1\n```\n")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (hyphens and underscores kept), spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_links_between_pages_reach_a_page_and_its_heading() -> None:
    """Every `(page.md)` and `(page.md#heading)` link in docs/ and the README names a page that exists and, with an
    anchor, one of its headings."""
    pages = [*DOCS.glob("*.md"), DOCS.parent / "README.md"]
    anchors: dict[str, set[str]] = {}
    for page in DOCS.glob("*.md"):
        lines = page.read_text(encoding="utf-8").splitlines()
        fenced = False
        found: set[str] = set()
        for line in lines:
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and line.startswith("#"):
                found.add(_anchor(line.lstrip("#")))
        anchors[page.name] = found
    broken = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\((?:docs/)?([a-z_]+\.md)(?:#([^)\s]+))?\)", text):
            if target not in anchors or (anchor and anchor not in anchors[target]):
                broken.append(f"{page.name}: ({target}{'#' + anchor if anchor else ''})")
    assert broken == []
