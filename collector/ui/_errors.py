"""The UI's error pages: a client's mistake on a /ui/ page (a malformed query value, an unknown thing) is an HTML
page in the UI's layout with one sentence saying what is wrong and what to do, never the API's JSON.

`UiRoute` is the route class of the UI's routers: it turns a request's validation error (422) and every
`HTTPException` a page raises into such a page, keeping the status and the headers (`Retry-After`). Sign-in
answers pass through as they are: a redirect to the login form, and a 401 for a tool's bad key or an htmx
request (whose `HX-Redirect` header is what counts). The /api/ routes keep their JSON errors.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from passhat.collector.store import StoreError

#: What to do about a bad value of a query parameter the UI's pages read.
HINTS = {
    "offset": "use a page's offset (0, 50, 100, …) or leave it out",
    "period": "write an ISO week like 2026-W48 or a day like 2026-11-30, or leave it out",
}
TITLES = {400: "Bad request", 403: "Refused", 404: "Not found", 422: "Cannot read this address", 503: "Unavailable"}


def validation_message(errors: Sequence[Any]) -> str:
    """One sentence from FastAPI's validation errors: the first bad value, what it should be, what to do."""
    first: Mapping[str, Any] = next((e for e in errors if isinstance(e, Mapping)), {})
    location = [str(part) for part in first.get("loc", ()) if part not in ("query", "path", "body")]
    name = ".".join(location) or "a value"
    rule = str(first.get("msg", "is not valid")).split(",")[0]
    should = rule.partition(" should ")[2] or rule.lower()
    given = first.get("input")
    shown = "" if given is None else f", not {str(given)[:40]!r}"
    hint = HINTS.get(name, "correct it or leave it out of the address")
    return f"{name} should {should}{shown}: {hint}."


def _error_page(request: Request, status: int, message: str, headers: Mapping[str, str] | None) -> Response:
    # The router's renderer and sign-in, imported once it is loaded (it imports this module).
    from passhat.collector.ui import _router as ui

    try:
        viewer = ui._viewer(request)
    except (HTTPException, StoreError):
        viewer = None  # not signed in: the page still says what is wrong, without the project's menu
    title = TITLES.get(status, "Cannot show this page")
    response = ui.error_renderer().page(request, "error.html", status, viewer=viewer, title=title, message=message)
    for name, value in (headers or {}).items():
        response.headers.setdefault(name, value)
    return response


class UiRoute(APIRoute):
    """A UI route whose errors are HTML pages in the UI's layout (see the module's docstring)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                return _error_page(request, 422, validation_message(exc.errors()), None)
            except HTTPException as exc:
                if exc.status_code < 400 or exc.status_code == 401:
                    raise
                return _error_page(request, exc.status_code, str(exc.detail), exc.headers)

        return handle
