"""Redaction of personal data before anything leaves the process: built-in patterns, user patterns, a hook."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from passhat._pseudonym import PseudonymKey, Pseudonyms

RedactCallback = Callable[[str], str]

logger = logging.getLogger("passhat")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _iban_ok(candidate: str) -> bool:
    compact = candidate.replace(" ", "").upper()
    rearranged = compact[4:] + compact[:4]
    as_digits = "".join(str(int(char, 36)) for char in rearranged)
    return int(as_digits) % 97 == 1


_NON_DIGIT = re.compile(r"\D")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_PHONE_SEPARATOR = re.compile(r"[\s().-]")


def _card(match: re.Match[str]) -> bool:
    digits = _NON_DIGIT.sub("", match.group(0))
    return 13 <= len(digits) <= 19 and _luhn_ok(digits)


def _iban(match: re.Match[str]) -> bool:
    return _iban_ok(match.group(0))


def _phone(match: re.Match[str]) -> bool:
    text = match.group(0)
    digits = _NON_DIGIT.sub("", text)
    if not 9 <= len(digits) <= 15:
        return False
    if _ISO_DATE.match(text):  # an ISO date, not a phone number
        return False
    return text.startswith("+") or _PHONE_SEPARATOR.search(text) is not None


def _always(match: re.Match[str]) -> bool:
    return True


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
# ``_STRETCH``); a stretch is then read with the pattern's own two branches (``_may_hold_run``). A non-ASCII
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
_NINE = b"0" * 9


def run_classes(value: str) -> bytes:
    """One class byte per character of ``value`` (see ``_STRETCH``), for :func:`find_digit_run`."""
    if value.isascii():
        return value.encode().translate(_STRETCH[0])
    return value.encode("ascii", "replace").translate(_STRETCH[1])


def _may_hold_run(stretch: str) -> bool:
    """Whether DIGIT_RUN matches in ``stretch`` (exactly for ASCII; a non-ASCII character counts as a digit)."""
    ascii_only = stretch.isascii()
    raw = stretch.encode() if ascii_only else stretch.encode("ascii", "replace")
    which = 0 if ascii_only else 1
    # ``\d(?:[ .()+-]{0,2}\d){8}``: nine digits with at most two separators between each.
    chained = raw.translate(_CHAINED[which]).replace(b"sss", b"x")
    if chained.count(b"d") >= 9:
        for piece in chained.split(b"x"):
            if piece.count(b"d") >= 9:
                return True
    # ``\d\d(?: ?[A-Z0-9]){11}``: two digits, then eleven digits or capitals, each after at most one space.
    for piece in raw.translate(_GROUPED[which]).replace(b"  ", b"x").split(b"x"):
        start = piece.find(b"dd")
        if start != -1 and len(piece) - start - 2 - piece.count(b" ", start + 2) >= 11:
            return True
    return False


def find_digit_run(value: str, classes: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The first stretch of ``value[start:end]`` in which DIGIT_RUN matches (``classes``: ``run_classes(value)``):
    where the match lies, from the stretch's start to its end; None when there is none."""
    while True:
        begin = classes.find(_NINE, start, end)
        if begin == -1:
            return None
        stop = classes.find(b"x", begin + 9, end)
        if stop == -1:
            stop = end
        if _may_hold_run(value[begin:stop]):
            return begin, stop
        start = stop


def has_digit_run(value: str) -> bool:
    """Whether DIGIT_RUN finds a run anywhere in ``value`` (see ``find_digit_run``)."""
    return find_digit_run(value, run_classes(value), 0, len(value)) is not None


def digit_stretches(value: str) -> list[tuple[int, int]]:
    """The stretches of ``value`` in which DIGIT_RUN matches (see ``find_digit_run``). Every character a card,
    IBAN, SSN or phone pattern matches is one a stretch is made of, and each of their matches holds a DIGIT_RUN
    match: they can match only inside these."""
    classes = run_classes(value)
    found: list[tuple[int, int]] = []
    start, end = 0, len(value)
    while (stretch := find_digit_run(value, classes, start, end)) is not None:
        found.append(stretch)
        start = stretch[1]
    return found


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


def _within(
    segments: tuple[tuple[int, int], ...], regions: list[tuple[int, int]], length: int
) -> tuple[tuple[int, int], ...]:
    """The parts of ``segments`` inside ``regions`` (both in order), each region with the character after it, which
    the patterns' lookaheads and word boundaries read (none of them is in a match: the search finds the same)."""
    parts: list[tuple[int, int]] = []
    for begin, stop in segments:
        for start, end in regions:
            low, high = max(begin, start), min(stop, end + 1, length)
            if low < high:
                parts.append((low, high))
    return tuple(parts)


@dataclass(frozen=True)
class _Rule:
    label: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] = _always
    needs: str = ""  # "digits": only where DIGIT_RUN finds a run; "@": only in a string with an @; "": always


# Order matters: card numbers and IBANs are digit runs a phone pattern would also claim; a value claimed by an
# earlier rule is not looked at again by a later one (a pseudonymous card must not be re-read as a phone).
BUILTIN_RULES: tuple[_Rule, ...] = (
    _Rule("card", re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])"), _card, "digits"),
    _Rule("iban", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"), _iban, "digits"),
    _Rule("ssn", re.compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b"), needs="digits"),
    _Rule("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"), needs="@"),
    _Rule(
        "phone",
        re.compile(r"(?<![\w+-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){2,4}(?!\w)"),
        _phone,
        "digits",
    ),
)

BUILTIN_LABELS: tuple[str, ...] = tuple(rule.label for rule in BUILTIN_RULES)


PATTERN_LABEL = "pattern"
"""The kind of a value found by one of the user's ``redact_patterns``."""

REDACT_MODES: tuple[str, ...] = ("pseudonym", "blank")


def _placeholder(label: str) -> str:
    return "[REDACTED]" if label == PATTERN_LABEL else f"[REDACTED:{label}]"


@dataclass(frozen=True)
class Redactor:
    """Replaces personal data in strings before anything leaves the process.

    ``builtin`` turns on the shipped patterns (email, phone, payment card with a Luhn check, IBAN with its
    checksum, US SSN); ``patterns`` are extra regular expressions; ``callback`` runs last on every string and
    returns its redacted form. In ``mode="pseudonym"`` (the default) each value found becomes a deterministic,
    format-preserving pseudonym keyed by ``key`` (see :class:`passhat.PseudonymKey`); in ``mode="blank"`` it
    becomes ``[REDACTED:<kind>]`` (``[REDACTED]`` for a user pattern). ``blank`` names kinds (``card``) or
    fields (an intent parameter, a column, a tool argument: ``notes``) whose values are blanked in either mode.
    """

    builtin: bool = True
    patterns: tuple[re.Pattern[str], ...] = ()
    callback: RedactCallback | None = None
    mode: str = "pseudonym"
    blank: frozenset[str] = frozenset()
    key: PseudonymKey | None = None
    _rules: tuple[_Rule, ...] = field(init=False, repr=False, compare=False)
    _pseudonyms: Pseudonyms = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in REDACT_MODES:
            raise ValueError(f"redact mode must be one of {', '.join(REDACT_MODES)}, got {self.mode!r}")
        rules = BUILTIN_RULES if self.builtin else ()
        rules += tuple(_Rule(PATTERN_LABEL, pattern) for pattern in self.patterns)
        object.__setattr__(self, "blank", frozenset(self.blank))
        object.__setattr__(self, "_rules", rules)
        object.__setattr__(self, "_pseudonyms", Pseudonyms(self.key or shared_key()))

    @classmethod
    def build(
        cls,
        *,
        builtin: bool = True,
        patterns: Iterable[str | re.Pattern[str]] = (),
        callback: RedactCallback | None = None,
        mode: str = "pseudonym",
        blank: Iterable[str] = (),
        key: PseudonymKey | str | None = None,
    ) -> Redactor:
        """A redactor from user-facing options; invalid regular expressions raise one clear ValueError."""
        compiled: list[re.Pattern[str]] = []
        for pattern in patterns:
            if isinstance(pattern, re.Pattern):
                compiled.append(pattern)
                continue
            try:
                compiled.append(re.compile(pattern))
            except re.error as exc:
                raise ValueError(f"redact pattern {pattern!r} is not a valid regular expression: {exc}") from None
        if isinstance(key, str):
            key = PseudonymKey(key)
        return cls(
            builtin=builtin,
            patterns=tuple(compiled),
            callback=callback,
            mode=mode,
            blank=frozenset(blank),
            key=key,
        )

    @property
    def active(self) -> bool:
        """Whether this redactor changes anything at all."""
        return bool(self._rules or self.callback)

    def _replacement(self, label: str, found: str, blank_field: bool) -> str:
        if blank_field or self.mode == "blank" or label in self.blank:
            return _placeholder(label)
        if self._pseudonyms.is_pseudonym(label, found):
            return found
        return self._pseudonyms.of(label, found)

    def text(self, value: str, field: str | None = None) -> str:
        """The redacted form of one string (``field``: the key it sits under, for per-field blanking)."""
        blank_field = field is not None and field in self.blank
        claimed: list[tuple[int, int, str]] = []
        digits: list[tuple[int, int]] | None = None
        emails: list[tuple[int, int]] | None = None
        for rule in self._rules:
            regions = None
            if rule.needs == "@":
                if emails is None:
                    emails = email_stretches(value)
                regions = emails
            elif rule.needs == "digits":
                if digits is None:
                    digits = digit_stretches(value)
                regions = digits
            if regions is not None and not regions:
                continue
            found: list[tuple[int, int, str]] = []
            # Each rule looks only between the values earlier rules claimed, so a phone pattern cannot run on
            # into a card number beside it, and a rejected candidate (a digit run failing the Luhn check) is
            # retried one character later rather than hiding a real value that overlaps it.
            segments = _free_segments(claimed, len(value)) if claimed else ((0, len(value)),)
            if regions is not None:
                segments = _within(segments, regions, len(value))
            for begin, stop in segments:
                position = begin
                while position < stop:
                    match = rule.pattern.search(value, position, stop)
                    if match is None:
                        break
                    start, end = match.span()
                    if start == end or not rule.accept(match):
                        position = start + 1
                        continue
                    found.append((start, end, self._replacement(rule.label, match.group(0), blank_field)))
                    position = end
            if found:
                claimed = sorted(claimed + found)
        if claimed:
            pieces: list[str] = []
            position = 0
            for start, end, replacement in claimed:
                pieces.append(value[position:start])
                pieces.append(replacement)
                position = end
            pieces.append(value[position:])
            value = "".join(pieces)
        if self.callback is not None:
            try:
                result: object = self.callback(value)
            except Exception as exc:  # fail closed: a broken hook must neither leak data nor crash the agent
                logger.warning("passhat: redact_callback raised %r; the value was withheld", exc)
                return "[REDACTED:callback_error]"
            if not isinstance(result, str):
                logger.warning("passhat: redact_callback returned %s, not str; the value was withheld", type(result))
                return "[REDACTED:callback_error]"
            value = result
        return value

    def value(self, value: Any, field: str | None = None) -> Any:
        """A copy of a JSON-like value with every string (and every long integer) redacted."""
        if isinstance(value, str):
            return self.text(value, field)
        if isinstance(value, bool) or value is None or isinstance(value, float):
            return value
        if isinstance(value, int):
            # A card number or phone stored as an integer is still a card number or phone.
            if abs(value) >= 10**8:
                plain = str(value)
                redacted = self.text(plain, field)
                if redacted == plain:
                    return value
                return int(redacted) if redacted.isdigit() else redacted
            return value
        if isinstance(value, dict):
            return {key: self.value(item, key if isinstance(key, str) else field) for key, item in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.value(item, field) for item in value]
        return self.text(str(value), field)


def _free_segments(claimed: list[tuple[int, int, str]], length: int) -> tuple[tuple[int, int], ...]:
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


_shared_key: PseudonymKey | None = None


def shared_key() -> PseudonymKey:
    """The process's key when none is given: ``PASSHAT_PSEUDONYM_KEY``, else the key file (one per process)."""
    global _shared_key
    if _shared_key is None:
        _shared_key = key_from_environment()
    return _shared_key


def key_from_environment(secret: str | None = None, path: str | None = None) -> PseudonymKey:
    """The key named by the arguments, else by ``PASSHAT_PSEUDONYM_KEY`` / ``PASSHAT_PSEUDONYM_KEY_FILE``."""
    secret = secret or os.environ.get("PASSHAT_PSEUDONYM_KEY") or None
    path = path or os.environ.get("PASSHAT_PSEUDONYM_KEY_FILE") or None
    return PseudonymKey(secret, path=path)


NO_REDACTION = Redactor(builtin=False)
