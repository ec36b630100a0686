"""A mistyped command line is one `passhat: error:` line naming the command and its --help (exit status 2), for
every command: click's usage block in a box is what a new user saw for all but replay and bench."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app


@pytest.mark.parametrize(
    ("args", "command", "says"),
    [
        (["grade", "--tickets-per-task-type", "3"], "passhat grade", "No such option: --tickets-per-task-type"),
        (["serve", "--prot", "1"], "passhat serve", "--port"),
        (["keys", "create"], "passhat keys create", "Missing option '--project'"),
        (["runs", "show"], "passhat runs show", "Missing argument"),
        (["calc", "--k", "abc"], "passhat calc", "Invalid value for '--k'"),
        # An option last on the line with no value: it named `passhat`, not the command.
        (["grade", "--period"], "passhat grade", "Option '--period' requires an argument"),
        (["runs", "list", "--limit"], "passhat runs list", "Option '--limit' requires an argument"),
        (["suite", "run", "--k"], "passhat suite run", "Option '--k' requires an argument"),
    ],
)
def test_a_usage_error_is_one_line(args: list[str], command: str, says: str) -> None:
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2
    [line] = done.output.strip().splitlines()
    assert line.startswith(f"passhat: error: `{command}`: ") and says in line
    assert f"`{command} --help`" in line


def test_the_console_script_prints_the_same_line_and_help_still_works(tmp_path: pathlib.Path) -> None:
    script = pathlib.Path(sys.executable).with_name("passhat")
    done = subprocess.run([str(script), "keys", "create"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("passhat: error: `passhat keys create`: Missing option") and "╭" not in done.stderr
    helped = subprocess.run([str(script), "runs", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert helped.returncode == 0 and "Usage: passhat runs" in helped.stdout
    bare = subprocess.run([str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert "Usage: passhat" in bare.stdout + bare.stderr  # no arguments: the help, as before


@pytest.mark.parametrize("since", ["2026-13-01", "yesterday"])
def test_a_since_that_is_not_a_date_names_the_option_and_the_form(since: str) -> None:
    done = CliRunner().invoke(app, ["replay", "--since", since])
    assert done.exit_code == 2
    assert f"--since '{since}' is not a calendar date" in done.output and "2026-11-20" in done.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["report", "--help"], "[report] send_to"),
        (["replay", "--help"], "[default: replay.tickets_per_task_type]"),
        (["replay", "--help"], "[env PASSHAT_CONFIG;"),
        (["bench", "--help"], "[bench: 5; replay: the config's replay.k]"),
        (["sandbox", "serve", "--help"], "[default: stdio]"),
        (["suite", "run", "--help"], "[default: all]"),
    ],
)
def test_help_keeps_the_bracketed_defaults_and_names(args: list[str], says: str) -> None:
    """Help texts are plain text: Rich read `[default: ...]`, `[env ...]` and `[report]` as markup and dropped them
    (`--send` read "Send the report to the  send_to channels")."""
    done = CliRunner().invoke(app, args, terminal_width=200)
    assert done.exit_code == 0
    assert says in " ".join(done.output.split())


def test_a_period_without_tickets_is_one_line_and_no_progress_bar(tmp_path: pathlib.Path) -> None:
    """`passhat replay --period` on a store without that period's tickets says so in one line: before, a `0/1`
    progress bar was left above it, after the replay's workers had started and stopped for nothing."""
    store = f"sqlite:///{tmp_path / 'empty.db'}"
    done = CliRunner().invoke(app, ["replay", "--period", "2026-W48", "--store", store, "--project", "shop"])
    assert done.exit_code == 2
    [line] = done.output.strip().splitlines()
    assert line.startswith("passhat: error: no production tickets of 2026-W48 in project 'shop'")


MISSING_EXTRA = """
import sys

sys.modules[{blocked!r}] = None  # as if its extra were not installed: importing it raises ModuleNotFoundError
sys.argv = ["passhat", *{args!r}]
from passhat.collector.cli._entry import main

main()
"""


@pytest.mark.parametrize(
    ("blocked", "args"),
    [("typer", ["--help"]), ("uvicorn", ["serve", "--port", "0", "--store", "sqlite:///:memory:"])],
    ids=["the-command-line", "a-command"],
)
def test_a_missing_extra_is_named_in_one_line_not_a_traceback(blocked: str, args: list[str]) -> None:
    """The command line itself, or a part of passhat a command reaches, needs a package its extra installs."""
    done = subprocess.run(
        [sys.executable, "-c", MISSING_EXTRA.format(blocked=blocked, args=args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("passhat: error: "), done.stderr
    assert blocked in done.stderr and "pip install 'passhat[collector]'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["bench", "--domain", "retail", "--k"], "passhat bench"),
        (["replay", "--period", "2026-W49", "--agent"], "passhat replay"),
    ],
)
def test_bench_and_replay_say_an_option_needs_its_value_not_that_they_have_no_such_option(
    args: list[str], command: str
) -> None:
    """They answered "`passhat bench` has no option --k" for `--k` given last, without its value."""
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2
    [line] = done.output.strip().splitlines()
    assert line == f"passhat: error: {args[-1]} needs a value after it: `{command} --help` says what each option takes"
