"""A test-only ClickHouse HTTP interface over the embedded engine (chdb).

It answers the subset of the ClickHouse HTTP protocol that clickhouse-connect's HTTP client speaks, by running
each request in chdb: the query from the body and/or the `query` parameter, `database`, `param_*` bind
parameters, other parameters as settings, `Content-Encoding` (lz4, zstd, gzip, deflate) on the body, chunked
request bodies, `INSERT ... FORMAT X` followed by data, and errors as a 500 with
`X-ClickHouse-Exception-Code`.
So `ClickHouseStore("http://127.0.0.1:PORT")` exercises the real HTTP path of clickhouse-connect (urllib3, the
request planner, response parsing) against a real ClickHouse engine without a server install.

Run it in its own process (chdb hosts one engine path per process):

    python tests/collector/clickhouse_http_front.py DATA_DIR [--port 0]

It prints `listening on PORT` once ready and serves until it is killed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import tempfile
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import chdb

# Parameters the HTTP transport consumes itself; everything else not `param_*` is a query setting.
_TRANSPORT_PARAMS = frozenset(
    {
        "query",
        "database",
        "default_format",
        "query_id",
        "session_id",
        "session_timeout",
        "session_check",
        "compress",
        "decompress",
        "enable_http_compression",
        "client_protocol_version",
        "wait_end_of_query",
        "send_progress_in_http_headers",
        "http_headers_progress_interval_ms",
        "user",
        "password",
        "quota_key",
        "buffer_size",
        "role",
    }
)
_INSERT_WITH_DATA = re.compile(rb"\s*INSERT\s+INTO\s[^\n]*?\bFORMAT\s+(\w+)[ \t]*\r?\n", re.IGNORECASE)
_TRAILING_FORMAT = re.compile(r"\bFORMAT\s+(\w+)\s*;?\s*$", re.IGNORECASE)
_RESULT_STATEMENT = re.compile(r"\s*(SELECT|WITH|SHOW|DESCRIBE|DESC|EXISTS|EXPLAIN)\b", re.IGNORECASE)
_ERROR_CODE = re.compile(r"Code: (\d+)")
_SETTING_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _decode_body(data: bytes, encoding: str | None) -> bytes:
    if not encoding or encoding == "identity":
        return data
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "deflate":
        return zlib.decompress(data)
    if encoding == "lz4":
        import lz4.frame

        # clickhouse-connect sends one frame per block: a large insert is several frames back to back.
        out = bytearray()
        while data:
            decompressor = lz4.frame.LZ4FrameDecompressor()
            out += decompressor.decompress(data)
            data = decompressor.unused_data
        return bytes(out)
    if encoding == "zstd":
        from backports import zstd

        return bytes(zstd.decompress(data))
    raise ValueError(f"unsupported Content-Encoding {encoding!r}")


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


class _Front(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _FrontServer

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        if urlsplit(self.path).path in ("/ping", "/"):
            self._reply(200, b"Ok.\n", {})
            return
        self._handle(b"")

    def do_POST(self) -> None:
        try:
            body = _decode_body(self._read_body(), self.headers.get("Content-Encoding"))
        except Exception as exc:
            self._reply(
                400,
                f"Code: 1000. bad request body: {exc}\n".encode(),
                {"X-ClickHouse-Exception-Code": "1000"},
            )
            return
        self._handle(body)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self, body: bytes) -> None:
        params = dict(parse_qsl(urlsplit(self.path).query, keep_blank_values=True))
        query = params.get("query", "")
        binds = {name[6:]: value for name, value in params.items() if name.startswith("param_")}
        settings = {
            name: value
            for name, value in params.items()
            if name not in _TRANSPORT_PARAMS and not name.startswith("param_")
        }
        text = (query.encode() + b"\n" + body) if query and body else (query.encode() or body)
        try:
            status, payload, headers = self._execute(text, params, binds, settings)
        except Exception as exc:  # the engine's error goes back to the client, like a server's
            message = str(exc)
            match = _ERROR_CODE.search(message)
            code = match.group(1) if match else "1000"
            self._reply(500, (message + "\n").encode(), {"X-ClickHouse-Exception-Code": code})
            return
        self._reply(status, payload, headers)

    def _execute(
        self, text: bytes, params: dict[str, str], binds: dict[str, str], settings: dict[str, str]
    ) -> tuple[int, bytes, dict[str, str]]:
        conn = chdb.connect(self.server.data_dir)
        try:
            if params.get("database"):
                conn.query(f"USE `{params['database']}`", "TabSeparated")
            for name, value in settings.items():
                if not _SETTING_NAME.match(name):
                    raise ValueError(f"Code: 115. Unknown setting {name!r}")
                conn.query(f"SET {name} = {_quote(value)}", "TabSeparated")
            insert = _INSERT_WITH_DATA.match(text)
            if insert is not None and len(text) > insert.end():
                return self._insert(conn, text, insert)
            sql = text.decode("utf-8")
            fmt_match = _TRAILING_FORMAT.search(sql)
            fmt = fmt_match.group(1) if fmt_match else params.get("default_format", "TabSeparated")
            result = conn.query(sql, fmt, params=binds)
            payload = result.bytes() or b""
            headers = {"X-ClickHouse-Summary": json.dumps({"read_rows": str(result.rows_read())})}
            if fmt_match or _RESULT_STATEMENT.match(sql):
                headers["X-ClickHouse-Format"] = fmt
            return 200, payload, headers
        finally:
            conn.close()

    def _insert(self, conn: Any, text: bytes, match: re.Match[bytes]) -> tuple[int, bytes, dict[str, str]]:
        statement = text[: match.start(1)].decode("utf-8").rstrip()
        statement = re.sub(r"\bFORMAT\s*$", "", statement, flags=re.IGNORECASE).rstrip()
        fmt = match.group(1).decode()
        with tempfile.NamedTemporaryFile(dir=self.server.spool_dir, suffix=".data", delete=False) as spool:
            spool.write(text[match.end() :])
        try:
            result = conn.query(f"{statement} FROM INFILE {_quote(spool.name)} FORMAT {fmt}", "TabSeparated")
        finally:
            os.unlink(spool.name)
        summary = {"written_rows": str(result.rows_read()), "written_bytes": str(result.bytes_read())}
        return 200, b"", {"X-ClickHouse-Summary": json.dumps(summary)}

    def _reply(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=UTF-8")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("X-ClickHouse-Timezone", "UTC")
        self.send_header("X-ClickHouse-Server-Display-Name", "passhat-test-front")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


class _FrontServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, data_dir: str) -> None:
        super().__init__(("127.0.0.1", port), _Front)
        self.data_dir = data_dir
        self.spool_dir = tempfile.mkdtemp(prefix="front-spool-")
        self.engine = chdb.connect(data_dir)  # keeps the engine open between requests
        self.lock = threading.Lock()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = _FrontServer(args.port, os.path.realpath(args.data_dir))
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
