"""The domain contract: lazy discovery, the file set, package data, unknown names, missing extras, and every
domain's failure modes and collateral damage."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib import resources

import pytest

from passhat.sandbox import DomainError, Sandbox, available_domains, load_domain
from passhat.sandbox.testing import PROBES, check_collateral


def test_listing_domains_does_not_import_them() -> None:
    code = (
        "import sys\n"
        "from passhat.sandbox import available_domains\n"
        "print(available_domains())\n"
        "print(any(m.startswith('passhat.sandbox.domains.') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.splitlines()
    listed = ast.literal_eval(out[0])  # the printed list of names
    assert {"retail", "consulting", "travel", "banking", "insurance"} <= set(listed) and listed == sorted(listed)
    assert out[1] == "False"


def test_unknown_domain_names_the_installed_ones() -> None:
    with pytest.raises(DomainError, match=r"no sandbox domain named 'shop'; installed: .*retail"):
        load_domain("shop")


def test_every_domain_folder_has_the_same_file_set() -> None:
    for name in available_domains():
        folder = resources.files(f"passhat.sandbox.domains.{name}")
        # steps.py: the plan steps a domain's reference plans share, under one name in every domain.
        for required in ("models.py", "seed.py", "policy.md", "tasks.py", "steps.py"):
            assert folder.joinpath(required).is_file(), f"{name} lacks {required}"


def test_every_system_lives_in_its_own_module() -> None:
    for name in available_domains():
        systems = load_domain(name).systems
        modules = [system.backend.__module__ for system in systems]
        assert systems and len(set(modules)) == len(modules), name


def test_policy_is_package_data() -> None:
    policy = load_domain("retail").policy
    assert "explicit" in policy and "30 days" in policy


def test_unknown_task_type_names_the_known_ones(retail: Sandbox) -> None:
    with pytest.raises(DomainError, match=r"no task type 'refund_everything'; known: .*cancel_pending_order"):
        retail.scenarios("refund_everything")


def test_a_missing_extra_names_the_install_to_run() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "try:\n"
        "    import passhat.sandbox\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert "pip install 'passhat[sandbox]'" in out


def test_every_failure_mode_is_reachable_in_every_domain() -> None:
    from passhat.sandbox import FAILURE_MODES

    for name in available_domains():
        reachable = set().union(*(task.failure_modes for task in load_domain(name).task_types.values()))
        assert reachable == set(FAILURE_MODES), name


def test_every_domain_catches_collateral_damage() -> None:
    # For each task type: the reference path plus one unrequested write (another column of a claimed row,
    # another row of a written table, another table) fails naming the write; extra lookups still pass.
    for name in available_domains():
        results = check_collateral(name, scenarios_per_task_type=2)
        assert {result.probe for result in results} == set(PROBES), name
        assert {result.task_type for result in results} == set(load_domain(name).task_types), name
