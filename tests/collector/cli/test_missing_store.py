"""A command that reads what the store holds (production tickets, replay runs) and is given a SQLite store that
holds nothing yet says so in its one error line, naming the path and who named it: before, a mistyped path was
created as a new empty store (its folders too) and the command said only that the period had no tickets."""

from __future__ import annotations

import datetime as dt
import json
import pathlib

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["replay", "--period", "2026-W48"], "no production tickets of 2026-W48 in project 'shop': nothing to replay"),
        (["grade", "--period", "2026-W48"], "no production tickets of 2026-W48 in project 'shop': nothing to grade"),
        (["grade", "--ticket", "T-1"], "no production ticket 'T-1' in project 'shop'"),
        (["report", "--period", "2026-W48"], "no replay run for 2026-W48 in project 'shop'"),
        (["runs", "show", "run-1"], "no replay run 'run-1' in project 'shop'"),
        (["runs", "promote", "run-1"], "no replay run 'run-1' in project 'shop'"),
        (["runs", "compare", "run-1", "run-2"], "no replay run 'run-1' in project 'shop'"),
        (["suite", "table", "run-1"], "no replay run 'run-1' in project 'shop'"),
    ],
)
def test_a_mistyped_store_path_is_named_and_never_created(
    tmp_path: pathlib.Path, args: list[str], says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    typo = tmp_path / "colector" / "passhat.db"
    done = CliRunner().invoke(app, [*args, "--store", f"sqlite:///{typo}", "--project", "shop"])
    assert done.exit_code == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"passhat: error: {says}: there is no store at {typo} (no such file), which --store names")
    assert "passhat serve" in line
    assert not typo.parent.exists()  # nothing made where nothing was


def test_the_store_named_by_the_environment_or_in_memory_is_said_so(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PASSHAT_STORE_URL", "sqlite:///relative.db")
    done = CliRunner().invoke(app, ["report", "--period", "2026-W48"])
    assert done.exit_code == 2
    assert "there is no store at relative.db (no such file), which $PASSHAT_STORE_URL names" in done.stderr
    assert not (tmp_path / "relative.db").exists()
    done = CliRunner().invoke(app, ["report", "--period", "2026-W48", "--store", "sqlite://"])
    assert done.exit_code == 2
    assert "--store names an in-memory store (sqlite://), empty in every new process" in done.stderr


def test_runs_list_on_a_store_that_does_not_exist_lists_none_and_says_why(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing is no error: it lists no runs and the user is told the store was not there; a listing only reads,
    so nothing is made there (before, the store was created empty, folders and all)."""
    monkeypatch.chdir(tmp_path)
    typo = tmp_path / "colector" / "pashat.db"
    for _ in range(2):
        done = CliRunner().invoke(app, ["runs", "list", "--store", f"sqlite:///{typo}", "--project", "shop", "--json"])
        assert done.exit_code == 0
        assert json.loads(done.stdout)["runs"] == []
        assert f"passhat: no replay runs: there is no store at {typo} (no such file), which --store names" in (
            done.stderr
        )
        assert not typo.parent.exists()


def test_alerts_history_on_a_store_that_does_not_exist_lists_none_and_creates_nothing(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PASSHAT_STORE_URL", raising=False)
    typo = tmp_path / "colector" / "passhat.db"
    args = ["alerts", "history", "--store", f"sqlite:///{typo}", "--project", "shop"]
    done = CliRunner().invoke(app, [*args, "--json"])
    assert done.exit_code == 0 and json.loads(done.stdout) == []
    assert f"passhat: no alerts: there is no store at {typo} (no such file), which --store names" in done.stderr
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0 and shown.stdout == "No alerts recorded for project shop.\n"
    assert "passhat: no alerts: there is no store" in shown.stderr
    assert not typo.parent.exists()


def test_a_store_that_exists_is_read_as_before(tmp_path: pathlib.Path) -> None:
    """An existing store without the period's tickets: the command's own error, without a word about the file."""
    from passhat.collector.store import open_store

    path = tmp_path / "passhat.db"
    open_store(f"sqlite:///{path}").close()
    args = ["replay", "--period", "2026-W48", "--store", f"sqlite:///{path}", "--project", "shop"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2
    assert "no production tickets of 2026-W48 in project 'shop': nothing to replay (is the agent" in done.stderr
    assert "no such file" not in done.stderr


def test_a_project_the_store_never_heard_of_is_named_with_the_ones_it_holds(tmp_path: pathlib.Path) -> None:
    from passhat.collector.store import ReplayRun, open_store

    url = f"sqlite:///{tmp_path / 'passhat.db'}"
    store = open_store(url)
    store.ensure_project("shop")
    store.ensure_project("bank")
    store.close()
    done = CliRunner().invoke(app, ["report", "--period", "2026-W48", "--store", url, "--project", "shpo"])
    assert done.exit_code == 2
    [line] = done.stderr.strip().splitlines()
    assert line == (
        "passhat: error: no replay run for 2026-W48 in project 'shpo': the store has no project 'shpo', only 'bank',"
        " 'shop'; check --project (or the config's project)"
    )
    listed = CliRunner().invoke(app, ["runs", "list", "--store", url, "--project", "shpo", "--json"])
    assert listed.exit_code == 0 and json.loads(listed.stdout)["runs"] == []
    assert "the store has no project 'shpo', only 'bank', 'shop'" in listed.stderr
    listed = CliRunner().invoke(app, ["runs", "list", "--store", url, "--project", "shpo"])  # as a person reads it
    assert listed.exit_code == 0 and "the store has no project 'shpo'" in listed.stderr
    assert listed.stdout == ""  # no empty table under the reason there are no runs
    # A project the store holds runs of, though never registered (a script's own exporter), is no typo.
    store = open_store(url)
    store.create_replay_run("lab", ReplayRun("run-1", dt.datetime.now(dt.UTC), k=2))
    store.close()
    done = CliRunner().invoke(app, ["report", "--period", "2026-W48", "--store", url, "--project", "lab"])
    assert done.exit_code == 2 and "has no project" not in done.stderr
    assert "no replay run for 2026-W48 in project 'lab': run `passhat replay --period 2026-W48`" in done.stderr


def test_keys_revoke_refuses_a_store_that_is_not_there_and_keys_list_says_so(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PASSHAT_STORE_URL", raising=False)
    typo = tmp_path / "colector" / "passhat.db"
    done = CliRunner().invoke(app, ["keys", "revoke", "phk_1234", "--store", f"sqlite:///{typo}"])
    assert done.exit_code == 2
    assert done.stderr.strip() == (
        f"passhat: error: no active key with prefix 'phk_1234': there is no store at {typo} (no such file), which "
        "--store names: check the path (the collector, `passhat serve`, creates its store as it starts)"
    )
    assert not typo.parent.exists()
    monkeypatch.setenv("PASSHAT_DATA_DIR", str(tmp_path / "data"))
    done = CliRunner().invoke(app, ["keys", "revoke", "phk_1234"])
    assert done.exit_code == 2 and "which $PASSHAT_DATA_DIR names" in done.stderr
    for args in (["--json"], []):  # a listing: none listed, said, and nothing made (it only reads)
        listed = CliRunner().invoke(app, ["keys", "list", *args])
        assert listed.exit_code == 0 and listed.stdout == ("[]\n" if args else "no keys\n")
        assert f"passhat: no keys: there is no store at {tmp_path / 'data' / 'passhat.db'} (no such file)" in (
            listed.stderr
        )
        assert not (tmp_path / "data").exists()
    created = CliRunner().invoke(app, ["keys", "create", "--project", "shop", "--json"])  # writing: made, as before
    assert created.exit_code == 0, created.output
    prefix = json.loads(created.stdout)["prefix"]
    assert CliRunner().invoke(app, ["keys", "revoke", prefix]).exit_code == 0
