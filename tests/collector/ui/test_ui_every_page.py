"""Every page of the web UI in headless Chromium over a real `passhat serve`, at 1280 px and at 390 px: no
horizontal overflow, no console error, no serious or critical accessibility violation (axe-core), and every
control reached with the Tab key with its focus visible.

The pages are the UI's GET routes, read from `ui_router()`: a route added later is checked as soon as it has a
sample URL in `SAMPLES` below, and fails this test (saying so) until it has one. axe-core is a test dependency
only (tests/collector/ui/a11y/package.json, installed by `make pytest`), never shipped. Screenshots of each page go
to `test-artifacts/ui/pages/` (ignored by git).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from passhat.collector.store import AlertEvent, ProductionVerdict, Store, open_store
from passhat.collector.ui import ui_router
from tests.collector.cli.test_sandbox_commands import free_port
from tests.collector.report.test_report_browser import CHROMIUM, CHROMIUM_ARGS
from tests.collector.server import new_key
from tests.collector.store.store_contract import NS, now_ns, ticket_span
from tests.collector.ui.ui_data import seed

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]
ARTIFACTS = ROOT / "test-artifacts" / "ui" / "pages"
AXE = Path(__file__).resolve().parent / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
PASSHAT = Path(sys.executable).with_name("passhat")
RUN = "run-shop-2026-W47"

#: A URL of each page on the seeded store (tests/collector/ui/ui_data.py), by route; `None`: not a page.
SAMPLES: dict[str, str | None] = {
    "/ui/login": "/ui/login",
    "/ui/": "/ui/",
    "/ui/task-types/{name:path}": "/ui/task-types/cancel",
    "/ui/tickets": "/ui/tickets?sort=verdict",
    "/ui/tickets/{ticket_id:path}": "/ui/tickets/SHOP-refund-0",
    "/ui/runs": "/ui/runs",
    "/ui/runs/{run_id}": f"/ui/runs/{RUN}",
    "/ui/runs/{run_id}/tickets/{ticket_id:path}": f"/ui/runs/{RUN}/tickets/SHOP-cancel-2",
    "/ui/alerts": "/ui/alerts",
    "/ui/runs/compare": f"/ui/runs/compare?a={RUN}&b={RUN}",
    "/ui/static/{name}": None,  # the stylesheet and scripts every page loads
}
SIGNED_OUT = {"/ui/login"}
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}


def page_routes() -> list[str]:
    """The UI's GET routes, as FastAPI declares them (those of the routers it includes too)."""
    return sorted(_get_paths(ui_router().routes, ""))


def _get_paths(routes: list[Any], prefix: str) -> list[str]:
    paths: list[str] = []
    for route in routes:
        if isinstance(route, APIRoute):
            if "GET" in route.methods:
                paths.append(prefix + route.path)
        elif hasattr(route, "original_router"):  # an included router (FastAPI keeps it as one entry)
            context = getattr(route, "include_context", None)
            paths += _get_paths(route.original_router.routes, prefix + str(getattr(context, "prefix", "")))
    return paths


def _grade(store: Store) -> None:
    """Two production tickets graded (one wrong), so verdict cells and filters have something to show."""
    found = {t.ticket_id: t for t in store.search_tickets("shop", source="production", limit=100)}
    graded = []
    for ticket_id, passed in (("SHOP-refund-0", False), ("SHOP-cancel-0", True)):
        row = found[ticket_id]
        graded.append(
            ProductionVerdict(
                ticket_id=ticket_id, trace_id=row.trace_id, task_type=row.task_type,
                start_time_ns=row.start_time_ns, passed=passed, graded_at=dt.datetime.now(dt.UTC), domain="retail",
                signature=None if passed else "wrong_entity", evidence=None if passed else "refunded O-2, not O-1",
                verdict={"passed": passed, "check": row.task_type, "children": [], "diagnostics": []},
                graded_by=RUN,
            )
        )  # fmt: skip
    store.put_production_verdicts("shop", graded)


@dataclasses.dataclass(frozen=True)
class Served:
    url: str
    key: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`passhat serve` on a seeded SQLite store: two official runs, an exploratory one, graded tickets, alerts."""
    folder = tmp_path_factory.mktemp("every-page")
    store_url = f"sqlite:///{folder / 'passhat.db'}"
    with open_store(store_url) as store:
        seed(store, "shop")
        _grade(store)
        start = now_ns() - 3 * 3600 * NS  # enough tickets for the list's pager
        store.write_batch("shop", [ticket_span(f"SHOP-more-{i:02d}", start_ns=start + i * NS) for i in range(55)])
        store.add_alert_event(
            "shop",
            AlertEvent(
                "report-shop-w47", "report", dt.datetime.now(dt.UTC), "report of 2026-W47 (schedule): mail: ok",
                payload={"kind": "report", "period": "2026-W47", "run_id": RUN, "trigger": "schedule"},
                deliveries={"mail": "ok"},
            ),
        )  # fmt: skip
        key = new_key(store, "shop")
    port = free_port()
    log = folder / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(PASSHAT), "serve", "--port", str(port), "--store", store_url],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=folder,
            env={**os.environ, "PASSHAT_DATA_DIR": str(folder)},
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"passhat serve did not start: {log.read_text(errors='replace')}")
            time.sleep(0.1)
        yield Served(url, key)
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: install the test's axe-core (cd {AXE.parents[2]} && npm ci)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def _context(browser: Browser, served: Served, width: str, *, signed_in: bool) -> BrowserContext:
    w, h = WIDTHS[width]
    # bypass_csp: the page's CSP (script-src 'self') would refuse the injected axe-core; the pages' own
    # scripts are still the ones they load.
    context = browser.new_context(viewport={"width": w, "height": h}, is_mobile=width == "phone", bypass_csp=True)
    if signed_in:
        response = context.request.post(
            f"{served.url}/ui/login", form={"key": served.key, "next": "/ui/"}, headers={"origin": served.url}
        )
        assert response.ok, response.status
    return context


def _overflow(page: Page) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


def _axe(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result: dict[str, Any] = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


_MARK_CONTROLS = """() => {
  const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, '
    + '[tabindex]:not([tabindex="-1"])';
  const controls = [...document.querySelectorAll(selector)].filter(
    (e) => !e.disabled && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden');
  controls.forEach((e, i) => e.setAttribute('data-kbd', String(i)));
  return controls.map((e) => e.outerHTML.slice(0, 120));
}"""
_FOCUSED = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const s = getComputedStyle(e);
  const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
  return [e.getAttribute('data-kbd'), ring, `outline ${s.outlineStyle} ${s.outlineWidth}, box-shadow ${s.boxShadow}`];
}"""


def _keyboard(page: Page) -> list[str]:
    """Tab from the top of the page: every visible control must take the focus, each with a visible ring."""
    controls: list[str] = page.evaluate(_MARK_CONTROLS)
    reached: set[str] = set()
    unringed: dict[str, str] = {}
    ringed: set[str] = set()
    for _ in range(3 * len(controls) + 3):  # a date input takes a Tab per field (month, day, year)
        if len(reached) == len(controls):
            break
        page.keyboard.press("Tab")
        focused = page.evaluate(_FOCUSED)
        if focused is None or focused[0] is None:
            continue
        reached.add(focused[0])
        if focused[1]:
            ringed.add(focused[0])
        else:  # a date input takes several stops (its fields, its picker button, which draws its own ring)
            unringed[focused[0]] = focused[2]
    problems = [f"never reached by Tab: {html}" for i, html in enumerate(controls) if str(i) not in reached]
    return problems + [
        f"focus not visible ({style}): {controls[int(i)]}" for i, style in sorted(unringed.items()) if i not in ringed
    ]


def test_every_page_route_has_a_sample_url() -> None:
    missing = [path for path in page_routes() if path not in SAMPLES]
    assert not missing, f"pages without a sample URL in {__file__}'s SAMPLES (add one for each): {missing}"
    gone = [path for path in SAMPLES if path not in page_routes()]
    assert not gone, f"SAMPLES names routes the UI no longer has: {gone}"


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("route", page_routes())
def test_every_page_fits_has_no_errors_passes_axe_and_works_by_keyboard(
    route: str, width: str, served: Served, browser: Browser
) -> None:
    if route not in SAMPLES:
        pytest.fail(f"{route} has no sample URL: add one to SAMPLES in {__file__}")
    sample = SAMPLES[route]
    if sample is None:
        assert route.startswith("/ui/static/"), f"{route} is marked as no page but is not a static asset"
        return
    context = _context(browser, served, width, signed_in=route not in SIGNED_OUT)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type in {"error", "warning"} else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("response", lambda r: errors.append(f"HTTP {r.status} for {r.url}") if r.status >= 400 else None)
        response = page.goto(served.url + sample)
        assert response is not None and response.status == 200, f"{sample}: HTTP {response and response.status}"
        assert "/ui/login" not in page.url or route in SIGNED_OUT, f"{sample} sent a signed-in viewer to login"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        name = route.strip("/").replace("/", "_").replace("{", "").replace("}", "").replace(":path", "") or "ui"
        page.screenshot(path=str(ARTIFACTS / f"{name}-{WIDTHS[width][0]}.png"), full_page=True)
        overflow = _overflow(page)
        violations = _axe(page)
        keyboard = _keyboard(page)
    finally:
        context.close()
    assert overflow <= 0, f"{sample} at {WIDTHS[width][0]} px is {overflow} px wider than the window"
    assert errors == [], f"{sample}: console errors {errors}"
    assert violations == [], f"{sample}: serious accessibility violations:\n" + "\n".join(violations)
    assert keyboard == [], f"{sample}: keyboard access:\n" + "\n".join(keyboard)
