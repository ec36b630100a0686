"""Check a built wheel: every package folder on disk is inside it, the compiled OTLP decoder too, and
`import passhat` and the decoder import from it (the build of the optional extension must not have failed
silently in CI)."""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAPPING = {
    "sdk": "passhat",
    "collector": "passhat/collector",
    "checks": "passhat/checks",
    "sandbox": "passhat/sandbox",
}


def expected_files() -> set[str]:
    files: set[str] = set()
    for folder, target in MAPPING.items():
        for path in (ROOT / folder).rglob("*"):
            if (
                path.is_file()
                and "__pycache__" not in path.parts
                and path.suffix in {".py", ".pyi", ".typed", ".md", ".json", ".csv", ".toml", ".xml", ".html", ".sql"}
            ):
                files.add(f"{target}/{path.relative_to(ROOT / folder).as_posix()}")
    return files


def main(wheel: str) -> int:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(expected_files() - names)
    if missing:
        print("files missing from the wheel (add their package to pyproject's packages or package-data):")
        for name in missing:
            print("  ", name)
        return 1
    compiled = [n for n in names if n.startswith("passhat/collector/ingest/_otlpfast.") and n.endswith((".so", ".pyd"))]
    if not compiled:
        print("the compiled passhat.collector.ingest._otlpfast is not in the wheel: did the C extension fail to build?")
        return 1
    sys.path = [p for p in sys.path if pathlib.Path(p or ".").resolve() != ROOT]
    module = importlib.import_module("passhat")
    if ROOT in pathlib.Path(module.__file__ or "").resolve().parents:
        print("passhat was imported from the source tree, not the wheel")
        return 1
    # The wheel is installed without extras, and `passhat.collector.ingest` needs the collector extra (FastAPI):
    # load the compiled module from its installed file instead of through its package.
    installed = pathlib.Path(module.__file__ or "").parent / "collector" / "ingest"
    found = sorted(installed.glob("_otlpfast.*.so")) + sorted(installed.glob("_otlpfast.*.pyd"))
    spec = importlib.util.spec_from_file_location("passhat.collector.ingest._otlpfast", found[0]) if found else None
    if spec is None or spec.loader is None:
        print(f"the compiled decoder is not installed in {installed}")
        return 1
    fast = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fast)
    if fast.decode(b"", 1) != [] or ROOT in pathlib.Path(fast.__file__ or "").resolve().parents:
        print("passhat.collector.ingest._otlpfast does not work from the wheel")
        return 1
    print(f"passhat {module.__version__} imports from {module.__file__}, with {pathlib.Path(fast.__file__ or '').name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
