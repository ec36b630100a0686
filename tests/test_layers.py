"""The import rules of the code base, read from the source (AST), so a violation fails here and not in review.

Data flows one way: ``sdk < checks < sandbox < collector``. Inside the sandbox ``domain < agents, inference < trial <
domains, testing``. Inside the collector a sub-package imports only sub-packages of a lower rank (``store``,
``reliability`` and ``config`` at the bottom; ``cli`` the leaf nothing imports). And nobody imports another
package's private module (``passhat.x._y`` is for ``passhat.x`` alone): use the names its ``__init__`` exports.
An import by name (``importlib.import_module("passhat.collector.store")``, ``__import__(...)``) counts as an
import: naming the module in a string does not get around the rules.
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = {"sdk": "passhat", "checks": "passhat.checks", "sandbox": "passhat.sandbox", "collector": "passhat.collector"}
TOP_RANK = {"passhat": 0, "passhat.checks": 1, "passhat.sandbox": 2, "passhat.collector": 3}

# The contract tests (testing) drive trials of any domain: above trial, level with the domains they test.
SANDBOX_RANK = {"domain": 0, "agents": 1, "inference": 1, "trial": 2, "domains": 3, "testing": 3}
COLLECTOR_RANK = {
    "store": 0,
    "reliability": 0,
    "config": 0,
    "ingest": 1,
    "replay": 1,
    "alerts": 1,
    "report": 1,
    "ui": 1,
    "loop": 2,
    "suite": 2,
    "testing": 2,
    "demo": 3,
    "cli": 4,
}
SUB_RANKS = {"passhat.sandbox": SANDBOX_RANK, "passhat.collector": COLLECTOR_RANK}


def _modules() -> Iterator[tuple[str, pathlib.Path]]:
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join([package, *parts]), path


def _named_import(node: ast.Call) -> str | None:
    """The module an ``import_module(...)`` or ``__import__(...)`` call names, when the name is written out.

    A name built at run time counts by its written prefix (``f"passhat.collector.{x}"`` names
    ``passhat.collector``); a relative name is resolved against ``package=`` when that is written out too.
    """
    function = node.func
    called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    if called not in {"import_module", "__import__"} or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        name = first.value
    elif isinstance(first, ast.JoinedStr) and first.values and isinstance(first.values[0], ast.Constant):
        name = str(first.values[0].value).rpartition(".")[0]
    else:
        return None
    if called == "import_module" and name.startswith("."):
        anchor = next((k.value for k in node.keywords if k.arg == "package"), None)
        if anchor is None and len(node.args) > 1:
            anchor = node.args[1]
        if not (isinstance(anchor, ast.Constant) and isinstance(anchor.value, str)):
            return None
        dots = len(name) - len(name.lstrip("."))
        base = anchor.value.split(".")
        name = ".".join([*base[: len(base) - (dots - 1)], name.lstrip(".")]).rstrip(".")
    return name or None


def _imports(module: str, path: pathlib.Path) -> Iterator[tuple[int, str]]:
    """Every module name the file imports (``from a import _b`` gives ``a._b`` too: _b may be a module), by
    statement or by name (``importlib.import_module("a.b")``, ``__import__("a.b")``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            named = _named_import(node)
            if named is not None:
                yield node.lineno, named
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            yield node.lineno, base
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield node.lineno, f"{base}.{alias.name}"


def _top(module: str) -> str | None:
    """The distribution package a module belongs to (the SDK is ``passhat`` minus the other three)."""
    if module != "passhat" and not module.startswith("passhat."):
        return None
    for package in ("passhat.collector", "passhat.checks", "passhat.sandbox"):
        if module == package or module.startswith(package + "."):
            return package
    return "passhat"


def _sub(module: str, top: str) -> str | None:
    rest = module[len(top) + 1 :].split(".") if module != top else []
    return rest[0] if rest and not rest[0].startswith("_") else None


def _private_owner(module: str) -> str | None:
    """``passhat.collector.store._rows.X`` -> ``passhat.collector.store``: who may import it."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def _inside(module: str, package: str) -> bool:
    if _top(module) != _top(package):
        return False
    return module == package or module.startswith(package + ".")


def _check(module: str, path: pathlib.Path, where: object) -> list[str]:
    """What one module breaks of the rules, one line each."""
    found: list[str] = []
    top = _top(module)
    assert top is not None
    for line, imported in _imports(module, path):
        target = _top(imported)
        if target is None:
            if imported.split(".")[0] in FOLDERS:
                found.append(f"{where}:{line}: imports the folder {imported!r}; import the passhat package")
            continue
        if TOP_RANK[target] > TOP_RANK[top]:
            found.append(f"{where}:{line}: {top} imports {imported} (a higher layer: {target})")
        owner = _private_owner(imported)
        if owner is not None and owner != "passhat" and not _inside(module, owner):
            found.append(f"{where}:{line}: imports the private {imported} from outside {owner}")
        if owner == "passhat" and top != "passhat" and imported != "passhat._version":
            found.append(f"{where}:{line}: imports the SDK's private {imported}")
        ranks = SUB_RANKS.get(top)
        if ranks is not None and target == top:
            mine, theirs = _sub(module, top), _sub(imported, top)
            if mine is not None and theirs is not None and mine != theirs:
                if mine not in ranks or theirs not in ranks:
                    found.append(f"{where}:{line}: {top}.{mine} or .{theirs} has no rank in tests/test_layers.py")
                elif ranks[theirs] >= ranks[mine]:
                    found.append(f"{where}:{line}: {top}.{mine} imports {top}.{theirs} (same or higher rank)")
    return found


def violations() -> list[str]:
    return [problem for module, path in _modules() for problem in _check(module, path, path.relative_to(ROOT))]


def test_no_module_breaks_the_import_rules() -> None:
    problems = violations()
    assert not problems, "import rules broken:\n" + "\n".join(problems)


def test_every_collector_and_sandbox_subpackage_has_a_rank() -> None:
    for top, ranks in SUB_RANKS.items():
        folder = ROOT / next(f for f, p in FOLDERS.items() if p == top)
        subpackages = {p.parent.name for p in folder.glob("*/__init__.py")}
        assert subpackages == set(ranks) - {"ui"} or subpackages == set(ranks), (top, subpackages ^ set(ranks))


def test_the_collector_root_holds_only_its_init_and_packages() -> None:
    allowed = {"__init__.py", "py.typed"}
    loose = [p.name for p in (ROOT / "collector").iterdir() if p.is_file() and p.suffix not in {".so", ".pyd"}]
    assert sorted(set(loose) - allowed) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from passhat.collector.alerts import AlertRule\n", "a higher layer"),
        ("from passhat.sandbox.trial._runner import run_trial\n", "imports the private"),
        ("from passhat._runtime import configure\n", "SDK's private"),
        ('import importlib\nstore = importlib.import_module("passhat.collector.store")\n', "a higher layer"),
        ('from importlib import import_module\nimport_module("passhat.sandbox.trial._runner")\n', "the private"),
        ('replay = __import__("passhat.collector.replay", fromlist=["compare_runs"])\n', "a higher layer"),
        ('import importlib\nimportlib.import_module(f"passhat.collector.{name}")\n', "a higher layer"),
        ('import importlib\nimportlib.import_module("._runtime", package="passhat")\n', "SDK's private"),
    ],
)
def test_the_rules_catch_a_violation(tmp_path: pathlib.Path, source: str, expected: str) -> None:
    # A checks module importing upward or reaching into a private module is reported (the rules can fail).
    module = tmp_path / "probe.py"
    module.write_text(source)
    found = _check("passhat.checks._probe", module, "probe.py")
    assert any(expected in problem for problem in found), found


def test_an_sdk_module_importing_the_collector_by_name_is_reported(tmp_path: pathlib.Path) -> None:
    # The SDK may not reach the collector at call time by naming it in a string either.
    module = tmp_path / "gate.py"
    module.write_text(
        "import importlib\n\n\ndef gate() -> None:\n"
        "    replay = importlib.import_module('passhat.collector.replay')\n"
        "    stores = importlib.import_module('passhat.collector.store')\n"
    )
    found = _check("passhat.testing._gate", module, "gate.py")
    assert found == [
        "gate.py:5: passhat imports passhat.collector.replay (a higher layer: passhat.collector)",
        "gate.py:6: passhat imports passhat.collector.store (a higher layer: passhat.collector)",
    ]


def test_a_module_name_only_known_at_run_time_is_not_reported(tmp_path: pathlib.Path) -> None:
    # Plugins named in configuration are imported by a name read at run time: nothing to check statically.
    module = tmp_path / "plugin.py"
    module.write_text(
        "import importlib\n\n\ndef load(name: str) -> object:\n    return importlib.import_module(name)\n"
    )
    assert _check("passhat.checks._plugin", module, "plugin.py") == []
