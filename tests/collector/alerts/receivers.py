"""Real local receivers for alert tests: an HTTP server on 127.0.0.1 and an SMTP server (aiosmtpd); a store."""

from __future__ import annotations

import json
import pathlib
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from passhat.collector.store import Store, open_store
from tests.service_stubs import StubServer


@dataclass
class Receiver:
    """An HTTP server on 127.0.0.1 that records every POST and can fail the first ``fail_first`` of them."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail_first: int = 0
    fail_status: int = 503
    seen: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            with receiver.lock:
                receiver.seen += 1
                failing = receiver.seen <= receiver.fail_first
                if not failing:
                    receiver.requests.append(
                        {"path": self.path, "headers": dict(self.headers.items()), "json": json.loads(raw)}
                    )
            status = receiver.fail_status if failing else 200
            body = b"receiver failing on purpose" if failing else b"ok"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # keep test output clean
            pass

    return Handler


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = StubServer(("127.0.0.1", 0), _handler(Receiver(url="")))
    receiver = Receiver(url=f"http://127.0.0.1:{server.server_address[1]}/hook")
    server.RequestHandlerClass = _handler(receiver)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield receiver
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Mailbox:
    """A local SMTP server (aiosmtpd) that keeps every message it accepts."""

    host: str
    port: int
    messages: list[Envelope] = field(default_factory=list)
    refuse_recipients: bool = False
    defer_first: int = 0  # answer the first messages' DATA with 451 (try again later), keeping them in `deferred`
    deferred: list[Envelope] = field(default_factory=list)


class _MailHandler:
    def __init__(self, box: Mailbox) -> None:
        self.box = box

    async def handle_RCPT(  # noqa: N802 (aiosmtpd looks the hook up by this name)
        self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]
    ) -> str:
        if self.box.refuse_recipients:
            return "550 no such mailbox"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802
        if len(self.box.deferred) < self.box.defer_first:
            self.box.deferred.append(envelope)
            return "451 try again later"
        self.box.messages.append(envelope)
        return "250 Message accepted"


def _authenticate(server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any) -> AuthResult:
    ok = isinstance(data, LoginPassword) and data.login == b"alerts" and data.password == b"s3cret"
    return AuthResult(success=ok, handled=False)


def _start_mailbox(*, auth: bool) -> tuple[Mailbox, Controller]:
    box = Mailbox(host="127.0.0.1", port=free_port())
    kwargs: dict[str, Any] = {}
    if auth:
        kwargs = {"authenticator": _authenticate, "auth_require_tls": False}
    controller = Controller(_MailHandler(box), hostname=box.host, port=box.port, **kwargs)
    controller.start()
    return box, controller


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    box, controller = _start_mailbox(auth=False)
    yield box
    controller.stop()


@pytest.fixture
def auth_mailbox() -> Iterator[Mailbox]:
    box, controller = _start_mailbox(auth=True)
    yield box
    controller.stop()


@pytest.fixture
def store(tmp_path: pathlib.Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'passhat.db'}")
    opened.ensure_project("shop")
    yield opened
    opened.close()


@dataclass(frozen=True)
class Certificate:
    """A self-signed certificate for 127.0.0.1 (made with the openssl command line)."""

    cert: pathlib.Path
    key: pathlib.Path


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return Certificate(cert=cert, key=key)


@pytest.fixture
def tls_mailbox(certificate: Certificate) -> Iterator[Mailbox]:
    """An SMTP server that requires STARTTLS and a login (over TLS only, as real servers do)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificate.cert, certificate.key)
    box = Mailbox(host="127.0.0.1", port=free_port())
    controller = Controller(
        _MailHandler(box),
        hostname=box.host,
        port=box.port,
        tls_context=context,
        require_starttls=True,
        authenticator=_authenticate,
        auth_required=True,
    )
    controller.start()
    yield box
    controller.stop()
