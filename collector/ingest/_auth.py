"""Authentication: a request's API key (Bearer, or X-API-Key) names its project."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPBearer

from passhat.collector.ingest._state import CurrentState

bearer = HTTPBearer(auto_error=False, description="A project API key: `passhat keys create --project NAME`.")
"""Documents the key in the OpenAPI schema; `project_of` reads the headers itself (it also takes X-API-Key)."""

NO_KEY = "a valid API key is required: send 'Authorization: Bearer <key>'"


def bearer_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return request.headers.get("x-api-key") or None


async def project_of(request: Request, state: CurrentState) -> str:
    """The project of the request's API key, or a 401 (a 429 for an address refused too often). Async: a cache
    hit must not cost a thread-pool hop."""
    key = bearer_key(request)
    if key is None:
        raise HTTPException(401, NO_KEY, headers={"WWW-Authenticate": "Bearer"})
    address = request.client.host if request.client is not None else ""
    wait_s = state.auth_failures.wait_s(address)
    project = state.keys.project_for(key, look_up=not wait_s)
    if project is not None:
        return project
    if wait_s:
        raise HTTPException(
            429,
            f"too many refused API keys from {address}: retry in {wait_s:.0f} s with a valid key",
            headers={"Retry-After": str(max(1, round(wait_s)))},
        )
    state.auth_failures.refused(address)
    raise HTTPException(401, NO_KEY, headers={"WWW-Authenticate": "Bearer"})


Project = Annotated[str, Depends(project_of)]
