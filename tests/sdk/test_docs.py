"""docs/sdk.md: every Python snippet runs, and the reference tables name every setting and attribute."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

import passhat
from passhat import semconv as _attributes
from passhat.testing import OtlpReceiver

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "sdk.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_the_doc_has_snippets() -> None:
    assert len(SNIPPETS) >= 3


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_each_snippet_runs(index: int, receiver: OtlpReceiver, tmp_path: pathlib.Path) -> None:
    script = tmp_path / f"snippet_{index}.py"
    script.write_text(SNIPPETS[index])
    env = dict(os.environ, PASSHAT_ENDPOINT=receiver.url)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "cannot export" not in done.stderr


def test_the_settings_table_lists_every_environment_variable() -> None:
    text = DOC.read_text()
    for setting in passhat.CONFIG_SETTINGS:
        assert f"| `{setting.name}` | `{setting.env}`" in text, setting.name


def test_the_attribute_reference_names_every_attribute_and_event() -> None:
    text = DOC.read_text()
    names = [
        value for key, value in vars(_attributes).items() if key.isupper() and isinstance(value, str) and "." in value
    ]
    missing = [name for name in names if f"`{name}`" not in text]
    assert missing == []
