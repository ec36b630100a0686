"""Personal values become deterministic, format-preserving pseudonyms keyed by a secret that stays in the process."""

from __future__ import annotations

import gzip
import json
import re
import stat
import subprocess
import sys
from email.headerregistry import Address
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Integer, String, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import passhat
from passhat.testing import OtlpReceiver, capture

KEY = "team-a-secret-pseudonym-key"
OTHER_KEY = "team-b-secret-pseudonym-key"
EMAIL = "jane.doe@acme-mail.com"
PHONE = "+1 (415) 555-0132"
CARD = "4111 1111 1111 1111"
IBAN = "GB82 WEST 1234 5698 7654 32"


def luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def iban_ok(iban: str) -> bool:
    compact = iban.replace(" ", "")
    return int("".join(str(int(c, 36)) for c in compact[4:] + compact[:4])) % 97 == 1


def redactor(key: str = KEY) -> passhat.Redactor:
    return passhat.Redactor.build(key=key)


def test_the_same_value_gets_the_same_pseudonym_under_one_key() -> None:
    assert redactor().text(f"mail {EMAIL}") == redactor().text(f"mail {EMAIL}")
    assert redactor().text(EMAIL) != EMAIL


def test_different_keys_give_different_pseudonyms() -> None:
    for value in (EMAIL, PHONE, CARD, IBAN):
        assert redactor(KEY).text(value) != redactor(OTHER_KEY).text(value), value


def test_an_email_pseudonym_is_a_valid_address_that_ignores_case() -> None:
    pseudonym = redactor().text(EMAIL)
    address = Address(addr_spec=pseudonym)
    assert address.domain == "example.com" and address.username
    assert redactor().text(EMAIL.upper()) == pseudonym


def test_a_pseudonym_met_again_is_kept_as_it_is() -> None:
    once = redactor().text(f"{EMAIL} paid with {CARD}")
    assert redactor().text(once) == once


def test_a_card_pseudonym_is_a_luhn_valid_test_number_with_the_same_grouping() -> None:
    pseudonym = redactor().text(CARD)
    digits = pseudonym.replace(" ", "")
    assert re.fullmatch(r"\d{4} \d{4} \d{4} \d{4}", pseudonym)
    assert luhn_ok(digits) and digits.startswith("4000") and digits != CARD.replace(" ", "")


@given(st.text(alphabet="0123456789", min_size=11, max_size=17))
def test_any_detected_card_number_becomes_a_luhn_valid_one_of_its_length(body: str) -> None:
    number = next(c for c in (f"5{body}{d}" for d in "0123456789") if luhn_ok(c))
    pseudonym = redactor().text(number)
    assert pseudonym != number and len(pseudonym) == len(number) and luhn_ok(pseudonym)


def test_a_phone_pseudonym_keeps_its_layout_and_country_code() -> None:
    pseudonym = redactor().text(PHONE)
    assert re.fullmatch(r"\+1 \(\d{3}\) \d{3}-\d{4}", pseudonym) and pseudonym != PHONE


def test_an_iban_pseudonym_keeps_its_country_and_passes_the_checksum() -> None:
    pseudonym = redactor().text(IBAN)
    assert pseudonym.startswith("GB") and len(pseudonym) == len(IBAN) and iban_ok(pseudonym) and pseudonym != IBAN


def test_a_kind_or_a_field_can_be_blanked_instead() -> None:
    chosen = passhat.Redactor.build(key=KEY, blank=["card", "notes"])
    assert chosen.text(f"{EMAIL} {CARD}") == f"{redactor().text(EMAIL)} [REDACTED:card]"
    assert chosen.value({"notes": f"call {PHONE}", "contact": PHONE}) == {
        "notes": "call [REDACTED:phone]",
        "contact": redactor().text(PHONE),
    }


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String)
    phone: Mapped[str] = mapped_column(String)


def test_one_ticket_carries_one_pseudonym_in_intent_messages_tools_and_rows(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'app.db'}")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(Customer(id=1, email=EMAIL, phone=PHONE))
        session.commit()
    handle = passhat.instrument_sqlalchemy(engine)

    @passhat.tool
    def find_customer(email: str) -> dict[str, str]:
        with Session(engine) as session:
            customer = session.scalars(select(Customer).where(Customer.email == email)).one()
            customer.phone = "+1 (415) 555-0199"
            session.commit()
            return {"email": customer.email}

    try:
        with capture(pseudonym_key=KEY) as spans:
            with passhat.ticket("T-1", task_type="change_phone", intent={"email": EMAIL}) as ticket:
                ticket.customer_says(f"I am {EMAIL}")
                find_customer(EMAIL)
            pseudonym = spans.passhat.redactor.text(EMAIL)
            root = spans.one("invoke_agent")
            tool = spans.tools()[0]
            (read,) = spans.state_reads()
            (write,) = spans.state_writes()
    finally:
        handle.uninstrument()
    assert json.loads(str(root.attributes["passhat.intent"])) == {"email": pseudonym}  # type: ignore[index]
    assert root.events[0].attributes == {"passhat.message.content": f"I am {pseudonym}"}
    assert json.loads(str(tool.attributes["gen_ai.tool.call.arguments"])) == {"email": pseudonym}  # type: ignore[index]
    assert json.loads(str(tool.attributes["gen_ai.tool.call.result"])) == {"email": pseudonym}  # type: ignore[index]
    assert read["row"]["email"] == pseudonym and read["row"]["phone"] == redactor().text(PHONE)
    assert write["before"] == {"phone": redactor().text(PHONE)}


def test_the_key_and_the_clear_values_never_reach_the_exported_bytes(receiver: OtlpReceiver) -> None:
    instance = passhat.configure(
        endpoint=receiver.url, capture_content=True, pseudonym_key=KEY, export_interval=0.05, make_global=False
    )
    with instance.ticket("T-1", task_type="refund", intent={"email": EMAIL, "card": CARD}) as ticket:
        ticket.customer_says(f"{EMAIL} {PHONE} {CARD} {IBAN}")
    assert instance.flush(timeout=10)
    receiver.wait_for_spans(1)
    instance.shutdown()
    wire = b"".join(gzip.decompress(request.body) for request in receiver.requests)
    assert instance.redactor.text(EMAIL).encode() in wire
    for clear in (EMAIL, PHONE, CARD, CARD.replace(" ", ""), IBAN, KEY):
        assert clear.encode() not in wire, clear


def test_personal_data_used_as_a_dict_key_is_pseudonymised_too(receiver: OtlpReceiver) -> None:
    """A tool result keyed by email, an intent keyed by phone, a row image keyed by card: the keys leave redacted."""
    instance = passhat.configure(
        endpoint=receiver.url, capture_content=True, pseudonym_key=KEY, export_interval=0.05, make_global=False
    )

    @instance.tool
    def balances(emails: list[str]) -> dict[str, dict[str, int]]:
        return {email: {IBAN: 10} for email in emails}

    with instance.ticket("T-1", task_type="refund", intent={PHONE: "callback"}):
        balances([EMAIL])
        instance.record_write("cards", 1, after={CARD: "blocked", "status": "closed"})
    assert instance.flush(timeout=10)
    receiver.wait_for_spans(2)
    instance.shutdown()
    wire = b"".join(gzip.decompress(request.body) for request in receiver.requests)
    for clear in (EMAIL, PHONE, CARD, IBAN):
        assert clear.encode() not in wire, clear
    (tool,) = [span for span in receiver.spans if span.name == "execute_tool balances"]
    pseudonym = instance.redactor.text(EMAIL)
    assert json.loads(tool.attributes["gen_ai.tool.call.result"]) == {pseudonym: {instance.redactor.text(IBAN): 10}}
    assert b'"status"' in wire  # a key with no personal value in it is kept as it is


def test_without_a_configured_key_one_key_file_is_created_privately_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PASSHAT_PSEUDONYM_KEY", raising=False)
    key_file = tmp_path / "keys" / "pseudonym.key"
    first = passhat.Redactor.build(key=passhat.PseudonymKey(path=key_file)).text(EMAIL)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    monkeypatch.setenv("PASSHAT_PSEUDONYM_KEY_FILE", str(key_file))
    with capture() as spans:
        assert spans.passhat.redactor.text(EMAIL) == first


def test_a_short_key_is_one_clear_error() -> None:
    with pytest.raises(passhat.ConfigurationError, match="at least 16 characters") as raised:
        passhat.configure(pseudonym_key="short", send=False, make_global=False)
    assert "short" not in str(raised.value)  # a wrong secret is still a secret: the message does not repeat it


def test_a_short_key_in_the_environment_neither_breaks_the_import_nor_a_tool_before_configure() -> None:
    script = """
import passhat

@passhat.tool
def find(email: str) -> str:
    return email

assert find("jane.doe@acme-mail.com") == "jane.doe@acme-mail.com"
assert "jane.doe" not in passhat.current().redactor.text("mail jane.doe@acme-mail.com")
try:
    passhat.configure(send=False)
except passhat.ConfigurationError as error:
    print(error)
"""
    env = {"PASSHAT_PSEUDONYM_KEY": "short", "PATH": "", "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "PASSHAT_PSEUDONYM_KEY is not usable" in done.stderr
    assert "passhat: PASSHAT_PSEUDONYM_KEY=<5 characters, not shown> is not valid" in done.stdout
    assert "short" not in done.stdout + done.stderr  # the (wrong) secret itself is never printed
