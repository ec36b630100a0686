"""The web UI over real HTTP: signing in, what each page shows, and that a key sees its own project only."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tests.collector.ui.conftest import UiCollector
from tests.collector.ui.ui_data import PERIODS, ticket_id

PAGES = [
    "/ui/",
    "/ui/tickets",
    "/ui/runs",
    "/ui/alerts",
    "/ui/task-types/cancel",
    "/ui/tickets/SHOP-refund-0",
    "/ui/runs/run-shop-2026-W47",
    "/ui/runs/run-shop-2026-W47/tickets/SHOP-cancel-0",
]


def _sign_in(ui: UiCollector, key: str) -> str:
    with ui.client() as client:
        response = client.post("/ui/login", data={"key": key, "next": "/ui/tickets"})
    assert response.status_code == 303
    assert response.headers["location"] == "/ui/tickets"
    return response.headers["set-cookie"]


def test_a_page_without_credentials_redirects_to_the_login_form(ui: UiCollector) -> None:
    with ui.client() as client:
        response = client.get("/ui/tickets?source=sandbox")
        assert response.status_code == 303
        assert response.headers["location"] == "/ui/login?next=%2Fui%2Ftickets%3Fsource%3Dsandbox"
        form = client.get(response.headers["location"])
    assert form.status_code == 200
    assert '<label for="key">Project API key</label>' in form.text


def test_login_sets_an_httponly_strict_session_cookie_that_is_not_the_key(ui: UiCollector) -> None:
    cookie = _sign_in(ui, ui.shop_key)
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in attributes
    assert "samesite=strict" in attributes
    assert "path=/ui" in attributes
    assert ui.shop_key not in cookie


def test_the_session_cookie_opens_pages_of_its_project(ui: UiCollector) -> None:
    cookie = _sign_in(ui, ui.shop_key)
    value = cookie.split(";", 1)[0].split("=", 1)[1]
    with ui.client() as client:
        client.cookies.set("passhat_session", value)
        page = client.get("/ui/")
    assert page.status_code == 200
    assert '<strong data-testid="project">shop</strong>' in page.text


def test_a_wrong_key_is_refused_with_a_message(ui: UiCollector) -> None:
    with ui.client() as client:
        response = client.post("/ui/login", data={"key": "phk_00000000_nope"})
    assert response.status_code == 401
    assert "That key is not valid" in response.text
    assert "set-cookie" not in response.headers


def test_a_forged_cookie_is_not_a_session(ui: UiCollector) -> None:
    cookie = _sign_in(ui, ui.shop_key).split(";", 1)[0].split("=", 1)[1]
    prefix, expires, signature = cookie.split(".")
    forged = f"{prefix}.{int(expires) + 3600}.{signature}"
    with ui.client() as client:
        client.cookies.set("passhat_session", forged)
        assert client.get("/ui/").status_code == 303


def test_a_revoked_key_ends_its_sessions(ui: UiCollector) -> None:
    cookie = _sign_in(ui, ui.shop_key).split(";", 1)[0].split("=", 1)[1]
    prefix = ui.shop_key[: len("phk_") + 8]
    assert ui.store.revoke_api_key(prefix)
    import time

    time.sleep(5.1)  # the UI trusts a key lookup for 5 s
    with ui.client() as client:
        client.cookies.set("passhat_session", cookie)
        assert client.get("/ui/").status_code == 303


def test_a_bearer_key_opens_pages_and_a_bad_one_gets_401(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        assert client.get("/ui/").status_code == 200
    with ui.client("phk_00000000_nope") as client:
        response = client.get("/ui/")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


def test_logout_clears_the_cookie(ui: UiCollector) -> None:
    with ui.client() as client:
        response = client.post("/ui/logout")
    assert response.status_code == 303
    assert 'passhat_session=""' in response.headers["set-cookie"] or "Max-Age=0" in response.headers["set-cookie"]


def test_the_login_never_redirects_to_another_site(ui: UiCollector) -> None:
    with ui.client() as client:
        response = client.post("/ui/login", data={"key": ui.shop_key, "next": "//evil.example/ui/"})
    assert response.headers["location"] == "/ui/"


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders_with_strict_security_headers(ui: UiCollector, path: str) -> None:
    with ui.client(ui.shop_key) as client:
        response = client.get(path)
    assert response.status_code == 200, response.text[:500]
    assert response.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-store"
    assert not re.search(r"https?://(?!127\.0\.0\.1)", response.text.replace("http://www.w3.org/2000/svg", ""))


@pytest.mark.parametrize("path", PAGES[:5])
def test_no_list_of_one_project_shows_the_others_data(ui: UiCollector, path: str) -> None:
    with ui.client(ui.shop_key) as client:
        response = client.get(path)
    assert response.status_code == 200
    assert "BANK-" not in response.text and "run-bank" not in response.text and "bank:" not in response.text


@pytest.mark.parametrize("path", PAGES[5:])
def test_another_projects_ticket_or_run_is_not_found(ui: UiCollector, path: str) -> None:
    bank_path = path.replace("shop", "bank").replace("SHOP", "BANK")
    with ui.client(ui.shop_key) as client:
        response = client.get(bank_path)
    assert response.status_code == 404
    assert "bank:" not in response.text and "wrong_entity" not in response.text


def test_a_fragment_is_scoped_like_its_page(ui: UiCollector) -> None:
    with ui.client(ui.bank_key) as client:
        fragment = client.get("/ui/tickets?ticket=SHOP", headers={"hx-request": "true"})
        own = client.get("/ui/tickets?ticket=BANK-refund", headers={"hx-request": "true"})
    assert "No ticket matches" in fragment.text
    assert "<html" not in own.text  # a fragment, not a page
    assert ticket_id("bank", "refund", 0) in own.text


def test_the_overview_lists_the_least_reliable_task_type_first_with_its_figures(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/").text
    order = re.findall(r'<a href="/ui/task-types/(\w+)">', page)
    assert order == ["cancel", "refund", "exchange"]
    assert PERIODS[1] in page
    assert "1 open alert" in page
    assert 'aria-label="pass^k of cancel over the last periods"' in page


def test_the_overviews_traffic_column_shows_tickets_a_day_as_its_header_says(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/").text
    assert "Traffic: production tickets a day, the mean of the last 14 days" in page
    # 3 production tickets of each task type, about 6 hours ago: 3 / 14 a day, not the 14 days' total of 3.
    assert re.findall(r'data-testid="traffic-per-day">([^<]*)<', page) == ["0.2 a day"] * 3


def test_the_task_type_page_filters_its_sampled_tickets_by_outcome_and_signature(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        every = client.get("/ui/task-types/cancel").text
        failed = client.get("/ui/task-types/cancel?outcome=all_failed", headers={"hx-request": "true"}).text
        passing = client.get(f"/ui/task-types/cancel?period={PERIODS[0]}&outcome=all_passed").text
        by_signature = client.get("/ui/task-types/exchange?signature=wrong_entity").text
    assert all(ticket_id("shop", "cancel", n) in every for n in range(3))
    assert "wrong_entity" in every
    assert ticket_id("shop", "cancel", 1) in failed and ticket_id("shop", "cancel", 0) not in failed
    assert ticket_id("shop", "cancel", 0) in passing and ticket_id("shop", "cancel", 2) not in passing
    assert "No sampled ticket matches" in by_signature


def test_tickets_are_searched_by_id_prefix_and_filtered(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        by_prefix = client.get("/ui/tickets?ticket=SHOP-cancel").text
        by_type = client.get("/ui/tickets?task_type=exchange&source=production").text
        sandbox = client.get("/ui/tickets?source=sandbox").text
        bad_date = client.get("/ui/tickets?since=yesterday")
    assert by_prefix.count("SHOP-cancel-") >= 3 and "SHOP-refund-" not in by_prefix
    assert "SHOP-exchange-0" in by_type and "SHOP-cancel-0" not in by_type
    assert "No ticket matches" in sandbox
    assert bad_date.status_code == 422


def test_the_ticket_page_shows_the_trace_conversation_state_and_trials(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/tickets/SHOP-refund-0").text
    assert page.count('class="span ') == 5
    assert "execute_tool find_customer" in page and "error: not_found" in page
    assert "chat claude-sonnet" in page and "claude-sonnet" in page
    assert "shop: my order" in page and "Your refund is on its way." in page
    assert "<del>delivered</del>" in page and "<ins>refunded</ins>" in page
    assert "run-shop-2026-W47" in page and "the 4 attempts side by side" in page


def test_the_attempts_page_puts_the_k_attempts_side_by_side(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/runs/run-shop-2026-W47/tickets/SHOP-cancel-2").text
    verdicts = re.findall(r'data-testid="verdict">(pass|fail)<', page)
    assert verdicts == ["pass", "pass", "fail", "fail"]
    assert "wrong_entity" in page and "expected &#39;refunded&#39;" in page
    assert "I want a refund" in page and "get_order" in page
    # Each card's duration: these trials took 1.5 to 4.5 s.
    assert re.findall(r'class="meta">agent_stop · ([^<]+?) ·', page) == ["1.5 s", "2.5 s", "3.5 s", "4.5 s"]


def test_an_attempt_under_a_second_shows_its_milliseconds(ui: UiCollector) -> None:
    """An offline trial takes about 12 ms: its card read "0.0 s"."""
    import dataclasses

    from passhat.collector.store import ReplayRun
    from tests.collector.ui.ui_data import trial

    when = dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
    ui.store.create_replay_run("shop", ReplayRun("run-quick", when, k=2, params={"period": PERIODS[1]}))
    quick = [trial("run-quick", "refund", "SHOP-refund-0", a, True, when) for a in range(2)]
    ui.store.add_trials(
        "shop", [dataclasses.replace(t, duration_s=s) for t, s in zip(quick, (0.0123, 0.00042), strict=True)]
    )
    ui.store.finish_replay_run("shop", "run-quick", at=when)
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/runs/run-quick/tickets/SHOP-refund-0").text
    assert re.findall(r'class="meta">agent_stop · ([^<]+?) ·', page) == ["12 ms", "0.4 ms"]


def test_the_run_page_says_official_or_exploratory_and_its_progress(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        official = client.get("/ui/runs/run-shop-2026-W46").text
        exploratory = client.get("/ui/runs/run-shop-2026-W46-again").text
        runs = client.get("/ui/runs").text
    assert "official: the run that gives 2026-W46 its figures" in official
    assert "36 of 36 trials" in official
    # Finished after the official run, but a one-off: the UI follows the official-run rule, not "newest finished".
    assert "exploratory (1 ticket instead of 3 per task type)" in exploratory and "4 of 4 trials" in exploratory
    assert "passhat runs promote run-shop-2026-W46-again" in exploratory
    assert runs.count(">official<") == 2
    assert 'data-role="exploratory"' in runs


def test_a_promoted_run_becomes_the_official_one_in_every_page(ui: UiCollector) -> None:
    from passhat.collector.store import promote_run

    with ui.client(ui.shop_key) as client:
        assert "/ui/runs/run-shop-2026-W46-again" not in client.get("/ui/task-types/refund").text
    promote_run(ui.store, "shop", "run-shop-2026-W46-again")
    with ui.client(ui.shop_key) as client:
        promoted = client.get("/ui/runs/run-shop-2026-W46-again").text
        former = client.get("/ui/runs/run-shop-2026-W46").text
        runs = client.get("/ui/runs").text
        task_page = client.get("/ui/task-types/refund").text
    assert "official: the run that gives 2026-W46 its figures" in promoted
    assert "superseded: was official for 2026-W46" in former
    assert 'data-role="superseded"' in runs and runs.count(">official<") == 2
    # The task type's weeks now take 2026-W46 from the promoted run, not from the newest-finished rule.
    assert "/ui/runs/run-shop-2026-W46-again" in task_page


def test_the_alert_history_shows_the_figures_an_alert_was_based_on(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/alerts").text
    assert "cancel pass^4 dropped (shop)" in page
    assert "p_value" in page and "0.004" in page
    assert "demo-webhook ok" in page


def test_the_alert_history_shows_the_reports_sent_and_how_each_delivery_went(ui: UiCollector) -> None:
    from passhat.collector.alerts import AlertLog, DeliveryAttempt

    failed = DeliveryAttempt(
        "report:2026-W47:x", "team-mail", "email", 1, False, "SMTP 451: try later", True, 3.0, dt.datetime.now(dt.UTC)
    )
    AlertLog(ui.store, "shop").record_report_delivery(
        "report:2026-W47:x", "2026-W47", [failed], run_id="run-shop-2026-W47", trigger="run", resend=False
    )
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/alerts").text
    assert "report of 2026-W47 (run): team-mail: SMTP 451: try later" in page
    assert "rule <code>passhat.report</code> · report sent · period 2026-W47" in page
    assert "cancel pass^4 dropped (shop)" in page  # the alert notices are still there


def test_unknown_things_are_404_pages(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        for path in ("/ui/tickets/NOPE", "/ui/runs/run-nope", "/ui/runs/run-shop-2026-W47/tickets/NOPE"):
            response = client.get(path)
            assert response.status_code == 404
            assert "in project shop" in response.text


def test_assets_are_served_from_the_package(ui: UiCollector) -> None:
    with ui.client() as client:
        htmx = client.get("/ui/static/htmx.min.js")
        css = client.get("/ui/static/ui.css")
        missing = client.get("/ui/static/../_router.py")
    assert htmx.status_code == 200 and "htmx" in htmx.text[:2000]
    assert css.headers["content-type"].startswith("text/css")
    assert missing.status_code == 404


def test_the_back_button_gets_the_whole_page_not_a_fragment(ui: UiCollector) -> None:
    with ui.client(ui.shop_key) as client:
        restore = client.get(
            "/ui/tickets?ticket=SHOP", headers={"hx-request": "true", "hx-history-restore-request": "true"}
        )
    assert "<html" in restore.text
    assert "HX-Request" in restore.headers["vary"]


def test_a_trials_own_page_says_why_its_messages_have_no_text_and_lists_no_replays(ui: UiCollector) -> None:
    """A replay traces each trial (a sandbox ticket) without message text: its page says so instead of asking the
    agent's team to turn on content capture, and does not offer replays of a replay."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    import passhat
    from passhat.collector.ingest import StoreSpanExporter

    runtime = passhat.configure(
        make_global=False, send=False, source="sandbox", capture_content=False,
        span_processors=[SimpleSpanProcessor(StoreSpanExporter(ui.store, "shop"))],
    )  # fmt: skip
    trial_ticket = runtime.ticket(
        "SHOP-trial#0", task_type="refund", source="sandbox", replay_run_id="run-shop-2026-W47", trial_attempt=0
    )
    with trial_ticket as ticket:
        ticket.customer_says("my order never came")
        ticket.agent_says("I refunded it.")
    runtime.shutdown()
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/tickets/SHOP-trial%230").text
        production = client.get("/ui/tickets/SHOP-refund-0").text
    assert "a replay traces its trials without message text" in page and "capture_content=True" not in page
    assert 'id="trials-h"' not in page and "Not replayed yet" not in page
    assert 'id="trials-h"' in production


def test_the_ticket_pages_replays_link_each_run_to_its_attempts_side_by_side(ui: UiCollector) -> None:
    """The Replays field named each run as plain text, which broke at its hyphen in the field's narrow cell: each
    run id is now a link, kept whole, to that run's attempts of this ticket."""
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/tickets/SHOP-refund-0").text
        tally = re.search(r'data-testid="replay-tally">(.*?)</dd>', page)
        assert tally is not None
        links = re.findall(r'<a class="nowrap" href="([^"]+)"[^>]*><small>([^<]+)</small></a>', tally.group(1))
        assert links and all(href == f"/ui/runs/{run}/tickets/SHOP-refund-0" for href, run in links)
        assert "run-shop-2026-W47" in {run for _, run in links}
        for href, _ in links:
            attempts = client.get(href)
            assert attempts.status_code == 200 and re.findall(r'data-testid="verdict">(pass|fail)<', attempts.text)


def test_an_empty_project_is_told_a_replay_command_the_cli_takes(ui: UiCollector) -> None:
    """The empty overview, runs and comparison pages said `passhat replay --period last-week`, which the CLI
    refuses ("cannot read the period 'last-week'"): they name the last whole ISO week."""
    from typer.testing import CliRunner

    from passhat.collector.cli import app
    from passhat.collector.store import week_of
    from tests.collector.server import new_key

    key = new_key(ui.store, "empty")
    last_week = week_of(dt.datetime.now(dt.UTC) - dt.timedelta(days=7)).name
    with ui.client(key) as client:
        for path in ("/ui/", "/ui/runs", "/ui/runs/compare"):
            commands = re.findall(r"<code>(passhat replay --period [^<]*)</code>", client.get(path).text)
            assert commands and all(c.startswith(f"passhat replay --period {last_week}") for c in commands), path
    # The CLI reads that period (it ran with no tickets: it says so, not that it cannot read the period).
    out = CliRunner().invoke(app, ["replay", "--period", last_week, "--store", "sqlite://", "--project", "empty"])
    assert f"no production tickets of {last_week}" in out.output and "cannot read the period" not in out.output


def test_a_runs_page_names_its_sampled_tickets_that_were_not_measured(ui: UiCollector) -> None:
    """A finished run of 3 sampled tickets, one not replayable: its page read "Progress 4 of 6 trials" for ever and
    never said why the other two trials did not run."""
    from passhat.collector.store import NotReplayable, ReplayRun
    from tests.collector.ui.ui_data import trial

    when = dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
    lost = NotReplayable("SHOP-refund-2", "refund", "no intent was recorded, and none could be inferred", "pass intent")
    params = {"period": PERIODS[1], "tickets": ["SHOP-refund-0", "SHOP-refund-1", "SHOP-refund-2"],
              "not_replayable": [lost.to_dict()]}  # fmt: skip
    ui.store.create_replay_run("shop", ReplayRun("run-partial", when, k=2, params=params))
    ui.store.add_trials(
        "shop", [trial("run-partial", "refund", f"SHOP-refund-{n}", a, True, when) for n in range(2) for a in range(2)]
    )
    ui.store.finish_replay_run("shop", "run-partial", at=when, summary={"not_replayable_tickets": [lost.to_dict()]})
    with ui.client(ui.shop_key) as client:
        page = client.get("/ui/runs/run-partial").text
    assert re.search(r"</progress> 4 of 4 trials", page), re.findall(r"</progress>[^<]*", page)
    assert re.search(
        r'data-testid="run-unreplayable"><a href="#not-replayable">1 of 3 sampled tickets</a> \(33%\)', page
    )
    table = page.split('data-testid="run-not-replayable"', 1)[1].split("</table>", 1)[0]
    assert "SHOP-refund-2" in table and "none could be inferred" in table and "pass intent" in table


def test_signing_in_with_no_key_says_to_enter_one(ui: UiCollector) -> None:
    """An empty key (a client that skips the form's `required`) was told "That key is not valid: it is unknown or
    was revoked"."""
    with ui.client() as client:
        empty = client.post("/ui/login", data={"key": "  ", "next": "/ui/"})
        wrong = client.post("/ui/login", data={"key": "phk_00000000_wrong", "next": "/ui/"})
    assert empty.status_code == 422 and "Enter the project's API key: it starts with phk_." in empty.text
    assert "unknown or was revoked" not in empty.text and "set-cookie" not in empty.headers
    assert wrong.status_code == 401 and "unknown or was revoked" in wrong.text
