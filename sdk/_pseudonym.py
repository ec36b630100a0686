"""Deterministic, format-preserving pseudonyms for personal values, keyed by a secret that stays in the process.

The same value gets the same pseudonym wherever it appears (intent, messages, tool arguments and results, row
images), so a replayed ticket is self-consistent: the customer's pseudonymous email is the one in the sandbox's
row and the one the agent looks up. The key is HMAC-SHA256's: without it a pseudonym cannot be linked back to the
value, and it never leaves the process (it is not an attribute, not a resource, not logged).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import threading
from itertools import chain
from pathlib import Path
from typing import Any

logger = logging.getLogger("passhat")

MIN_KEY_LENGTH = 16
PSEUDONYM_EMAIL_DOMAIN = "example.com"  # reserved by RFC 2606: a pseudonymous address can never reach anyone
CARD_PREFIX = "4000"  # the prefix of the card networks' test numbers
_CACHE_LIMIT = 8192

_EMAIL_PSEUDONYM = re.compile(r"([0-9a-f]{12})([0-9a-f]{4})@example\.com")
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_NON_DIGIT = re.compile(r"\D")
_NOT_ASCII_DIGITS = bytes(code for code in range(128) if not 48 <= code <= 57)


def _digits_in(value: str) -> str:
    """The digits of ``value``, in order (of any script, as ``\\d``; an ASCII string without a regex pass)."""
    if value.isascii():
        return value.encode().translate(None, _NOT_ASCII_DIGITS).decode()
    return _NON_DIGIT.sub("", value)


_COUNTRY_CODE = re.compile(r"\+(\d{1,3})(?!\d)")
_INNER_PAD = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD = bytes(byte ^ 0x5C for byte in range(256))


def default_key_file() -> Path:
    """Where a per-install key is kept when no key is configured: the user's config folder."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "passhat" / "pseudonym.key"


def _read_or_create(path: Path) -> bytes:
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_hex(32).encode("ascii")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process of this install created it first: use theirs
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as handle:
        handle.write(secret + b"\n")
    logger.warning(
        "passhat: created a pseudonym key at %s; give every replica of this agent the same secret "
        "(PASSHAT_PSEUDONYM_KEY) so a customer gets one pseudonym across the project",
        path,
    )
    return secret


class PseudonymKey:
    """The secret behind the pseudonyms: an explicit one, else a key file (created on first use).

    The file is read only when the first personal value is met, so a process that never sees one never
    touches the disk. When the file can be neither read nor created, a random key for this process is used
    (pseudonyms then agree within the process only) and a warning says so: the agent is never stopped.
    """

    def __init__(self, secret: str | bytes | None = None, *, path: str | Path | None = None) -> None:
        if secret is not None:
            raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
            if len(raw) < MIN_KEY_LENGTH:
                raise ValueError(f"a pseudonym key needs at least {MIN_KEY_LENGTH} characters, got {len(raw)}")
            self._secret: bytes | None = raw
        else:
            self._secret = None
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()

    def secret(self) -> bytes:
        """The key's bytes, loading or creating the key file the first time."""
        if self._secret is not None:
            return self._secret
        with self._lock:
            if self._secret is None:
                path = self.path or default_key_file()
                try:
                    loaded = _read_or_create(path)
                    if len(loaded) < MIN_KEY_LENGTH:
                        raise ValueError(f"the key in {path} is shorter than {MIN_KEY_LENGTH} characters")
                    self._secret = loaded
                except (OSError, ValueError) as exc:
                    logger.warning(
                        "passhat: no pseudonym key (%s); using a random key for this process only: set "
                        "PASSHAT_PSEUDONYM_KEY so pseudonyms agree across processes",
                        exc,
                    )
                    self._secret = secrets.token_bytes(32)
            return self._secret


class Pseudonyms:
    """Makes the pseudonym of each kind of personal value; results are cached (the hot path meets repeats)."""

    def __init__(self, key: PseudonymKey) -> None:
        self.key = key
        self._cache: dict[tuple[str, str], str] = {}
        self._keyed: tuple[Any, Any] | None = None

    def _digest(self, kind: str, value: str) -> bytes:
        """HMAC-SHA256 of ``kind\0value`` (RFC 2104), from SHA-256 states keyed once: each value then costs two
        hash copies instead of setting up an HMAC (a third of the time; the same bytes as ``hmac.digest``)."""
        if self._keyed is None:
            secret = self.key.secret()
            if len(secret) > 64:
                secret = hashlib.sha256(secret).digest()
            block = secret.ljust(64, b"\0")
            self._keyed = (hashlib.sha256(block.translate(_INNER_PAD)), hashlib.sha256(block.translate(_OUTER_PAD)))
        inner, outer = self._keyed[0].copy(), self._keyed[1].copy()
        inner.update(f"{kind}\0{value}".encode())
        outer.update(inner.digest())
        digest: bytes = outer.digest()
        return digest

    def _digits(self, kind: str, value: str, count: int) -> str:
        number = int.from_bytes(self._digest(kind, value), "big")
        text = str(number).zfill(77)  # a 256-bit number has 77 decimal digits
        return text[-count:] if count <= 70 else (text * (count // 70 + 1))[:count]

    def of(self, kind: str, value: str) -> str:
        """The pseudonym of ``value`` detected as ``kind`` (email, phone, card, iban, ssn, or a user pattern)."""
        cached = self._cache.get((kind, value))
        if cached is not None:
            return cached
        make = _MAKERS.get(kind, Pseudonyms.shaped)
        result = make(self, value)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[(kind, value)] = result
        return result

    def is_pseudonym(self, kind: str, value: str) -> bool:
        """Whether ``value`` is already a pseudonym made with this key (kept as it is, not pseudonymised again)."""
        if kind == "email":
            found = _EMAIL_PSEUDONYM.fullmatch(value)
            return found is not None and self._digest("email-tag", found.group(1)).hex()[:4] == found.group(2)
        if kind == "card":
            digits = _digits_in(value)
            if not digits.startswith(CARD_PREFIX) or len(digits) < 13:
                return False
            body = digits[len(CARD_PREFIX) : -3]
            return self._digits("card-tag", body, 2) == digits[-3:-1]
        return False

    def email(self, value: str) -> str:
        """A valid address at a reserved domain; case and surrounding spaces do not change it."""
        local = self._digest("email", value.strip().lower()).hex()[:12]
        tag = self._digest("email-tag", local).hex()[:4]
        return f"{local}{tag}@{PSEUDONYM_EMAIL_DOMAIN}"

    def phone(self, value: str) -> str:
        """The same layout and length; a leading ``+`` country code kept, every other digit replaced."""
        digits = _digits_in(value)
        keep = 1
        if value.startswith("+"):
            country = _COUNTRY_CODE.match(value)
            keep = len(country.group(1)) if country else 1
        fresh = digits[:keep] + self._digits("phone", digits, len(digits) - keep)
        return _refill(value, fresh)

    def card(self, value: str) -> str:
        """A test-range card number of the same length and grouping that passes the Luhn check."""
        digits = _digits_in(value)
        body = self._digits("card", digits, len(digits) - len(CARD_PREFIX) - 3)
        without_check = CARD_PREFIX + body + self._digits("card-tag", body, 2)
        return _refill(value, without_check + _luhn_digit(without_check))

    def iban(self, value: str) -> str:
        """An IBAN of the same country, length and spacing whose mod-97 check digits are right."""
        compact = value.replace(" ", "").upper()
        country, bban = compact[:2], compact[4:]
        stream = self._digits("iban", compact, 2 * len(bban))
        fresh = "".join(
            _LETTERS[int(stream[2 * i : 2 * i + 2]) % 26] if char.isalpha() else stream[2 * i + 1]
            for i, char in enumerate(bban)
        )
        check = 98 - _mod97(fresh + country + "00")
        return _refill(value, f"{country}{check:02d}{fresh}", alphanumeric=True)

    def ssn(self, value: str) -> str:
        """``9dd-dd-dddd``: the shape of a US SSN in the 9xx area, which is never issued as one."""
        digits = self._digits("ssn", _digits_in(value), 8)
        return f"9{digits[:2]}-{digits[2:4]}-{digits[4:]}"

    def shaped(self, value: str) -> str:
        """Letters for letters (case kept), digits for digits, everything else kept: for user patterns."""
        stream = self._digits("pattern", value, 2 * len(value))
        out = []
        for index, char in enumerate(value):
            pick = int(stream[2 * index : 2 * index + 2])
            if char.isdigit():
                out.append(str(pick % 10))
            elif char.isalpha() and char.isascii():
                letter = _LETTERS[pick % 26]
                out.append(letter if char.isupper() else letter.lower())
            else:
                out.append(char)
        return "".join(out)


_MAKERS = {
    "email": Pseudonyms.email,
    "phone": Pseudonyms.phone,
    "card": Pseudonyms.card,
    "iban": Pseudonyms.iban,
    "ssn": Pseudonyms.ssn,
}


_DIGIT_MARKS = str.maketrans(dict.fromkeys("0123456789", "\0"))


def _refill(template: str, fresh: str, *, alphanumeric: bool = False) -> str:
    """``template`` with its digits (or letters and digits) replaced, in order, by the characters of ``fresh``."""
    if not alphanumeric and template.isascii() and "\0" not in template:
        pieces = template.translate(_DIGIT_MARKS).split("\0")
        if len(pieces) == len(fresh) + 1:
            return "".join(chain.from_iterable(zip(pieces, fresh, strict=False))) + pieces[-1]
    replaced = iter(fresh)
    out = []
    for char in template:
        if char.isdigit() or (alphanumeric and char.isalnum()):
            out.append(next(replaced))
        else:
            out.append(char)
    return "".join(out)


def _luhn_digit(digits: str) -> str:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 0:  # these positions are doubled once the check digit is appended
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return str((10 - total % 10) % 10)


def _mod97(text: str) -> int:
    return int("".join(str(int(char, 36)) for char in text)) % 97
