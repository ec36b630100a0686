"""`domains` entries naming module:attribute: imported from the config file's folder, checked with clear errors."""

from __future__ import annotations

import pathlib
import sys
import uuid

import pytest

from passhat.collector.config import ConfigError, load_config
from passhat.collector.loop import replay_targets
from passhat.collector.replay import DomainAdapter
from passhat.sandbox import DomainError, load_domain


def _project(tmp_path: pathlib.Path, module_text: str, domains: str) -> tuple[pathlib.Path, str]:
    name = f"team_{uuid.uuid4().hex[:8]}"  # a fresh module name per test: imports are cached per process
    (tmp_path / f"{name}.py").write_text(module_text)
    config = tmp_path / "passhat.toml"
    config.write_text(f"domains = {domains.replace('MOD', name)}\n")
    return config, name


def test_an_adapter_named_as_module_attribute_is_imported_from_the_config_folder(tmp_path: pathlib.Path) -> None:
    text = "from passhat.collector.replay import DomainAdapter\nfrom passhat.sandbox import load_domain\n"
    text += "adapter = DomainAdapter(load_domain('retail'))\n"
    config, name = _project(tmp_path, text, '["MOD:adapter"]')
    try:
        targets = replay_targets(load_config(config))
    finally:
        sys.modules.pop(name, None)
    assert isinstance(targets.adapters["retail"], DomainAdapter)
    assert targets.domains["retail"] is load_domain("retail")  # the adapter's sandbox domain, found by name


def test_a_function_returning_a_domain_is_called(tmp_path: pathlib.Path) -> None:
    text = "from passhat.sandbox import load_domain\ndef make():\n    return load_domain('retail')\n"
    config, name = _project(tmp_path, text, '["MOD:make"]')
    try:
        targets = replay_targets(load_config(config))
    finally:
        sys.modules.pop(name, None)
    assert list(targets.domains) == ["retail"] and not targets.adapters


def test_a_module_that_cannot_be_imported_names_where_passhat_looked(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text('domains = ["no_such_team_module:domain"]\n')
    with pytest.raises(DomainError, match=r"cannot import 'no_such_team_module'.*looked in"):
        replay_targets(load_config(config))


def test_an_object_that_is_neither_a_domain_nor_an_adapter_is_refused(tmp_path: pathlib.Path) -> None:
    config, name = _project(tmp_path, "domain = 42\n", '["MOD:domain"]')
    try:
        with pytest.raises(DomainError, match=r"not a passhat\.sandbox\.Domain or a ScenarioAdapter"):
            replay_targets(load_config(config))
    finally:
        sys.modules.pop(name, None)


def test_a_malformed_entry_is_a_config_error(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "passhat.toml"
    config.write_text('domains = ["Not A Domain"]\n')
    with pytest.raises(ConfigError, match="module:attribute"):
        load_config(config)
