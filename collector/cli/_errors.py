"""The command line's usage errors as one line: `passhat: error: ...`, naming the command and its --help.

Click (inside Typer) shows a wrong option, a missing one or a bad value as a usage block in a box. The replay and
bench commands already say more for their own options (`_replay.ReplayCommand`, `_bench.BenchCommand`); every
other command's usage error gets the same one-line form here, at the top of the command line.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

try:  # Typer 0.16+ carries its own copy of click
    from typer._click.exceptions import NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover - an older Typer, on click itself
    from click.exceptions import NoArgsIsHelpError, UsageError  # type: ignore[assignment]


class OneLineErrors(TyperGroup):
    """The top-level group: runs a command as click does, but prints a usage error as one line (exit status 2)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, windows_expand_args, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except NoArgsIsHelpError:
            return super().main(args, prog_name, complete_var, True, windows_expand_args, **extra)  # the help
        except UsageError as exc:
            if exc.ctx is not None:
                path = exc.ctx.command_path.split(" ")[1:]
            else:  # an option given without its value is refused before its command has a context
                path = _command_names(self, sys.argv[1:] if args is None else list(args))
            command = " ".join(["passhat", *path])  # the program's name as the docs write it
            message = exc.format_message().replace("\n", " ")
            sys.stderr.write(f"passhat: error: `{command}`: {message} (`{command} --help` lists its options)\n")
            sys.exit(exc.exit_code)
        except typer.Abort:
            sys.stderr.write("Aborted.\n")
            sys.exit(1)
        # Without standalone mode click returns the command's exit status (typer.Exit) or its return value.
        sys.exit(result if isinstance(result, int) and not isinstance(result, bool) else 0)


def _command_names(group: Any, args: list[str]) -> list[str]:
    """The command names that lead ``args`` (`runs list` of `runs list --limit`), as far as they name commands."""
    names: list[str] = []
    for arg in args:
        commands = getattr(group, "commands", None)
        if arg.startswith("-") or not isinstance(commands, dict) or arg not in commands:
            break
        names.append(arg)
        group = commands[arg]
    return names
