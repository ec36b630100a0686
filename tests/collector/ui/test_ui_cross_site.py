"""Signing in and out are refused from another site's page (login CSRF), over real HTTP and in headless Chromium,
while the collector's own login form keeps working."""

from __future__ import annotations

import contextlib
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.collector.report.test_report_browser import CHROMIUM, CHROMIUM_ARGS
from tests.collector.ui.conftest import UiCollector
from tests.service_stubs import StubServer

FORGED = ["http://evil.example", "null", "http://127.0.0.1:1", "https://evil.example:443"]


@pytest.mark.parametrize("origin", FORGED)
def test_a_login_posted_from_another_origin_is_refused(ui: UiCollector, origin: str) -> None:
    with ui.client() as client:
        response = client.post("/ui/login", data={"key": ui.shop_key}, headers={"origin": origin})
    assert response.status_code == 403
    assert "set-cookie" not in response.headers
    assert response.headers["content-type"].startswith("text/html")  # the UI's error page, not the API's JSON
    assert "another" in response.text and "sign in from this collector&#39;s own /ui/login page" in response.text


def test_a_login_from_another_sites_page_without_origin_is_refused(ui: UiCollector) -> None:
    with ui.client() as client:
        by_referer = client.post("/ui/login", data={"key": ui.shop_key}, headers={"referer": "http://evil.example/x"})
        by_fetch_site = client.post("/ui/login", data={"key": ui.shop_key}, headers={"sec-fetch-site": "cross-site"})
        next_door = client.post("/ui/login", data={"key": ui.shop_key}, headers={"sec-fetch-site": "same-site"})
    for response in (by_referer, by_fetch_site, next_door):
        assert response.status_code == 403
        assert "set-cookie" not in response.headers


def test_a_login_from_this_collectors_own_page_is_accepted(ui: UiCollector) -> None:
    with ui.client() as client:
        response = client.post(
            "/ui/login",
            data={"key": ui.shop_key, "next": "/ui/runs"},
            headers={"origin": ui.url, "referer": f"{ui.url}/ui/login", "sec-fetch-site": "same-origin"},
        )
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/runs"
    assert "passhat_session=" in response.headers["set-cookie"]


def test_behind_a_reverse_proxy_the_forwarded_host_is_this_collectors(ui: UiCollector) -> None:
    proxy = {"x-forwarded-host": "passhat.example.com", "origin": "https://passhat.example.com"}
    with ui.client() as client:
        accepted = client.post("/ui/login", data={"key": ui.shop_key}, headers=proxy)
        refused = client.post(
            "/ui/login", data={"key": ui.shop_key}, headers={**proxy, "origin": "https://evil.example.com"}
        )
    assert accepted.status_code == 303
    assert refused.status_code == 403


def test_a_logout_posted_from_another_origin_is_refused(ui: UiCollector) -> None:
    with ui.client() as client:
        refused = client.post("/ui/logout", headers={"origin": "http://evil.example"})
        accepted = client.post("/ui/logout", headers={"origin": ui.url})
    assert refused.status_code == 403 and "set-cookie" not in refused.headers
    assert accepted.status_code == 303 and "passhat_session" in accepted.headers["set-cookie"]


# --- in a browser: a page of another origin that posts the login form on load ---------------------------------


@contextlib.contextmanager
def _forging_site(collector: str, key: str) -> Iterator[str]:
    page = (
        f'<!doctype html><html><body><form id="f" method="post" action="{collector}/ui/login">'
        f'<input name="key" value="{key}"><input name="next" value="/ui/"></form>'
        "<script>document.getElementById('f').submit()</script></body></html>"
    ).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = StubServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.mark.slow
def test_another_sites_page_cannot_sign_a_browser_in_but_the_login_form_can(ui: UiCollector, chromium: Browser) -> None:
    context = chromium.new_context()
    page = context.new_page()
    try:
        with _forging_site(ui.url, ui.bank_key) as site:
            page.goto(site)
            page.wait_for_url(re.compile(r"/ui/login$"))
            assert "another" in (page.text_content("body") or "")
        assert not [c for c in context.cookies() if c["name"] == "passhat_session"]
        page.goto(f"{ui.url}/ui/")
        expect(page).to_have_url(re.compile(r"/ui/login\?next="))  # not signed in
        # The collector's own form, as a person uses it.
        page.get_by_label("Project API key").fill(ui.shop_key)
        page.keyboard.press("Enter")
        expect(page.get_by_test_id("project")).to_have_text("shop")
        page.get_by_role("button", name="Sign out").click()
        expect(page).to_have_url(re.compile(r"/ui/login$"))
        assert not [c for c in context.cookies() if c["name"] == "passhat_session"]
    finally:
        context.close()
