"""Write a built report into a folder as `report.html`, `report.json` and `report.md`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from passhat.collector.report._html import render_html
from passhat.collector.report._markdown import render_markdown
from passhat.collector.report._model import Report


class ReportWriteError(OSError):
    """The report's folder or one of its files could not be written; the message names the path."""


def render_json(report: Report) -> str:
    """`report.json`'s text: the documented document, indented, ending with a newline."""
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


def write_report(report: Report, out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write the three files into ``out_dir`` (created if missing); return their paths by format.

    Each file is written to a temporary name and renamed, so a reader never sees half a report.
    """
    folder = Path(out_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportWriteError(f"cannot create the report folder {folder}: {exc.strerror or exc}") from None
    contents = {"html": render_html(report), "json": render_json(report), "md": render_markdown(report)}
    paths: dict[str, Path] = {}
    for kind, text in contents.items():
        path = folder / f"report.{kind}"
        partial = folder / f".report.{kind}.partial"
        try:
            partial.write_text(text, encoding="utf-8")
            partial.replace(path)
        except OSError as exc:
            raise ReportWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
        paths[kind] = path
    return paths
