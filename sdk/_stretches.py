"""Where personal values may lie in a string: the stretches the built-in patterns can match in, found in C.

The redactor (passhat._redact) runs its patterns only there; these are the helpers it and the span redaction
(passhat._span_redaction) share.
"""

from __future__ import annotations

import re

# A superset of what the numeric built-in patterns can match: nine digits or more with at most two of a phone's or
# card's separators between each (phone, card, SSN), or an IBAN's check digits and the eleven characters after.
# A string in which this finds nothing holds no card, IBAN, SSN or phone, so those patterns are not run on it (and
# an email needs an ``@``): most strings an agent's spans carry are redacted with one scan instead of five. This is
# its definition; it is answered by :func:`find_digit_run` (the tests check they agree).
DIGIT_RUN = re.compile(r"\d(?:(?:[ .()+-]{0,2}\d){8}|\d(?: ?[A-Z0-9]){11})")


# The regular expression engine reads a string one character at a time, and DIGIT_RUN backtracks at every digit:
# running it was most of what redacting an agent's spans cost. It is answered instead with ``bytes.translate`` and
# ``bytes.find``, which run in C over the whole string at once. Each character becomes one byte (ASCII as it is,
# any other as ``?``, so positions are kept), then a class: every character of a DIGIT_RUN match is a digit, an
# ASCII capital, a space or one of ``.()+-``, so a match lies in a stretch of nine or more such ("0" in
# ``_STRETCH``); a stretch is then read with the pattern's own two branches (``may_hold_run``). A non-ASCII
# character counts as a digit (it may be one of another script): the answer is then a superset, never a miss.
def _classes(pairs: dict[str, str], other: str, unknown: str) -> tuple[bytes, bytes]:
    """Translation tables from ``pairs`` (characters to their class), for an ASCII string and for a string whose
    non-ASCII characters were replaced by ``?`` (``unknown``'s class)."""
    table = bytearray(other.encode() * 256)
    for chars, kind in pairs.items():
        for char in chars:
            table[ord(char)] = ord(kind)
    replaced = bytearray(table)
    replaced[ord("?")] = ord(unknown)
    return bytes(table), bytes(replaced)


_DIGITS, _CAPITALS, _SEPARATORS = "0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", " .()+-"
_STRETCH = _classes({_DIGITS + _CAPITALS + _SEPARATORS: "0"}, "x", "0")
_CHAINED = _classes({_DIGITS: "d", _SEPARATORS: "s"}, "x", "d")  # the first branch: digits, separators
_GROUPED = _classes({_DIGITS: "d", _CAPITALS: "A", " ": " "}, "x", "d")  # the second: [A-Z0-9], spaces
NINE = b"0" * 9


def run_classes(value: str) -> bytes:
    """One class byte per character of ``value`` (see ``_STRETCH``), for :func:`find_digit_run`."""
    if value.isascii():
        return value.encode().translate(_STRETCH[0])
    return value.encode("ascii", "replace").translate(_STRETCH[1])


def may_hold_run(stretch: str) -> bool:
    """Whether DIGIT_RUN matches in ``stretch`` (exactly for ASCII; a non-ASCII character counts as a digit)."""
    ascii_only = stretch.isascii()
    raw = stretch.encode() if ascii_only else stretch.encode("ascii", "replace")
    which = 0 if ascii_only else 1
    # ``\d(?:[ .()+-]{0,2}\d){8}``: nine digits with at most two separators between each.
    chained = raw.translate(_CHAINED[which])
    digits = chained.count(b"d")
    if digits >= 9:
        for piece in chained.replace(b"sss", b"x").split(b"x"):
            if piece.count(b"d") >= 9:
                return True
    # ``\d\d(?: ?[A-Z0-9]){11}``: two digits, then eleven digits or capitals, each after at most one space: at
    # least thirteen of them (a date's ten characters are not enough).
    if digits < 2 or len(raw) < 13:
        return False
    grouped = raw.translate(_GROUPED[which])
    if digits + grouped.count(b"A") < 13:
        return False
    for piece in grouped.replace(b"  ", b"x").split(b"x"):
        start = piece.find(b"dd")
        if start != -1 and len(piece) - start - 2 - piece.count(b" ", start + 2) >= 11:
            return True
    return False


def find_digit_run(value: str, classes: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The first stretch of ``value[start:end]`` in which DIGIT_RUN matches (``classes``: ``run_classes(value)``):
    where the match lies, from the stretch's start to its end; None when there is none."""
    while True:
        begin = classes.find(NINE, start, end)
        if begin == -1:
            return None
        stop = classes.find(b"x", begin + 9, end)
        if stop == -1:
            stop = end
        if may_hold_run(value[begin:stop]):
            return begin, stop
        start = stop


def has_digit_run(value: str) -> bool:
    """Whether DIGIT_RUN finds a run anywhere in ``value`` (see ``find_digit_run``)."""
    return find_digit_run(value, run_classes(value), 0, len(value)) is not None


def digit_stretches(value: str, classes: bytes | None = None) -> list[tuple[int, int]]:
    """The stretches of ``value`` in which a card, IBAN, SSN or phone pattern may match (``classes``:
    ``run_classes(value)`` when the caller has it).

    Every character one of them matches is one a stretch is made of (see ``find_digit_run``), and each of their
    matches holds a DIGIT_RUN match after the place where it begins. Each begins where no word character is just
    before it (a lookbehind, or a word boundary before a digit or a capital): at the stretch's start unless a word
    character is before it, else only after one of the stretch's own characters that is not one (``OPENING``).
    So an id's digits (a tool call's ``pyd_ai_a401a768378647...``, a UUID's last group) follow a letter and hold no
    separator: nothing in them can begin a match, and the patterns are not run on them."""
    if classes is None:
        classes = run_classes(value)
    found: list[tuple[int, int]] = []
    start = 0
    end = len(value)
    while (begin := classes.find(NINE, start, end)) != -1:
        stop = classes.find(b"x", begin + 9, end)
        if stop == -1:
            stop = end
        start = stop
        first = begin  # where a match may begin, at the earliest
        if begin:
            before = value[begin - 1]  # not of the stretch: an ASCII character (a letter, ``_``, punctuation...)
            if before.isalnum() or before == "_":
                opening = OPENING.search(value, begin, stop)
                if opening is None:
                    continue
                first = opening.end()
        if stop - first >= 9 and may_hold_run(value[first:stop]):
            found.append((begin, stop))
    return found


# Where a card, IBAN, SSN or phone match may begin inside a stretch: after one of a stretch's characters that is not
# a word character: its separators, a non-ASCII character (it may be one) and, in a string holding one, a ``?``
# (``run_classes`` gives a ``?`` the class of the non-ASCII characters it stands for there).
OPENING = re.compile(r"[ .()+\-?]|[^\x00-\x7f]")


# The characters of an email the built-in pattern matches (ASCII letters and digits, ``._%+-`` and the one ``@``).
_EMAIL_CHARS = _classes({_DIGITS + _CAPITALS + _CAPITALS.lower() + "._%+-@": "e"}, "x", "x")[1]


def email_stretches(value: str) -> list[tuple[int, int]]:
    """The stretches of an email's characters around each ``@`` of ``value``: where the email pattern can match."""
    found: list[tuple[int, int]] = []
    at = value.find("@")
    if at == -1:
        return found
    raw = value.encode() if value.isascii() else value.encode("ascii", "replace")
    classes = raw.translate(_EMAIL_CHARS)
    while at != -1:
        end = classes.find(b"x", at)
        if end == -1:
            end = len(value)
        found.append((classes.rfind(b"x", 0, at) + 1, end))
        at = value.find("@", end)
    return found


def within(segments: tuple[tuple[int, int], ...], regions: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """The parts of ``segments`` inside ``regions`` (both in order)."""
    parts: list[tuple[int, int]] = []
    for begin, stop in segments:
        for start, end in regions:
            low, high = max(begin, start), min(stop, end)
            if low < high:
                parts.append((low, high))
    return tuple(parts)


def searched(stretches: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """Where a rule searches for each stretch: the stretch and the character after it, which the patterns'
    lookaheads and word boundaries read (none of them is in a match: the search finds the same)."""
    return [(start, end + 1 if end < length else end) for start, end in stretches]


def replaced(value: str, claimed: list[tuple[int, int, str]]) -> str:
    """``value`` with each claimed span (``Redactor.claims``: in order, apart) replaced by its replacement."""
    pieces: list[str] = []
    position = 0
    for start, end, replacement in claimed:
        pieces.append(value[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(value[position:])
    return "".join(pieces)


def free_segments(claimed: list[tuple[int, int, str]], length: int) -> tuple[tuple[int, int], ...]:
    """The stretches of a string of ``length`` characters outside the (sorted) claimed spans."""
    segments: list[tuple[int, int]] = []
    position = 0
    for start, end, _ in claimed:
        if start > position:
            segments.append((position, start))
        position = max(position, end)
    if position < length:
        segments.append((position, length))
    return tuple(segments)
