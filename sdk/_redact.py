"""Redaction of personal data before anything leaves the process: built-in patterns, user patterns, a hook."""

from __future__ import annotations

import logging
import os
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from passhat._pseudonym import PseudonymKey, Pseudonyms
from passhat._stretches import (
    NINE,
    OPENING,
    digit_stretches,
    email_stretches,
    free_segments,
    may_hold_run,
    replaced,
    run_classes,
    searched,
    within,
)

RedactCallback = Callable[[str], str]

logger = logging.getLogger("passhat")

_MAY_HOLD_A_VALUE = re.compile(r"[@\d]")
"""What every built-in kind's value holds: an email an ``@``, the others digits (\\d: any script's)."""


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


_STRETCHES_REMEMBERED = 8192  # stretches whose values a ``Redactor`` keeps found
_LONGEST_STRETCH_REMEMBERED = 256  # characters: a longer stretch is searched each time


@dataclass(frozen=True)
class _Rule:
    label: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] = _always
    needs: str = ""  # "digits": only where DIGIT_RUN finds a run; "@": only in a string with an @; "": always
    present: str = ""  # a character each of its matches holds: a region without it is not searched
    capitals: bool = False  # each match holds an ASCII capital: an ASCII region with none is not searched


# Order matters: card numbers and IBANs are digit runs a phone pattern would also claim; a value claimed by an
# earlier rule is not looked at again by a later one (a pseudonymous card must not be re-read as a phone).
BUILTIN_RULES: tuple[_Rule, ...] = (
    _Rule("card", re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])"), _card, "digits"),
    _Rule("iban", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"), _iban, "digits", capitals=True),
    _Rule("ssn", re.compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b"), needs="digits", present="-"),
    _Rule("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"), needs="@"),
    _Rule(
        "phone",
        # After a country code the first group may be one digit (+33 6 12 34 56 78, +353 1 234 5678, +81 3-1234-5678),
        # the trunk prefix in brackets too (+33 (0)6 ...); without one, two to four.
        re.compile(
            r"(?<![\w+-])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}|(?:\(\d{2,4}\)[ .-]?)?\d{2,4})"
            r"(?:[ .-]?\d{2,4}){2,4}(?!\w)"
        ),
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
    _only_regions: bool = field(init=False, repr=False, compare=False)
    _found: dict[object, tuple[tuple[int, int, str], ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in REDACT_MODES:
            raise ValueError(f"redact mode must be one of {', '.join(REDACT_MODES)}, got {self.mode!r}")
        rules = BUILTIN_RULES if self.builtin else ()
        rules += tuple(_Rule(PATTERN_LABEL, pattern) for pattern in self.patterns)
        object.__setattr__(self, "blank", frozenset(self.blank))
        object.__setattr__(self, "_rules", rules)
        only_regions = bool(rules) and self.callback is None and all(rule.needs for rule in rules)
        object.__setattr__(self, "_only_regions", only_regions)
        object.__setattr__(self, "_found", {})
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
    def is_plain(self) -> bool:
        """Whether only the built-in patterns run (no pattern of the user's, no callback)."""
        return self._only_regions

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
        return self.scanned(value, field, None)

    def scanned(self, value: str, field: str | None, classes: bytes | None) -> str:
        """:meth:`text`, for a caller that has ``run_classes(value)`` already (``classes``; None when not)."""
        claimed = self.claims(value, field, classes)
        if claimed:
            value = replaced(value, claimed)
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

    def claims(self, value: str, field: str | None = None, classes: bytes | None = None) -> list[tuple[int, int, str]]:
        """Where the patterns find values in ``value``, in order and apart, each with its replacement (the callback
        aside): :func:`replaced` makes the redacted string of them. ``classes``: ``run_classes(value)``, if known.

        No pattern matches a ``"``, a ``\\`` or a ``,``, and what they read around a match (a lookbehind, a word
        boundary) is the same beside a ``"`` as at either end of a string: in a JSON text without escapes, the
        values found inside a string are those found in that string alone."""
        if self._only_regions and (field is None or field not in self.blank):
            regional = self.regional(value, run_classes(value) if classes is None else classes)
            if regional is not None:
                return regional
        length = len(value)
        digits: list[tuple[int, int]] | None = None
        emails: list[tuple[int, int]] | None = None
        blank_field = field is not None and field in self.blank
        claimed: list[tuple[int, int, str]] = []
        for rule in self._rules:
            regions = None
            if rule.needs == "@":
                if emails is None:
                    emails = searched(email_stretches(value), length)
                regions = emails
            elif rule.needs == "digits":
                if digits is None:
                    digits = searched(digit_stretches(value, classes), length)
                regions = digits
            if regions is not None and not regions:
                continue
            # Each rule looks only between the values earlier rules claimed, so a phone pattern cannot run on
            # into a card number beside it, and a rejected candidate (a digit run failing the Luhn check) is
            # retried one character later rather than hiding a real value that overlaps it.
            segments: tuple[tuple[int, int], ...] | list[tuple[int, int]]
            if claimed:
                segments = free_segments(claimed, length)
                if regions is not None:
                    segments = within(segments, regions)
            else:
                segments = regions if regions is not None else ((0, length),)
            found = self._found_by(rule, value, segments, blank_field)
            if found:
                claimed = sorted(claimed + found)
        return claimed

    def _found_by(
        self, rule: _Rule, value: str, segments: Iterable[tuple[int, int]], blank_field: bool
    ) -> list[tuple[int, int, str]]:
        """The values ``rule`` finds in ``value`` within ``segments``, each with its replacement."""
        found: list[tuple[int, int, str]] = []
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
        return found

    def regional(self, value: str, classes: bytes) -> list[tuple[int, int, str]] | None:
        """``claims`` with the built-in rules alone, when no email's stretch meets a digit stretch's (else None;
        ``classes``: ``run_classes(value)``). Only for a redactor that :attr:`is_plain`, with no field blanked.

        Then what the rules find in one stretch is all they find there, and depends only on the stretch's text and
        on whether a word character is just before and just after it (the patterns' lookbehinds, lookaheads and
        word boundaries read one character, and none is in a match); spaces at either end are never in a match
        and read as its ends do. The email pattern reads nothing around its stretch. So each stretch's values are
        found once and remembered, with their replacements, for every string it comes back in: a customer's email
        and phone number in every later message, tool call and model input, an id in every span that names it.
        """
        remembered = self._found
        emails = email_stretches(value)
        claimed: list[tuple[int, int, str]] = []
        start = 0
        end = len(value)
        while (begin := classes.find(NINE, start, end)) != -1:
            stop = classes.find(b"x", begin + 9, end)
            if stop == -1:
                stop = end
            start = stop
            for email_start, email_end in emails:  # a stretch's search reads the character after it, as an email's
                if email_start <= stop and begin <= email_end:
                    return None
            stretch = value[begin:stop]
            before = begin > 0 and ((char := value[begin - 1]).isalnum() or char == "_")  # a word character
            after = stop < end and ((char := value[stop]).isalnum() or char == "_")
            core = stretch.strip(" ") if stretch[0] == " " or stretch[-1] == " " else stretch
            if core is not stretch:
                if not core:
                    continue
                lead = len(stretch) - len(stretch.lstrip(" "))
                if lead:
                    before = False
                    begin += lead
                if lead + len(core) < len(stretch):
                    after = False
            key = (before, core, after)
            found = remembered.get(key)
            if found is None:
                found = self._remembered(key, len(core), self._in_stretch(before, core, after))
            for found_start, found_end, replacement in found:
                claimed.append((begin + found_start, begin + found_end, replacement))
        if emails:
            for email_start, email_end in emails:
                text = value[email_start:email_end]
                found = remembered.get(text)
                if found is None:
                    found = self._remembered(text, len(text), self._in_region("@", "", text))
                for found_start, found_end, replacement in found:
                    claimed.append((email_start + found_start, email_start + found_end, replacement))
            if len(claimed) > 1:
                claimed.sort()
        return claimed

    def _remembered(
        self, key: object, size: int, found: tuple[tuple[int, int, str], ...]
    ) -> tuple[tuple[int, int, str], ...]:
        """``found``, remembered under ``key`` unless its stretch (``size`` characters) is too long to meet again."""
        if size <= _LONGEST_STRETCH_REMEMBERED:
            if len(self._found) >= _STRETCHES_REMEMBERED:
                self._found.clear()
            self._found[key] = found
        return found

    def _in_stretch(self, before: bool, core: str, after: bool) -> tuple[tuple[int, int, str], ...]:
        """What the numeric rules find in a digit stretch ``core`` (a word character before it or after it, or
        neither), offsets in ``core``."""
        first = 0  # where a match may begin, at the earliest (see ``digit_stretches``)
        if before:
            opening = OPENING.search(core)
            if opening is None:
                return ()
            first = opening.end()
        if len(core) - first < 9 or not may_hold_run(core[first:] if first else core):
            return ()
        return self._in_region("digits", "a" if before else "", core + "a" if after else core)

    def _in_region(self, needs: str, before: str, region: str) -> tuple[tuple[int, int, str], ...]:
        """What the rules that search ``needs`` regions find in ``region`` after ``before`` (offsets in
        ``region``): each rule in order between the values earlier ones claimed, as ``claims`` runs them."""
        text = before + region
        offset = len(before)
        claimed: list[tuple[int, int, str]] = []
        for rule in self._rules:
            if rule.needs != needs or (rule.present and rule.present not in region):
                continue
            if rule.capitals and region.isascii() and region.lower() == region:
                continue
            if claimed:
                segments = within(free_segments(claimed, len(text)), [(offset, len(text))])
            else:
                segments = ((offset, len(text)),)
            found = self._found_by(rule, text, segments, False)
            if found:
                claimed = sorted(claimed + found)
        return tuple((start - offset, end - offset, replacement) for start, end, replacement in claimed)

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
            if self._only_regions:
                # One search over every key: a dict whose keys hold no @ and no digit (the usual one) keeps them.
                try:
                    keys: str | None = "\x00".join(value)
                except TypeError:  # a key that is not text
                    keys = None
                if keys is not None and _MAY_HOLD_A_VALUE.search(keys) is None:
                    return {key: self.value(item, key) for key, item in value.items()}
            return {
                self.dict_key(key): self.value(item, key if isinstance(key, str) else field)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple | set | frozenset):
            return [self.value(item, field) for item in value]
        return self.text(str(value), field)

    def dict_key(self, key: Any) -> Any:
        """A dict key with the values the patterns find replaced (a result keyed by email is personal data too).

        The callback is not run on keys: one that blanks every string would fold a dict into a single key."""
        if not isinstance(key, str) or (self._only_regions and _MAY_HOLD_A_VALUE.search(key) is None):
            return key  # the built-in kinds all need an @ (email) or a digit: a key like "email" is passed as it is
        claimed = self.claims(key)
        return replaced(key, claimed) if claimed else key


_shared_key: PseudonymKey | None = None


def shared_key() -> PseudonymKey:
    """The process's key when none is given: ``PASSHAT_PSEUDONYM_KEY``, else the key file (one per process)."""
    global _shared_key
    if _shared_key is None:
        try:
            _shared_key = key_from_environment()
        except ValueError as exc:  # a short PASSHAT_PSEUDONYM_KEY: configure() says so; here the agent must run on
            logger.warning(
                "passhat: PASSHAT_PSEUDONYM_KEY is not usable (%s); using a random key for this process only", exc
            )
            _shared_key = PseudonymKey(secrets.token_bytes(32))
    return _shared_key


def key_from_environment(secret: str | None = None, path: str | None = None) -> PseudonymKey:
    """The key named by the arguments, else by ``PASSHAT_PSEUDONYM_KEY`` / ``PASSHAT_PSEUDONYM_KEY_FILE``."""
    secret = secret or os.environ.get("PASSHAT_PSEUDONYM_KEY") or None
    path = path or os.environ.get("PASSHAT_PSEUDONYM_KEY_FILE") or None
    return PseudonymKey(secret, path=path)


NO_REDACTION = Redactor(builtin=False, key=PseudonymKey())  # never pseudonymises: `import passhat` reads no key
