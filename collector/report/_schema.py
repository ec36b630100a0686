"""The JSON Schema of `report.json`, shipped as package data so consumers can validate what they read."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

SCHEMA_FILE = "report.schema.json"


@cache
def _schema_text() -> str:
    return resources.files("passhat.collector.report").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) that every `report.json` satisfies; a fresh copy on each call."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema
