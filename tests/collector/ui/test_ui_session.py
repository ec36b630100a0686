"""Session cookies made from project keys, checked against a real SQLite store."""

from __future__ import annotations

import time

from passhat.collector.ingest import create_api_key
from passhat.collector.store import Store
from passhat.collector.ui._session import SESSION_SECONDS, Sessions


def test_a_cookie_names_the_keys_project_until_it_expires(sql_store: Store) -> None:
    key, record = create_api_key(sql_store, "shop")
    sessions = Sessions(sql_store)
    now = time.time()
    cookie = sessions.cookie_for_key(key, now=now)
    assert cookie is not None and cookie.startswith(record.prefix + ".")
    viewer = sessions.viewer_for_cookie(cookie, now=now + 60)
    assert viewer is not None and viewer.project == "shop"
    assert sessions.viewer_for_cookie(cookie, now=now + SESSION_SECONDS + 1) is None


def test_a_cookie_signed_with_another_keys_hash_is_refused(sql_store: Store) -> None:
    _, shop = create_api_key(sql_store, "shop")
    bank_key, _ = create_api_key(sql_store, "bank")
    sessions = Sessions(sql_store)
    bank_cookie = sessions.cookie_for_key(bank_key)
    assert bank_cookie is not None
    _, expires, signature = bank_cookie.split(".")
    assert sessions.viewer_for_cookie(f"{shop.prefix}.{expires}.{signature}") is None


def test_unknown_keys_and_garbage_cookies_make_no_viewer(sql_store: Store) -> None:
    sessions = Sessions(sql_store)
    assert sessions.cookie_for_key("phk_00000000_unknown") is None
    assert sessions.viewer_for_key("phk_00000000_unknown") is None
    for junk in ("", "abc", "phk_1.notanumber.sig", "phk_1.99999999999.sig", "..."):
        assert sessions.viewer_for_cookie(junk) is None
