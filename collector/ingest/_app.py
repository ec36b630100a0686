"""The collector's HTTP app, built from settings: OTLP/HTTP trace ingest, the JSON query API and ops routes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI

from passhat import __version__
from passhat.collector.ingest import _routes_ingest, _routes_ops, _routes_query
from passhat.collector.ingest._http import HEADER_TIMEOUT_STATE
from passhat.collector.ingest._metrics import CollectorMetrics
from passhat.collector.ingest._otlp import (
    PROTOBUF,
    DecodedTraces,
    OtlpError,
    decode_protobuf,
    decode_traces,
    decompress,
    parse_request,
)
from passhat.collector.ingest._settings import CollectorSettings
from passhat.collector.ingest._split import split_request
from passhat.collector.ingest._state import AppState
from passhat.collector.ingest._writer import Decoder, GroupCommitWriter, Preparer
from passhat.collector.store import Store, open_store

SPLIT_BYTES = 2 * 1024 * 1024
"""Bodies above this size (decompressed) are decoded and committed in parts of `max_commit_spans` spans."""


def _preparer(settings: CollectorSettings) -> Preparer:
    """The ingest thread's first step: the body decompressed (within `max_body_bytes`), a large one in parts,
    so its decoded spans never all sit in memory at once (see _split.py).

    A large JSON body is parsed and validated whole (a malformed one is refused with the same 400 as a small
    one, and nothing of it is stored), then re-encoded as protobuf and split like a protobuf body: the JSON
    document and the protobuf message are freed before any span is decoded, and the parts are decoded by the
    compiled decoder, in turn with other requests."""

    def prepare(raw: bytes, encoding: str | None, media: str) -> tuple[list[bytes], str]:
        body = decompress(raw, encoding, limit=settings.max_body_bytes)
        if not body:
            raise OtlpError(400, "the body is empty: send an ExportTraceServiceRequest")
        if len(body) <= SPLIT_BYTES:
            return [body], media
        if media != PROTOBUF:
            body, media = parse_request(body, media).SerializeToString(), PROTOBUF
        parts = split_request(body, settings.max_commit_spans)
        return (parts if parts is not None else [body]), media

    return prepare


def _decoder(settings: CollectorSettings) -> Decoder:
    """The ingest thread's second step: a prepared (decompressed) body's spans, protobuf or JSON."""
    rules = settings.ticket_rules()

    def decode(body: bytes, encoding: str | None, media: str) -> DecodedTraces:
        if media == PROTOBUF:
            return decode_protobuf(body, max_attribute_bytes=settings.max_attribute_bytes, rules=rules)
        return decode_traces(parse_request(body, media), max_attribute_bytes=settings.max_attribute_bytes, rules=rules)

    return decode


def create_app(
    settings: CollectorSettings | None = None, *, store: Store | None = None, routers: Sequence[APIRouter] = ()
) -> FastAPI:
    """Build the collector app. Without `store`, the app opens (and closes) the one `settings` names.

    `routers` are mounted as they are (the web UI's, from a higher layer: ingest does not import it); they find
    the store at `request.app.state.passhat_store`."""
    settings = settings or CollectorSettings()
    # Made once per app, not per lifespan: the counters of an app run twice keep counting.
    metrics = CollectorMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, float]]:
        active = store if store is not None else open_store(settings.resolved_store_url())
        writer = GroupCommitWriter(
            active,
            metrics,
            _decoder(settings),
            prepare=_preparer(settings),
            max_queued_bytes=settings.max_queued_bytes,
            max_commit_spans=settings.max_commit_spans,
        )
        app.state.passhat = AppState(settings, active, writer, metrics)
        app.state.passhat_store = active  # for `routers`, which cannot know AppState
        try:
            # Lifespan state reaches uvicorn's connections: TimedHttpProtocol reads its header timeout there.
            yield {HEADER_TIMEOUT_STATE: settings.header_timeout_s}
        finally:
            writer.close()
            if store is None:
                active.close()

    app = FastAPI(
        title="passhat collector",
        version=__version__,
        description="OTLP/HTTP trace ingest for LLM agents, and the tickets, tool calls, state writes and "
        "daily traffic derived from them.",
        lifespan=lifespan,
    )
    app.include_router(_routes_ingest.router)
    app.include_router(_routes_query.router)
    app.include_router(_routes_ops.router)
    for router in routers:
        app.include_router(router)
    return app
