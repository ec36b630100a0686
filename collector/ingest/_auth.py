"""Authentication: a request's API key (Bearer, or X-API-Key) names its project."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPBearer

from passhat.collector.ingest._state import CurrentState

bearer = HTTPBearer(auto_error=False, description="A project API key: `passhat keys create --project NAME`.")
"""Documents the key in the OpenAPI schema; `project_of` reads the headers itself (it also takes X-API-Key)."""

NO_KEY = "a valid API key is required: send 'Authorization: Bearer <key>'"


def _bearer_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return request.headers.get("x-api-key") or None


async def project_of(request: Request, state: CurrentState) -> str:
    """The project of the request's API key, or a 401. Async: a cache hit must not cost a thread-pool hop."""
    key = _bearer_key(request)
    project = state.keys.project_for(key) if key else None
    if project is None:
        raise HTTPException(401, NO_KEY, headers={"WWW-Authenticate": "Bearer"})
    return project


Project = Annotated[str, Depends(project_of)]
