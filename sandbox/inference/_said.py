"""What the customer said: their messages, and whether a value (a name, an id, a number, an enumeration's
words) appears in them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# A number standing alone: not part of a date, an id or a time ("2026-06-01", "L-104", "10:30").
_NUMBER = re.compile(r"(?<![\w.\-/:])\d+(?:,\d{3})*(?:\.\d+)?(?![\w\-/:]|\.\d)")
# A phone number: after a "+" country code, or groups of digits between separators (nine digits or more). Its
# groups are not numbers the customer said: "+1 415 555 0132" names no order 1, 415 or 555.
_PHONE = re.compile(r"\+\d[\d .()\-]*\d|\(?\d{2,4}\)?(?:[ .\-]\d{2,4}){2,}")


def _numbers_of(text: str) -> list[str]:
    """The numbers standing alone in ``text``, outside phone numbers."""
    masked = _PHONE.sub(lambda m: " " * len(m.group()) if sum(c.isdigit() for c in m.group()) >= 9 else m.group(), text)
    return [match.group() for match in _NUMBER.finditer(masked)]


def said_form(value: Any) -> str:
    """A value as it is compared with words: lower case, single spaces."""
    return " ".join(str(value).lower().split())


@dataclass
class CustomerWords:
    """The customer's messages of one ticket, searchable for the values an intent may hold."""

    messages: Sequence[str]
    _text: str = field(init=False)
    _numbers: set[float] = field(init=False)
    _found: dict[str, int | None] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._text = "\n".join(said_form(message) for message in self.messages)
        self._numbers = set()
        for number in _numbers_of(self._text):
            try:
                self._numbers.add(float(number.replace(",", "")))
            except ValueError:
                continue

    @property
    def empty(self) -> bool:
        return not self._text.strip()

    def message_of(self, value: Any) -> int | None:
        """The index of the first message naming ``value`` (a whole word or number), or None."""
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, int | float):
            return self._number(float(value))
        wanted = said_form(value)
        if not wanted:
            return None
        if wanted not in self._found:
            self._found[wanted] = self._phrase(wanted)
        return self._found[wanted]

    def says(self, value: Any) -> bool:
        return self.message_of(value) is not None

    def says_any(self, phrases: Sequence[str]) -> int | None:
        """The first message naming one of ``phrases``, or None."""
        for phrase in phrases:
            found = self.message_of(phrase)
            if found is not None:
                return found
        return None

    def _phrase(self, wanted: str) -> int | None:
        pattern = re.compile(r"(?<![0-9a-z])" + re.escape(wanted) + r"(?![0-9a-z])")
        if pattern.search(self._text) is None:
            return None
        for index, message in enumerate(self.messages):
            if pattern.search(said_form(message)):
                return index
        return None

    def _number(self, wanted: float) -> int | None:
        if wanted not in self._numbers:
            return None
        for index, message in enumerate(self.messages):
            for number in _numbers_of(said_form(message)):
                try:
                    if float(number.replace(",", "")) == wanted:
                        return index
                except ValueError:
                    continue
        return None
