"""Response checks: a required disclosure must be said; a confidential value must never be."""

from __future__ import annotations

import pytest

from passhat.checks import CheckContext, StateDiff, normalize_text, response_contains, response_omits


def _said(*messages: str, final: str | None = None) -> CheckContext:
    return CheckContext(
        diff=StateDiff(),
        agent_messages=list(messages),
        final_response=messages[-1] if final is None and messages else final or "",
    )


@pytest.mark.parametrize(
    ("phrase", "response"),
    [
        ("refund of $1,234.50", "I have issued a REFUND OF 1234.5 to your card."),
        ("1234.5", "Your refund of $1,234.50 is on its way."),
        ("$45.50", "We refunded 45.5 USD."),
        ("5 to 7 business days", "It takes 5  to\n7 business days."),
        ("customer’s consent", "with the customer's consent"),
        ("order O-1001", "Order o-1001 has been refunded."),
    ],
)
def test_response_contains_is_tolerant_of_case_spacing_and_number_format(phrase: str, response: str) -> None:
    verdict = response_contains(phrase)(_said(response))
    assert verdict.passed, verdict.explanation


@pytest.mark.parametrize(
    ("phrase", "response"),
    [
        ("$45", "We refunded $145 today."),
        ("$45", "We refunded $45.50 today."),
        ("45.5", "We refunded 45.55."),
        ("refund", "no refunds are possible"),
        ("7 business days", "17 business days"),
    ],
)
def test_response_contains_does_not_match_a_different_number_or_word(phrase: str, response: str) -> None:
    assert not response_contains(phrase)(_said(response)).passed


def test_missing_disclosure_names_the_phrase_and_quotes_the_response() -> None:
    verdict = response_contains("5 to 7 business days")(_said("Your refund has been issued."))
    [problem] = verdict.diagnostics
    assert problem.check == "response_contains"
    assert problem.expected == "5 to 7 business days"
    assert problem.message == (
        "the final response does not say '5 to 7 business days'; it says: Your refund has been issued."
    )


def test_only_the_final_response_counts_unless_anywhere() -> None:
    ctx = _said("Refunds take 5 to 7 business days.", "Anything else?")
    assert not response_contains("5 to 7 business days")(ctx).passed
    assert response_contains("5 to 7 business days", anywhere=True)(ctx).passed


def test_final_response_falls_back_to_the_last_agent_message() -> None:
    ctx = CheckContext(diff=StateDiff(), agent_messages=["Refund issued: $12.00."])
    assert response_contains("12")(ctx).passed


def test_patterns_are_case_insensitive_regular_expressions() -> None:
    ctx = _said("Reference: RF-20931. Done.")
    assert response_contains(patterns=[r"\brf-\d{5}\b"])(ctx).passed
    verdict = response_contains(patterns=[r"case #\d+"])(ctx)
    assert verdict.diagnostics[0].expected == r"case #\d+"


def test_response_omits_checks_every_agent_message() -> None:
    ctx = _said("Alan's email is alan@example.com, sorry.", "Your refund is done.")
    verdict = response_omits("ALAN@example.com", "C-2")(ctx)
    [problem] = verdict.diagnostics
    assert problem.message.startswith("agent message 1 reveals 'ALAN@example.com': Alan's email is")


@pytest.mark.parametrize("said", ["card 4111 1111 1111 1111", "card 4111-1111-1111-1111", "card 4111111111111111"])
def test_response_omits_matches_digit_identifiers_with_any_separators(said: str) -> None:
    assert not response_omits("4111 1111 1111 1111")(_said(said)).passed


def test_response_omits_passes_when_nothing_leaks() -> None:
    ctx = _said("Your card ending 1111 was refunded $45.50.")
    assert response_omits("4111 1111 1111 1111", "alan@example.com", 12.75)(ctx).passed


def test_response_omits_matches_numbers_in_any_format() -> None:
    assert not response_omits(1234.5)(_said("The other balance is $1,234.50")).passed


def test_normalize_text_folds_numbers_currency_and_case() -> None:
    assert normalize_text("Refund  of $1,234.50\nUSD") == "refund of 1234.5 usd"


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: response_contains(), ValueError, "at least one phrase or pattern"),
        (lambda: response_contains(""), TypeError, "non-empty strings"),
        (lambda: response_contains(patterns=["(unclosed"]), ValueError, "not a valid regular expression"),
        (lambda: response_omits(), ValueError, "at least one value"),
        (lambda: response_omits(None), TypeError, "non-empty"),
    ],
)
def test_bad_response_check_arguments_are_one_clear_error(build: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build()  # type: ignore[operator]


def test_numbers_with_leading_zeros_are_identifiers_not_amounts() -> None:
    assert not response_contains("agent 7")(_said("Ask for agent 007.")).passed
    assert response_contains("agent 007")(_said("Ask for Agent 007.")).passed
