"""The email passhat sends (an alert, a report): RFC 5322 headers, and a subject folded so every reader shows it
as it was written.

CPython's folder (3.11) ends a line with a space when it moves an encoded word (any non-ASCII text, such as the
"±" of an interval) to the next one, so unfolded the subject reads "[4.7, 44.2]  ±20"; it can also begin the
subject with the fold. passhat folds its subjects itself: ASCII words as they are, other runs of words as
RFC 2047 encoded words (UTF-8, Q), lines broken only between words.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from email.message import EmailMessage
from email.policy import Policy
from email.utils import formatdate, make_msgid, parseaddr

#: RFC 5322: a line SHOULD be at most 78 characters; RFC 2047: an encoded word at most 75.
_LINE = 78
_ENCODED_WORD = 75
_OPEN, _CLOSE = "=?utf-8?q?", "?="
#: What an encoded word may hold as it is anywhere in a header (RFC 2047, section 5 (3)).
_Q_SAFE = frozenset(string.ascii_letters + string.digits + "!*+-/")


def _q(char: str) -> str:
    if char == " ":
        return "_"
    return char if char in _Q_SAFE else "".join(f"={byte:02X}" for byte in char.encode("utf-8"))


def _encoded_words(text: str) -> list[str]:
    """``text`` as encoded words of at most 75 characters, never splitting a character across two."""
    room = _ENCODED_WORD - len(_OPEN) - len(_CLOSE)
    words: list[str] = []
    current = ""
    for char in text:
        encoded = _q(char)
        if current and len(current) + len(encoded) > room:
            words.append(_OPEN + current + _CLOSE)
            current = ""
        current += encoded
    if current:
        words.append(_OPEN + current + _CLOSE)
    return words


def _plain(word: str) -> bool:
    """A word that goes as it is: printable ASCII that fits a line and cannot be read as an encoded word."""
    return word.isascii() and word.isprintable() and len(word) < _LINE and "=?" not in word


def _tokens(text: str) -> list[str]:
    """The header's words: plain ones as they are, each run of the others as encoded words (a reader ignores the
    space between two encoded words, so the run's own spaces are encoded inside)."""
    tokens: list[str] = []
    run: list[str] = []
    for word in text.split():
        if _plain(word):
            tokens += _encoded_words(" ".join(run)) if run else []
            run = []
            tokens.append(word)
        else:
            run.append(word)
    return tokens + (_encoded_words(" ".join(run)) if run else [])


def fold_header(name: str, value: str, linesep: str = "\r\n") -> str:
    """``name: value`` as header lines of at most 78 characters where the words allow, broken between words.

    Whitespace runs become one space (a header is one line of text)."""
    lines = [f"{name}:"]
    for number, token in enumerate(_tokens(value)):
        if number and len(lines[-1]) + 1 + len(token) > _LINE:
            lines.append("")
        lines[-1] += " " + token
    return linesep.join(lines) + linesep


class FoldedHeader(str):
    """A header value that folds itself with `fold_header` (the email policy calls ``fold`` of a value that has
    a ``name``); it reads as the plain text it holds."""

    name: str

    def __new__(cls, name: str, value: str) -> FoldedHeader:
        header = super().__new__(cls, " ".join(value.split()))
        header.name = name
        return header

    def fold(self, *, policy: Policy) -> str:
        return fold_header(self.name, str(self), policy.linesep)


def _domain(sender: str) -> str:
    """The domain of the From address, for the Message-ID ("localhost" when it has none)."""
    domain = parseaddr(sender)[1].rpartition("@")[2].strip()
    return domain or "localhost"


def finish_message(message: EmailMessage) -> EmailMessage:
    """Give a message the headers every email of passhat's has, where it lacks them: a Date (now, UTC) and a
    Message-ID in the domain of its From address; and its Subject folded by passhat (`FoldedHeader`).

    Called once a message is built and again before each try to send it: a retry keeps the Date and Message-ID
    of the first try, so it is the same message."""
    if "Date" not in message:
        message["Date"] = formatdate(usegmt=True)
    if "Message-ID" not in message:
        message["Message-ID"] = make_msgid(domain=_domain(str(message.get("From", ""))))
    subject = message.get("Subject")
    if subject is not None and not isinstance(subject, FoldedHeader):
        message.replace_header("Subject", FoldedHeader("Subject", str(subject)))
    return message


def mail_message(subject: str, sender: str, recipients: Sequence[str]) -> EmailMessage:
    """A new message with its headers: Subject (folded by passhat), From, To, Date (now, UTC) and a Message-ID
    in the sender's domain. Build it once per notice or report: its retries then carry the same Message-ID."""
    message = EmailMessage()
    message["Subject"] = FoldedHeader("Subject", subject)
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    return finish_message(message)
