"""Nothing matching a redaction pattern leaves the process: checked on the exported bytes; blanking mode."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given
from hypothesis import strategies as st

import passhat
from passhat.testing import OtlpReceiver

SECRETS = {
    "email": "jane.doe@example.com",
    "card": "4111 1111 1111 1111",
    "iban": "GB82 WEST 1234 5698 7654 32",
    "ssn": "123-45-6789",
    "phone": "+1 (415) 555-0132",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail jane.doe@example.com", "mail [REDACTED:email]"),
        ("card 4111-1111-1111-1111", "card [REDACTED:card]"),
        ("not a card 4111111111111112", "not a card 4111111111111112"),
        ("iban GB82WEST12345698765432", "iban [REDACTED:iban]"),
        ("bad iban GB00WEST12345698765432", "bad iban GB00WEST12345698765432"),
        ("ssn 123-45-6789", "ssn [REDACTED:ssn]"),
        ("call 415.555.0132 or +44 20 7946 0958", "call [REDACTED:phone] or [REDACTED:phone]"),
        ("shipped 2024-01-15 10:30, order ORD-1001-2002", "shipped 2024-01-15 10:30, order ORD-1001-2002"),
    ],
)
def test_builtin_patterns_are_blanked_in_blank_mode(text: str, expected: str) -> None:
    assert passhat.Redactor(mode="blank").text(text) == expected


# A one-digit group after the country code: French, Dutch, Australian, Irish and Japanese numbers passed through
# in clear (every group had to be two to four digits).
ONE_DIGIT_AREA = ["+33 6 12 34 56 78", "+33 1 23 45 67 89", "+31 6 1234 5678", "+61 4 1234 5678", "+353 1 234 5678",
                  "+81 3-1234-5678", "+33 (0)6 12 34 56 78"]  # fmt: skip


@pytest.mark.parametrize("phone", ONE_DIGIT_AREA)
def test_a_phone_with_a_one_digit_group_after_its_country_code_is_found(phone: str) -> None:
    assert passhat.Redactor(mode="blank").text(f"call me on {phone} please") == "call me on [REDACTED:phone] please"
    pseudonym = passhat.Redactor.build(key="a-secret-of-16-chars-or-more").text(phone)
    assert pseudonym != phone
    # The same layout, the country code kept: only the digits after it change.
    code = phone.split(" ")[0]
    assert pseudonym.startswith(code + " ") and [c.isdigit() for c in pseudonym] == [c.isdigit() for c in phone]


def test_user_patterns_and_callback_run_after_the_builtins() -> None:
    redactor = passhat.Redactor.build(
        patterns=[r"ACME-\d+"], callback=lambda s: s.replace("Jane", "[name]"), mode="blank"
    )
    assert redactor.text("Jane, ACME-42, jane@acme.io") == "[name], [REDACTED], [REDACTED:email]"


def test_the_exported_bytes_contain_none_of_the_planted_secrets(receiver: OtlpReceiver) -> None:
    instance = passhat.configure(
        endpoint=receiver.url,
        capture_content=True,
        redact_patterns=[r"VIP-\d{4}"],
        export_interval=0.05,
        make_global=False,
    )
    planted = " ".join(SECRETS.values()) + " VIP-1234"

    @passhat.tool
    def update_customer(note: str) -> dict[str, str]:
        return {"note": note}

    from passhat._runtime import set_current

    previous = set_current(instance)
    try:
        with (
            pytest.raises(RuntimeError),
            instance.ticket("T-1", task_type="refund", intent={"contact": planted}) as t,
        ):
            t.customer_says(planted)
            t.agent_says(planted)
            update_customer(planted)
            instance.record_write("customers", {"id": 1}, before={"note": "old"}, after={"note": planted})
            raise RuntimeError(planted)
    finally:
        set_current(previous)
    assert instance.flush(timeout=10)
    receiver.wait_for_spans(2)
    instance.shutdown()
    wire = b"".join(gzip.decompress(request.body) for request in receiver.requests)
    assert instance.redactor.text(SECRETS["email"]).encode() in wire  # pseudonymised, not dropped
    for secret in [*SECRETS.values(), "VIP-1234"]:
        assert secret.encode() not in wire, secret
    assert b"4111111111111111" not in wire


def test_a_failing_callback_withholds_the_value_instead_of_crashing_the_agent() -> None:
    def broken(text: str) -> str:
        raise RuntimeError("bug in the hook")

    redactor = passhat.Redactor.build(callback=broken)
    assert redactor.text("anything at all") == "[REDACTED:callback_error]"


def _luhn_complete(prefix: str) -> str:
    """``prefix`` plus the check digit that makes it pass the Luhn test."""
    for digit in "0123456789":
        candidate = prefix + digit
        total = 0
        for index, char in enumerate(reversed(candidate)):
            value = int(char) * (2 if index % 2 else 1)
            total += value - 9 if value > 9 else value
        if total % 10 == 0:
            return candidate
    raise AssertionError("unreachable: one check digit always fits")


@given(st.text(alphabet="0123456789", min_size=14, max_size=14), st.sampled_from(["", " ", "-"]))
def test_any_luhn_valid_card_number_is_redacted_whatever_its_separators(prefix: str, separator: str) -> None:
    number = _luhn_complete("4" + prefix)
    written = separator.join(number[i : i + 4] for i in range(0, 16, 4))
    assert passhat.Redactor(mode="blank").text(f"pay with {written} today") == "pay with [REDACTED:card] today"


@given(
    st.from_regex(r"[a-z][a-z0-9._]{0,15}", fullmatch=True),
    st.from_regex(r"[a-z][a-z0-9-]{0,10}\.(com|org|io|co\.uk)", fullmatch=True),
)
def test_any_email_address_is_redacted(local: str, domain: str) -> None:
    redacted = passhat.Redactor(mode="blank").text(f"write to {local}@{domain} please")
    assert redacted == "write to [REDACTED:email] please"


_PIECES = st.sampled_from(
    [
        "4111 1111 1111 1111",
        "+44 20 7946 0958",
        "(020) 7946-0958",
        "078-05-1120",
        "GB82 WEST 1234 5698 7654 32",
        "ada@clinic.org",
        "pyd_ai_44edbfae047e",
        "2026-12-04",
        " ",
        "-",
        "(",
        ")",
        "+",
        ".",
        "_",
        "x",
        "é",
        "\n",
        "٤١١١ ١١١١ ١١١١ ١١١١",  # a card in Arabic-Indic digits: the patterns' \d finds it
        "０７８-０５-１１２０",  # fullwidth digits
        "?",
        "%",
        "The visit is on Wednesday; ",
    ]
)


@given(st.lists(st.one_of(_PIECES, st.text(alphabet="0123456789 -+().@abXYZ_%?", max_size=12)), max_size=12))
def test_the_scan_that_skips_patterns_never_changes_what_they_find(pieces: list[str]) -> None:
    """The built-in numeric patterns run only on the stretches where a digit run lies, the email's only around each
    @: every string is redacted as when every pattern runs on the whole of it."""
    import passhat._redact as redact

    text = "".join(pieces)
    fast = passhat.Redactor(key=passhat.PseudonymKey("a-test-key-of-sixteen-chars"), mode="blank").text(text)
    rules = tuple(redact._Rule(r.label, r.pattern, r.accept) for r in redact.BUILTIN_RULES)  # needs nothing
    slow = passhat.Redactor(key=passhat.PseudonymKey("a-test-key-of-sixteen-chars"), mode="blank")
    object.__setattr__(slow, "_rules", rules)
    object.__setattr__(slow, "_only_regions", False)  # every rule on the whole string, nothing remembered
    assert slow.text(text) == fast


@given(
    st.lists(st.one_of(_PIECES, st.text(alphabet="0123456789 -+().@abXYZ_?é٤", max_size=12)), max_size=12),
    st.integers(0, 40),
    st.integers(0, 200),
)
def test_the_digit_run_filter_finds_every_run_the_pattern_finds(pieces: list[str], start: int, end: int) -> None:
    """``find_digit_run`` answers ``DIGIT_RUN.search`` without the regex engine: exactly for ASCII, and never
    missing one otherwise (a non-ASCII character counts as a digit); the stretch it gives holds the match."""
    from passhat._stretches import DIGIT_RUN, find_digit_run, has_digit_run, run_classes

    text = "".join(pieces)
    end = min(end, len(text))
    match = DIGIT_RUN.search(text, start, end)
    classes = run_classes(text)
    stretch = find_digit_run(text, classes, start, end)
    if match is not None:
        # The first stretch holds the first match; with a non-ASCII character counted as a digit, an earlier
        # stretch may be one the pattern does not match in, and a later one holds it.
        found = stretch
        while found is not None and found[1] <= match.start() and not text.isascii():
            found = find_digit_run(text, classes, found[1], end)
        assert found is not None and found[0] <= match.start() and match.end() <= found[1]
    elif text.isascii():
        assert stretch is None
    assert has_digit_run(text) == (DIGIT_RUN.search(text) is not None) or not text.isascii()
