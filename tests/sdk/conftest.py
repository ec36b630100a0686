"""Fixtures of the SDK tests: a real OTLP/HTTP receiver on 127.0.0.1 and a passhat exporting to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import passhat
from passhat._runtime import set_current
from passhat.testing import OtlpReceiver


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as running:
        yield running


@pytest.fixture
def live(receiver: OtlpReceiver) -> Iterator[passhat.Passhat]:
    """A global passhat exporting to the local receiver, with content capture on."""
    instance = passhat.configure(
        service_name="support-agent",
        endpoint=receiver.url,
        api_key="ph-test-key",
        environment="test",
        capture_content=True,
        export_interval=0.05,
    )
    yield instance
    passhat.shutdown()
    set_current(None)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for setting in passhat.CONFIG_SETTINGS:
        monkeypatch.delenv(setting.env, raising=False)
    # The default key file lives in the home folder: tests use one of their own instead.
    monkeypatch.setenv("PASSHAT_PSEUDONYM_KEY_FILE", str(tmp_path_factory.getbasetemp() / "pseudonym.key"))
