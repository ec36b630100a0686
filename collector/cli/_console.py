"""Shared terminal output for CLI commands: Rich tables for people, JSON for machines, one-line errors."""

from __future__ import annotations

import json
import sys
from typing import NoReturn

import typer
from rich.console import Console

console = Console()
error_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear error line and exit with ``code`` (2: the user's input was wrong)."""
    error_console.print(f"[bold red]passhat: error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def emit_json(payload: object) -> None:
    """Write JSON to stdout (no Rich markup, so machines can parse it)."""
    sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False) + "\n")


def pct(value: float | None) -> str:
    """A probability as a percentage with one decimal."""
    if value is None:
        return "-"
    if 0.0 < value < 0.001:
        return f"{100.0 * value:.2g}%"  # keep tiny pass^k visible instead of printing 0.0%
    return f"{100.0 * value:.1f}%"


def ci_text(ci: tuple[float, float] | list[float]) -> str:
    """A confidence interval as [low, high] percentages."""
    return f"[{100.0 * ci[0]:.1f}, {100.0 * ci[1]:.1f}]"
