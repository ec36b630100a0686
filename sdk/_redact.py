"""Redaction of personal data before anything leaves the process: built-in patterns, user patterns, a hook."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

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


def _card(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 13 <= len(digits) <= 19 and _luhn_ok(digits)


def _iban(match: re.Match[str]) -> bool:
    return _iban_ok(match.group(0))


def _phone(match: re.Match[str]) -> bool:
    text = match.group(0)
    digits = re.sub(r"\D", "", text)
    if not 9 <= len(digits) <= 15:
        return False
    if re.match(r"\d{4}-\d{2}-\d{2}", text):  # an ISO date, not a phone number
        return False
    return text.startswith("+") or bool(re.search(r"[\s().-]", text))


def _always(match: re.Match[str]) -> bool:
    return True


@dataclass(frozen=True)
class _Rule:
    label: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] = _always

    def replace(self, match: re.Match[str]) -> str:
        return _placeholder(self.label) if self.accept(match) else match.group(0)


# Order matters: card numbers and IBANs are digit runs a phone pattern would also claim.
BUILTIN_RULES: tuple[_Rule, ...] = (
    _Rule("card", re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])"), _card),
    _Rule("iban", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"), _iban),
    _Rule("ssn", re.compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b")),
    _Rule("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")),
    _Rule(
        "phone",
        re.compile(r"(?<![\w+-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){2,4}(?!\w)"),
        _phone,
    ),
)

BUILTIN_LABELS: tuple[str, ...] = tuple(rule.label for rule in BUILTIN_RULES)


def _placeholder(label: str) -> str:
    return f"[REDACTED:{label}]"


@dataclass(frozen=True)
class Redactor:
    """Replaces personal data in strings with ``[REDACTED:<kind>]`` placeholders.

    ``builtin`` turns on the shipped patterns (email, phone, payment card with a Luhn check, IBAN with its
    checksum, US SSN); ``patterns`` are extra regular expressions (replaced by ``[REDACTED]``); ``callback``
    runs last on every string and returns its redacted form.
    """

    builtin: bool = True
    patterns: tuple[re.Pattern[str], ...] = ()
    callback: RedactCallback | None = None
    _rules: tuple[_Rule, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_rules", BUILTIN_RULES if self.builtin else ())

    @classmethod
    def build(
        cls,
        *,
        builtin: bool = True,
        patterns: Iterable[str | re.Pattern[str]] = (),
        callback: RedactCallback | None = None,
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
        return cls(builtin=builtin, patterns=tuple(compiled), callback=callback)

    @property
    def active(self) -> bool:
        """Whether this redactor changes anything at all."""
        return bool(self._rules or self.patterns or self.callback)

    def text(self, value: str) -> str:
        """The redacted form of one string."""
        for rule in self._rules:
            value = rule.pattern.sub(rule.replace, value)
        for pattern in self.patterns:
            value = pattern.sub("[REDACTED]", value)
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

    def value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string (and every long integer) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bool) or value is None or isinstance(value, float):
            return value
        if isinstance(value, int):
            # A card number or phone stored as an integer is still a card number or phone.
            if abs(value) >= 10**8:
                redacted = self.text(str(value))
                return value if redacted == str(value) else redacted
            return value
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [self.value(item) for item in value]
        return self.text(str(value))


NO_REDACTION = Redactor(builtin=False)
