"""`passhat keys create|list|revoke`: the key printed once (last line alone), stored hashed, revocable."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.ingest._keys import create_api_key, hash_api_key, key_prefix
from passhat.collector.store import open_store

PASSHAT = pathlib.Path(sys.executable).with_name("passhat")
runner = CliRunner()


def test_create_prints_the_key_alone_on_the_last_line(tmp_path: pathlib.Path) -> None:
    done = subprocess.run(
        [str(PASSHAT), "keys", "create", "--project", "shop", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    key = done.stdout.strip().splitlines()[-1]
    assert key.startswith("phk_") and " " not in key
    with open_store(f"sqlite:///{tmp_path / 'passhat.db'}") as store:
        record = store.find_api_key(hash_api_key(key))
        assert record is not None and record.project == "shop" and record.active
        raw = pathlib.Path(tmp_path / "passhat.db").read_bytes()
    assert key.encode() not in raw  # only the hash is stored


def test_list_shows_prefixes_and_revoke_disables(tmp_path: pathlib.Path) -> None:
    store_args = ["--store", f"sqlite:///{tmp_path / 'k.db'}"]
    created = runner.invoke(app, ["keys", "create", "--project", "shop", "--label", "ci", "--json", *store_args])
    assert created.exit_code == 0, created.output
    made = json.loads(created.output)
    runner.invoke(app, ["keys", "create", "--project", "bank", *store_args])
    listed = json.loads(runner.invoke(app, ["keys", "list", "--json", *store_args]).output)
    assert sorted(k["project"] for k in listed) == ["bank", "shop"]
    assert all(made["key"] not in json.dumps(k) for k in listed)
    shop_only = runner.invoke(app, ["keys", "list", "--project", "shop", *store_args]).output
    assert made["prefix"] in shop_only and "active" in shop_only and "ci" in shop_only
    revoked = runner.invoke(app, ["keys", "revoke", made["prefix"], *store_args])
    assert revoked.exit_code == 0 and f"Revoked {made['prefix']}" in revoked.output
    again = runner.invoke(app, ["keys", "revoke", made["prefix"], *store_args])
    assert again.exit_code == 2
    assert "no active key" in again.output
    with open_store(store_args[1]) as store:
        record = store.find_api_key(hash_api_key(made["key"]))
        assert record is not None and not record.active


def test_a_bad_store_url_is_one_clear_error(tmp_path: pathlib.Path) -> None:
    result = runner.invoke(app, ["keys", "list", "--store", "nosuchdriver://x"])
    assert result.exit_code == 2
    assert result.output.startswith("passhat: error:")
    assert "Traceback" not in result.output
    empty = runner.invoke(app, ["keys", "create", "--project", " ", "--data-dir", str(tmp_path)])
    assert empty.exit_code == 2 and "--project" in empty.output


def test_a_project_name_passhat_toml_would_refuse_is_refused_in_one_line(tmp_path: pathlib.Path) -> None:
    for name in ("bad name!", "-dash", "x" * 101):
        done = subprocess.run(
            [str(PASSHAT), "keys", "create", "--project", name, "--data-dir", str(tmp_path)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr == (
            "passhat: error: --project must be letters, digits, '.', '-' or '_' (at most 100 characters, as "
            f"passhat.toml's `project`), got {name!r}\n"
        )
    with open_store(f"sqlite:///{tmp_path / 'passhat.db'}") as store:
        assert store.list_api_keys() == [] and store.list_projects() == []
    ok = runner.invoke(app, ["keys", "create", "--project", "Shop-2.eu_west", "--data-dir", str(tmp_path)])
    assert ok.exit_code == 0, ok.output


def test_the_prefix_of_a_key_is_its_public_name(tmp_path: pathlib.Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'k.db'}") as store:
        for _ in range(50):  # the secret part may contain '_' and '-': the prefix never depends on it
            key, record = create_api_key(store, "shop")
            assert key_prefix(key) == record.prefix
            assert len(record.prefix) == 12 and record.prefix.startswith("phk_")


def test_keys_take_the_store_of_the_config_serve_uses(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`keys create|list|revoke --config passhat.toml` use its [store] url (relative to its folder), as
    `passhat serve --config` does; --store still wins."""
    monkeypatch.delenv("PASSHAT_STORE_URL", raising=False)
    folder = tmp_path / "collector"
    folder.mkdir()
    config = folder / "passhat.toml"
    config.write_text('project = "shop"\n[store]\nurl = "sqlite:///keys.db"\n')
    created = runner.invoke(app, ["keys", "create", "--project", "shop", "--config", str(config), "--json"])
    assert created.exit_code == 0, created.output
    prefix = json.loads(created.output)["prefix"]
    with open_store(f"sqlite:///{folder / 'keys.db'}") as store:
        assert [k.prefix for k in store.list_api_keys("shop")] == [prefix]
    listed = runner.invoke(app, ["keys", "list", "--config", str(config)])
    assert prefix in listed.output
    elsewhere = runner.invoke(
        app, ["keys", "list", "--config", str(config), "--store", f"sqlite:///{tmp_path / 'o.db'}"]
    )
    assert elsewhere.exit_code == 0 and prefix not in elsewhere.output
    assert runner.invoke(app, ["keys", "revoke", prefix, "--config", str(config)]).exit_code == 0


def test_revoke_takes_the_whole_key_and_never_prints_its_secret(tmp_path: pathlib.Path) -> None:
    """The key as `keys create` showed it revokes that key once its secret part matches the stored hash; a copy that
    does not match, or anything else, is refused without echoing what was given."""
    store_args = ["--store", f"sqlite:///{tmp_path / 'k.db'}"]
    made = json.loads(runner.invoke(app, ["keys", "create", "--project", "shop", "--json", *store_args]).output)
    key, prefix = made["key"], made["prefix"]
    secret = key[len(prefix) :]
    mistyped = runner.invoke(app, ["keys", "revoke", key[:-1] + ("A" if key[-1] != "A" else "B"), *store_args])
    assert mistyped.exit_code == 2 and secret[:-1] not in mistyped.output
    assert mistyped.output == (
        f"passhat: error: the key given does not match the stored key with prefix '{prefix}': its secret part differs "
        f"(a partial or mistyped copy?); check the key, or give the prefix alone: passhat keys revoke {prefix}\n"
    )
    truncated = runner.invoke(app, ["keys", "revoke", key[:20], *store_args])
    assert truncated.exit_code == 2 and "does not match" in truncated.output and key[12:20] not in truncated.output
    other = runner.invoke(app, ["keys", "revoke", "phk_00000000_" + secret[1:], *store_args])
    assert other.exit_code == 2 and secret[1:] not in other.output
    assert other.output == "passhat: error: no key with prefix 'phk_00000000' in this store (see `passhat keys list`)\n"
    pasted = runner.invoke(app, ["keys", "revoke", "sk-ant-" + secret, *store_args])
    assert pasted.exit_code == 2 and secret not in pasted.output and "neither a key prefix" in pasted.output
    with open_store(store_args[1]) as store:
        assert store.find_api_key(hash_api_key(key)).active  # type: ignore[union-attr]
    revoked = runner.invoke(app, ["keys", "revoke", f" {key}\n", *store_args])  # as pasted, with its newline
    assert revoked.exit_code == 0, revoked.output
    assert revoked.output == f"Revoked {prefix}\n"
    again = runner.invoke(app, ["keys", "revoke", key, *store_args])
    assert again.exit_code == 2 and secret not in again.output
    assert again.output == (
        f"passhat: error: the key with prefix '{prefix}' is already revoked (see `passhat keys list`)\n"
    )
    with open_store(store_args[1]) as store:
        record = store.find_api_key(hash_api_key(key))
        assert record is not None and not record.active
    missing = runner.invoke(app, ["keys", "revoke", key, "--store", f"sqlite:///{tmp_path / 'nothere.db'}"])
    assert (
        missing.exit_code == 2
        and secret not in missing.output
        and f"no active key with prefix '{prefix}'" in (missing.output)
    )


def test_list_is_a_table_with_a_header_row(tmp_path: pathlib.Path) -> None:
    store_args = ["--store", f"sqlite:///{tmp_path / 'k.db'}"]
    made = json.loads(
        runner.invoke(app, ["keys", "create", "--project", "shop", "--label", "ci", "--json", *store_args]).output
    )
    runner.invoke(app, ["keys", "create", "--project", "bank", *store_args])
    lines = runner.invoke(app, ["keys", "list", *store_args]).output.splitlines()
    assert lines[0].split() == ["prefix", "project", "created", "(UTC)", "status", "label"]
    assert set(lines[1].strip()) == {"─"}
    # Two keys made within the same second: their order is not the point, each row is found by its prefix.
    [shop] = [line.split() for line in lines[2:] if line.split()[:1] == [made["prefix"]]]
    [bank] = [line.split() for line in lines[2:] if line.split()[:1] != [made["prefix"]]]
    assert shop[1] == "shop" and shop[-2:] == ["active", "ci"] and bank[1] == "bank"
    assert runner.invoke(app, ["keys", "revoke", made["prefix"], *store_args]).exit_code == 0
    lines = runner.invoke(app, ["keys", "list", *store_args]).output.splitlines()
    assert lines[0].split() == ["prefix", "project", "created", "(UTC)", "status", "revoked", "(UTC)", "label"]
    [shop] = [line.split() for line in lines[2:] if line.split()[:1] == [made["prefix"]]]
    [bank] = [line.split() for line in lines[2:] if line.split()[:1] != [made["prefix"]]]
    assert shop[1] == "shop" and shop[4] == "revoked" and bank[-2:] == ["active", "-"]
