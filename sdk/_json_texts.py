"""JSON held in a span's strings, redacted value by value: in one scan when it has no escape, remembered as a
conversation's lists grow. A part of :class:`passhat._span_redaction.SpanRedaction`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from passhat._redact import Redactor
from passhat._stretches import find_digit_run, replaced, run_classes

_CONTAINERS = (dict, list)
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # ``json.dumps(..., ensure_ascii=False)`` makes one per call
_LISTS = 16  # JSON lists remembered for the conversations that grow from them
# A candidate is a run ``DIGIT_RUN`` finds (see passhat._redact) or an @: a superset of what the built-in patterns
# can match. None of these characters is ever escaped in JSON, so a JSON text holding no such run holds no value
# with one: a string in which neither is found is kept without parsing it or running the patterns (unless the user's
# own patterns or callback may find something in it). Timestamps, ids and counts do not pass it.


def _next_candidate(value: str, classes: bytes, position: int) -> tuple[int, int] | None:
    """Where the next candidate at or after ``position`` starts and ends (``classes``: ``run_classes(value)``)."""
    at = value.find("@", position)
    run = find_digit_run(value, classes, position, at if at != -1 else len(value))
    if run is not None:
        return run
    return (at, at + 1) if at != -1 else None


def _outside_strings(value: str, claimed: list[tuple[int, int, str]], quotes: int) -> list[bool]:
    """For each claimed span of ``value`` (a text without escapes, after ``quotes`` quotes), whether it lies outside
    the JSON strings: after an even number of quotes."""
    outside: list[bool] = []
    position = 0
    for start, _, _ in claimed:
        quotes += value.count('"', position, start)
        outside.append(quotes % 2 == 0)
        position = start
    return outside


class JsonTexts:
    """The JSON side of a span's redaction (``SpanRedaction`` is made of it): how a string that looks like JSON is
    redacted, and the lists remembered for the conversations that grow from them."""

    redactor: Redactor
    _every_string: bool
    # The JSON lists redacted last, with their redacted form: a conversation's input messages in one model call are
    # the previous call's plus the new ones, so only the new ones are scanned (see ``_grown``).
    _lists: list[tuple[str, str, int, str, int]]  # (list, list[:-1], length, redacted, quotes)
    _scanned: dict[str, tuple[str, int]]  # the lists among them redacted by one scan

    # One string redacted and remembered: ``SpanRedaction.text``, which the JSON's own strings go through.
    text: Callable[[str, str | None], str]

    def _text(self, value: str, field: str | None) -> str:
        head = value[:1]
        if head.isspace():
            head = value.lstrip()[:1]
        if head != "{" and head != "[":  # not JSON: the redactor's own scan (with user patterns, every string)
            classes = None if self._every_string else run_classes(value)
            redacted_text = self.redactor.scanned(value, field, classes)
            return value if redacted_text == value else redacted_text
        first = None
        classes = b""
        if not self._every_string:
            classes = run_classes(value)
            if "\\" not in value and not self.redactor.blank:
                return self._unescaped(value, classes)
            first = _next_candidate(value, classes, 0)
            # ``\u`` escapes hide the characters they stand for (json.dumps writes every non-ASCII one so, digits
            # of other scripts too): such a text is decoded and redacted value by value, never judged by its look.
            if "\\u" in value:
                first = None
            elif first is None:
                return value
            if value[0] == "[" and not self.redactor.blank:
                grown = self._grown(value)
                if grown is not None:
                    return grown
        try:
            data = json.loads(value)
        except ValueError:
            data = None
        else:
            if first is not None and not self.redactor.blank and isinstance(data, _CONTAINERS):
                in_place = self._json_strings(value, classes, first)
                if in_place is not None:
                    if isinstance(data, list):
                        self._remember_list(value, in_place, -1)
                    return in_place
            redacted = self._json(data, field)
            if redacted is data:
                return value
            return _ENCODER.encode(redacted)
        redacted_text = self.redactor.scanned(value, field, classes or None)
        return value if redacted_text == value else redacted_text

    def _unescaped(self, value: str, classes: bytes | None) -> str:
        """A text that looks like JSON and has no escape (no ``\\``), redacted with the built-in patterns.

        Then each of its strings is the text between two quotes, and the values the patterns find inside its strings
        are those they find in each string alone (see ``Redactor.claims``): one scan of the whole text finds them,
        without decoding it. A value found outside the strings lies in a number, kept when the text is valid JSON
        (as value by value), else replaced as in any text. A list is remembered for the conversation it grows into.
        """
        if value[0] == "[":
            grown = self._grown(value)
            if grown is not None:
                return grown
        claimed = self.redactor.regional(value, run_classes(value) if classes is None else classes)
        if claimed is None:
            claimed = self.redactor.claims(value)
        if not claimed:
            if value[0] == "[":
                self._remember_list(value, value, value.count('"'))
            return value
        outside = _outside_strings(value, claimed, 0)
        quotes = value.count('"')
        if any(outside):
            quotes = -1
            try:
                json.loads(value)
            except ValueError:
                return replaced(value, claimed)  # not JSON: redacted as text
            claimed = [claim for claim, out in zip(claimed, outside, strict=True) if not out]
        redacted = replaced(value, claimed) if claimed else value
        if value[0] == "[":
            self._remember_list(value, redacted, quotes)
        return redacted

    def _grown(self, value: str) -> str | None:
        """``value`` redacted when it is a JSON list remembered, grown by more items: the remembered part is
        taken as it was redacted and only the new items are (a valid list whose items are valid is valid JSON).

        A list redacted by one scan (``_unescaped``) grows by a part without escapes: the values found in that
        part alone are those found there in the whole (no value the patterns find spans the ``,`` between items),
        each inside a string or not by the quotes before it. When one lies outside the strings, the whole is
        redacted afresh. The new items may be a list remembered whole: a model call's output comes back as the
        last item of the run's messages."""
        length = len(value)
        for _, known, size, redacted, quotes in reversed(self._lists):
            if size < length and value[size - 1] == "," and value.startswith(known):
                rest = value[size:]
                if quotes >= 0 and "\\" not in rest:
                    if quotes % 2:
                        return None
                    whole = self._scanned.get("[" + rest)
                    if whole is not None:
                        tail, tail_quotes = whole[0][1:], whole[1]
                    else:
                        claimed = self.redactor.regional(rest, run_classes(rest))
                        if claimed is None:
                            claimed = self.redactor.claims(rest)
                        if claimed and any(_outside_strings(rest, claimed, 0)):
                            return None
                        tail, tail_quotes = replaced(rest, claimed) if claimed else rest, rest.count('"')
                    combined = f"{redacted[:-1]},{tail}"
                    self._remember_list(value, combined, quotes + tail_quotes)
                    return combined
                if "\\u" in rest or "\\\\" in rest:
                    return None  # such a part is decoded and written anew: the whole is, as it would be afresh
                try:
                    json.loads("[" + rest)
                except ValueError:
                    return None  # not JSON: the whole is redacted as text
                tail = self._text("[" + rest, None)
                if not (tail.startswith("[") and redacted.endswith("]")):
                    return None
                combined = f"{redacted[:-1]},{tail[1:]}"
                self._remember_list(value, combined, -1)
                return combined
        return None

    def _remember_list(self, value: str, redacted: str, quotes: int) -> None:
        """``quotes``: the quotes in ``value`` when it was redacted by one scan with nothing found outside its
        strings, else -1."""
        if not (value.endswith("]") and redacted.endswith("]")):
            return
        if len(self._lists) >= _LISTS:
            self._scanned.pop(self._lists.pop(0)[0], None)
        self._lists.append((value, value[:-1], len(value), redacted, quotes))
        if quotes >= 0:
            self._scanned[value] = (redacted, quotes)

    def _json_strings(self, value: str, classes: bytes, hit: tuple[int, int] | None) -> str | None:
        """A valid JSON text with each of its strings that may hold a value redacted in place; None when its text
        has an escaped backslash (then it is redacted value by value). ``hit``: the first candidate in it.

        A big message list is not rebuilt and re-encoded to redact one email in it: the candidates are found in
        the text itself, and only the string each one sits in is decoded, redacted and written back. A value a
        pattern matches never contains a character JSON escapes, so the encoded text shows every candidate;
        whether one sits inside a string is the parity of the unescaped quotes before it.
        """
        if "\\\\" in value:
            return None
        pieces: list[str] = []
        last = position = 0
        inside = False
        while hit is not None:
            start = hit[0]
            quotes = value.count('"', position, start) - value.count('\\"', position, start)
            inside ^= quotes % 2 == 1
            if not inside:  # a number between the strings: numbers are kept
                position = hit[1]
                hit = _next_candidate(value, classes, position)
                continue
            opening = value.rfind('"', 0, start)
            while value[opening - 1] == "\\":
                opening = value.rfind('"', 0, opening)
            closing = value.find('"', start)
            while value[closing - 1] == "\\":
                closing = value.find('"', closing + 1)
            token = value[opening : closing + 1]
            decoded = json.loads(token) if "\\" in token else token[1:-1]
            redacted = self.text(decoded, None)
            if redacted is not decoded:
                pieces.append(value[last:opening])
                pieces.append(_ENCODER.encode(redacted))
                last = closing + 1
            position = closing + 1
            inside = False
            hit = _next_candidate(value, classes, position)
        if not pieces:
            return value
        pieces.append(value[last:])
        return "".join(pieces)

    def _json(self, value: Any, field: str | None) -> Any:
        """A parsed JSON value redacted; the same object when nothing in it changed."""
        if isinstance(value, str):
            return self.text(value, field)
        if isinstance(value, dict):
            out: dict[str, Any] | None = None
            for key, item in value.items():
                redacted = self._json(item, key)
                if redacted is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = redacted
            return value if out is None else out
        if isinstance(value, list):
            items = [self._json(item, field) for item in value]
            return value if all(new is old for new, old in zip(items, value, strict=True)) else items
        return value  # numbers, booleans and null are kept
