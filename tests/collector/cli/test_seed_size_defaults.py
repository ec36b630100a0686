"""`passhat sandbox serve` (tools or graded sessions) and `passhat replay` draw the same data by default, so
"scenario 0" of a task type is the same customer and order whichever command serves it."""

from __future__ import annotations

from typing import Any

import typer

from passhat.collector.cli import app
from passhat.collector.loop import SessionService


def _default(*path: str, option: str) -> object:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    (param,) = [p for p in command.params if p.name == option]
    return param.default


def test_serve_and_replay_default_to_the_same_seed_size_and_seed() -> None:
    assert _default("sandbox", "serve", option="size") == _default("bench", option="size") == "small"
    assert _default("sandbox", "serve", option="seed") == _default("bench", option="seed") == 0


def test_the_sessions_service_defaults_to_the_size_the_command_serves() -> None:
    assert SessionService("retail").size == _default("sandbox", "serve", option="size")
