"""Splitting a large protobuf ExportTraceServiceRequest into smaller ones, at the wire level, before decoding.

A 16 MiB request holds ~160,000 spans; decoded at once they took ~55 times the body's size in memory and one
transaction held the database's write lock for seconds. Decoded and committed part by part, memory is bounded
by a part's spans and other requests' commits interleave. Each part repeats its spans' ResourceSpans and
ScopeSpans fields (resource, scope, schema URL, in their order), so every span decodes exactly as it would in
the whole request.
"""

from __future__ import annotations

_LEN = 2
_RESOURCE_SPANS = 1  # ExportTraceServiceRequest.resource_spans
_SCOPE_SPANS = 2  # ResourceSpans.scope_spans
_SPANS = 2  # ScopeSpans.spans
_EMPTY_RESOURCE_SPANS = bytes([_RESOURCE_SPANS << 3 | _LEN, 0])


class _MalformedError(Exception):
    pass


def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _MalformedError
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(data: memoryview) -> list[tuple[int, int, memoryview, memoryview]]:
    """(number, wire type, the whole field, its payload for length-delimited fields) for each field."""
    out = []
    pos = 0
    while pos < len(data):
        start = pos
        tag, pos = _varint(data, pos)
        wire_type = tag & 7
        if wire_type == 0:
            _, pos = _varint(data, pos)
            payload = data[pos:pos]
        elif wire_type == 1:
            pos += 8
            payload = data[pos:pos]
        elif wire_type == 5:
            pos += 4
            payload = data[pos:pos]
        elif wire_type == _LEN:
            size, pos = _varint(data, pos)
            payload = data[pos : pos + size]
            pos += size
        else:
            raise _MalformedError
        if pos > len(data):
            raise _MalformedError
        out.append((tag >> 3, wire_type, data[start:pos], payload))
    return out


def _length_delimited(number: int, parts: list[bytes | memoryview]) -> bytes:
    payload = b"".join(parts)
    size = len(payload)
    header = bytearray([number << 3 | _LEN])
    while size > 0x7F:
        header.append(size & 0x7F | 0x80)
        size >>= 7
    header.append(size)
    return bytes(header) + payload


def split_request(body: bytes, max_spans: int) -> list[bytes] | None:
    """The request as parts of at most `max_spans` spans each, or None when it is not worth splitting (it holds
    fewer) or its wire format is malformed (the whole-body decode then gives the exact 400)."""
    try:
        return _split(memoryview(body), max_spans)
    except _MalformedError:
        return None


def _split(body: memoryview, max_spans: int) -> list[bytes] | None:
    parts: list[bytes] = []
    current: list[bytes] = []  # the part being built: ResourceSpans fields
    count = 0
    r_index = -1
    for number, wire_type, _, resource_spans in _fields(body):
        if number != _RESOURCE_SPANS or wire_type != _LEN:
            continue  # unknown top-level fields: decoding ignores them
        r_index += 1
        rs_fields = _fields(resource_spans)
        rs_head = [whole for n, wt, whole, _ in rs_fields if not (n == _SCOPE_SPANS and wt == _LEN)]
        scopes: list[bytes] = []  # this ResourceSpans' ScopeSpans fields, in the part being built
        for n, wt, _, scope_spans in rs_fields:
            if n != _SCOPE_SPANS or wt != _LEN:
                continue
            ss_fields = _fields(scope_spans)
            ss_head = [whole for sn, swt, whole, _ in ss_fields if not (sn == _SPANS and swt == _LEN)]
            spans: list[memoryview] = []
            for sn, swt, whole, _ in ss_fields:
                if sn != _SPANS or swt != _LEN:
                    continue
                spans.append(whole)
                count += 1
                if count >= max_spans:
                    scopes.append(_length_delimited(_SCOPE_SPANS, [*ss_head, *spans]))
                    _add_resource(current, r_index, rs_head, scopes)
                    parts.append(b"".join(current))
                    current, scopes, spans, count = [], [], [], 0
            if spans:
                scopes.append(_length_delimited(_SCOPE_SPANS, [*ss_head, *spans]))
        if scopes:
            _add_resource(current, r_index, rs_head, scopes)
    if current:
        parts.append(b"".join(current))
    return parts if len(parts) > 1 else None


def _add_resource(part: list[bytes], r_index: int, rs_head: list[memoryview], scopes: list[bytes]) -> None:
    if not part:
        # A part starts with as many empty ResourceSpans as came before its first one: they decode to nothing,
        # and keep the index rejection reasons name ("resourceSpans[3]: ...").
        part.append(_EMPTY_RESOURCE_SPANS * r_index)
    part.append(_length_delimited(_RESOURCE_SPANS, [*rs_head, *scopes]))
