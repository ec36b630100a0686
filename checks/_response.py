"""Response checks: a required disclosure was said, a confidential value never was.

Text is compared the way a reader would: case, Unicode look-alikes and runs of whitespace do not matter, and a
number matches any spelling of the same amount ("$1,234.50", "1234.5", "1,234.50 USD").
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from passhat.checks._registry import check
from passhat.checks._verdict import Check, CheckContext, Diagnostic, Verdict

_CURRENCY = re.compile(r"[$€£¥]")
# A number with optional thousands separators and decimals, not glued to other digits or letters.
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\d])")
_LOOKALIKES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", " ": " "})
_DIGITS_LIKE = re.compile(r"[\d\s\-().+/]+")


def _canonical_number(match: re.Match[str]) -> str:
    if match.group(1).startswith("0") and len(match.group(1)) > 1:
        return match.group(0)  # "007" is an identifier, not the number 7
    text = match.group(1).replace(",", "") + (match.group(2) or "")
    try:
        value = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern only admits valid literals
        return match.group(0)
    canonical = format(value.normalize(), "f")
    return canonical if "." in canonical else canonical.split(".")[0]


def normalize_text(text: str) -> str:
    """Text folded for tolerant matching: case, look-alike characters, whitespace and number spelling."""
    folded = unicodedata.normalize("NFKC", text).translate(_LOOKALIKES).casefold()
    folded = _CURRENCY.sub("", folded)
    folded = _NUMBER.sub(_canonical_number, folded)
    return re.sub(r"\s+", " ", folded).strip()


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    body = re.escape(normalize_text(phrase))
    start = r"(?<!\w)(?<!\d\.)" if re.match(r"\w", body) else ""
    end = r"(?!\w)(?!\.\d)" if re.search(r"\w$", body) else ""
    return re.compile(start + body + end)


_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def _spellings(phrase: str) -> list[str]:
    """The ways a reader writes the same fact: an ISO date also as "March 4, 2026", "Mar 4, 2026", "4 March 2026"."""
    found = _ISO_DATE.fullmatch(phrase.strip())
    if found is None:
        return [phrase]
    try:
        day = _dt.date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
    except ValueError:
        return [phrase]
    month, short = day.strftime("%B"), day.strftime("%b")
    return [
        phrase,
        f"{month} {day.day}, {day.year}",
        f"{month} {day.day} {day.year}",
        f"{short} {day.day}, {day.year}",
        f"{short}. {day.day}, {day.year}",
        f"{day.day} {month} {day.year}",
        f"{day.day} {short} {day.year}",
    ]


def _digits_pattern(value: str) -> re.Pattern[str] | None:
    """For an identifier made of digits (card, phone, SSN): its digits with any separators between them."""
    digits = re.sub(r"\D", "", value)
    if not _DIGITS_LIKE.fullmatch(value) or len(digits) < 4:
        return None
    return re.compile(r"(?<!\d)" + r"[\s\-().+/]*".join(digits) + r"(?!\d)")


def _excerpt(text: str, start: int = 0, end: int | None = None, width: int = 60) -> str:
    end = start if end is None else end
    left, right = max(0, start - width), min(len(text), end + width)
    return ("…" if left else "") + text[left:right] + ("…" if right < len(text) else "")


def _final_text(ctx: CheckContext) -> str:
    if ctx.final_response:
        return ctx.final_response
    return ctx.agent_messages[-1] if ctx.agent_messages else ""


def _everything_said(ctx: CheckContext) -> list[str]:
    said = list(ctx.agent_messages)
    if ctx.final_response and ctx.final_response not in said:
        said.append(ctx.final_response)
    return said


def _compile(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    compiled: list[re.Pattern[str]] = []
    for pattern in patterns:
        if not isinstance(pattern, str):
            raise TypeError(f"response_contains(): patterns are regular expressions (str), got {pattern!r}")
        try:
            compiled.append(re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"response_contains(): {pattern!r} is not a valid regular expression: {exc}") from None
    return compiled


@check
def response_contains(*phrases: str, patterns: Iterable[str] = (), anywhere: bool = False) -> Check:
    """The agent's final response says every phrase and matches every pattern (a required disclosure).

    Phrases match case-, whitespace- and number-format-insensitively, and a date (``2026-03-04``) in the usual
    spellings ("March 4, 2026", "4 Mar 2026"); patterns are regular expressions
    (case-insensitive) tried on the raw and on the folded text. ``anywhere=True`` accepts any agent message.
    """
    for phrase in phrases:
        if not isinstance(phrase, str) or not phrase.strip():
            raise TypeError(f"response_contains(): phrases are non-empty strings, got {phrase!r}")
    compiled = _compile(patterns)
    if not phrases and not compiled:
        raise ValueError("response_contains() needs at least one phrase or pattern")
    phrase_patterns = [(phrase, [_phrase_pattern(spelled) for spelled in _spellings(phrase)]) for phrase in phrases]

    def run(ctx: CheckContext) -> Verdict:
        texts = _everything_said(ctx) if anywhere else [_final_text(ctx)]
        folded = [normalize_text(text) for text in texts]
        where = "anything the agent said" if anywhere else "the final response"
        shown = _excerpt(texts[-1] if texts else "", 0, 0, 100) or "(empty)"
        problems: list[Diagnostic] = []
        for phrase, spelled in phrase_patterns:
            if not any(pattern.search(text) for pattern in spelled for text in folded):
                message = f"{where} does not say {phrase!r}; it says: {shown}"
                problems.append(Diagnostic("response_contains", message, expected=phrase, actual=shown))
        for regex in compiled:
            if not any(regex.search(text) for text in [*texts, *folded]):
                message = f"{where} does not match /{regex.pattern}/; it says: {shown}"
                problems.append(Diagnostic("response_contains", message, expected=regex.pattern, actual=shown))
        return Verdict(not problems, "response_contains", problems, role="disclosure")

    run.role = "disclosure"  # type: ignore[attr-defined]
    return run


@check
def response_omits(*values: Any) -> Check:
    """Nothing the agent said reveals any of ``values`` (a confidential field, another customer's data).

    Every agent message is checked, not only the final one. Text values match like ``response_contains``;
    values made of digits (card, phone and ID numbers) match whatever separators the agent put between them.
    """
    if not values:
        raise ValueError("response_omits() needs at least one value")
    probes: list[tuple[Any, list[re.Pattern[str]]]] = []
    for value in values:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise TypeError(f"response_omits(): values must be non-empty, got {value!r}")
        text = value if isinstance(value, str) else format(value, "f") if isinstance(value, Decimal) else str(value)
        digits = _digits_pattern(text)
        probes.append((value, [digits] if digits else [_phrase_pattern(text)]))

    def run(ctx: CheckContext) -> Verdict:
        problems: list[Diagnostic] = []
        for index, said in enumerate(_everything_said(ctx)):
            folded = normalize_text(said)
            for value, patterns in probes:
                for pattern in patterns:
                    found = pattern.search(said) or pattern.search(folded)
                    if found is None:
                        continue
                    source = said if pattern.search(said) else folded
                    shown = _excerpt(source, found.start(), found.end())
                    message = f"agent message {index + 1} reveals {value!r}: {shown}"
                    problems.append(Diagnostic("response_omits", message, expected="absent", actual=shown))
                    break
        return Verdict(not problems, "response_omits", problems, role="confidentiality")

    run.role = "confidentiality"  # type: ignore[attr-defined]
    return run
