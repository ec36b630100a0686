"""Every span passhat exports is redacted, whoever made it: each convention's message attributes and events, JSON
held in a string value by value, the same keyed pseudonyms as the SDK's own, blanks where configured; passhat's
own spans and the ticket's identifiers pass as they are."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

import passhat
from passhat._span_redaction import RedactingSpanExporter
from passhat.testing import OtlpReceiver

EMAIL = "ada.lovelace@clinic-mail.org"
PHONE = "+44 20 7946 0958"
KEY_TEXT = "a-test-key-of-sixteen-chars"
KEY = passhat.PseudonymKey(KEY_TEXT)


@pytest.fixture
def redactor() -> passhat.Redactor:
    return passhat.Redactor(key=KEY)


def _exported(redactor: passhat.Redactor, write: object) -> Iterator[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(RedactingSpanExporter(memory, redactor)))
    tracer = provider.get_tracer("some.framework")
    with tracer.start_as_current_span("framework span") as span:
        write(span)  # type: ignore[operator]
    provider.shutdown()
    yield from memory.get_finished_spans()


def _one(redactor: passhat.Redactor, attributes: dict[str, object]) -> ReadableSpan:
    [span] = _exported(redactor, lambda s: s.set_attributes(attributes))
    return span


def test_every_convention_s_content_attributes_are_pseudonymised(redactor: passhat.Redactor) -> None:
    said = f"I am {EMAIL}, phone {PHONE}"
    attributes: dict[str, object] = {
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": said}]}]),
        "pydantic_ai.all_messages": json.dumps([{"role": "user", "parts": [{"content": said}]}]),
        "gen_ai.tool.call.arguments": json.dumps({"email": EMAIL}),
        "gen_ai.tool.call.result": said,
        "input.value": json.dumps({"messages": [{"content": said}]}),  # OpenInference
        "output.value": said,
        "llm.input_messages.0.message.content": said,
        "gen_ai.prompt.0.content": said,  # OpenLLMetry
        "gen_ai.completion.0.content": said,
        "traceloop.entity.input": json.dumps({"inputs": {"email": EMAIL}, "kwargs": {}}),
        "traceloop.entity.output": json.dumps({"outputs": said}),
        "tags": [said, "kept"],
    }
    span = _one(redactor, attributes)
    assert span.attributes is not None
    text = json.dumps(dict(span.attributes))
    assert EMAIL not in text and PHONE not in text
    pseudonym = redactor.text(EMAIL)
    assert json.loads(str(span.attributes["gen_ai.tool.call.arguments"])) == {"email": pseudonym}
    assert span.attributes["output.value"] == redactor.text(said)  # the SDK's own pseudonyms: replay still links
    assert span.attributes["tags"] == (redactor.text(said), "kept")


def test_json_inside_json_is_redacted_value_by_value(redactor: passhat.Redactor) -> None:
    inner = json.dumps({"email": EMAIL, "note": "call me"})
    outer = json.dumps([{"role": "assistant", "tool_calls": [{"function": {"arguments": inner}}]}])
    span = _one(redactor, {"llm.output_messages": outer})
    assert span.attributes is not None
    [message] = json.loads(str(span.attributes["llm.output_messages"]))
    arguments = json.loads(message["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"email": redactor.text(EMAIL), "note": "call me"}


def test_events_links_and_status_messages_are_redacted(redactor: passhat.Redactor) -> None:
    def write(span: object) -> None:
        span.add_event("gen_ai.user.message", {"content": f"I am {EMAIL}"})  # type: ignore[attr-defined]
        span.add_event("gen_ai.choice", {"message": json.dumps({"content": PHONE})})  # type: ignore[attr-defined]
        span.set_status(Status(StatusCode.ERROR, f"no patient {EMAIL}"))  # type: ignore[attr-defined]

    [span] = _exported(redactor, write)
    dumped = json.dumps([dict(e.attributes or {}) for e in span.events]) + str(span.status.description)
    assert EMAIL not in dumped and PHONE not in dumped
    assert span.status.description == f"no patient {redactor.text(EMAIL)}"


def test_blank_mode_and_blanked_fields_hold_for_framework_spans() -> None:
    blank = passhat.Redactor(key=KEY, mode="blank")
    span = _one(blank, {"gen_ai.tool.call.arguments": json.dumps({"email": EMAIL})})
    assert span.attributes is not None
    assert json.loads(str(span.attributes["gen_ai.tool.call.arguments"])) == {"email": "[REDACTED:email]"}
    by_field = passhat.Redactor(key=KEY, blank=frozenset({"notes"}))
    span = _one(by_field, {"input.value": json.dumps({"notes": f"phone {PHONE}", "email": EMAIL})})
    assert span.attributes is not None
    value = json.loads(str(span.attributes["input.value"]))
    assert value == {"notes": "phone [REDACTED:phone]", "email": by_field.text(EMAIL)}


def test_user_patterns_and_callbacks_apply_to_framework_spans() -> None:
    custom = passhat.Redactor.build(patterns=[r"MRN-\w+"], callback=lambda s: s.replace("secret", "******"), key=KEY)
    span = _one(custom, {"output.value": "patient MRN-ABC has a secret"})
    assert span.attributes is not None
    assert "MRN-ABC" not in str(span.attributes["output.value"])
    assert "secret" not in str(span.attributes["output.value"])


def test_the_ticket_s_identifiers_and_plain_values_are_kept(redactor: passhat.Redactor) -> None:
    attributes: dict[str, object] = {
        "passhat.ticket.id": EMAIL,  # a ticket id is the app's own identifier: passhat copies it, never rewrites it
        "gen_ai.usage.input_tokens": 41,
        "gen_ai.request.model": "gpt-4o-mini-2024-07-18",
        "gen_ai.tool.call.id": "call_1",
    }
    span = _one(redactor, attributes)
    assert dict(span.attributes or {}) == attributes


def test_passhat_s_own_spans_pass_as_made() -> None:
    """The SDK redacted them when it made them; a second pass would change a phone number's pseudonym."""
    memory = InMemorySpanExporter()
    redactor = passhat.Redactor(key=KEY)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(RedactingSpanExporter(memory, redactor)))
    sdk = passhat.configure(tracer_provider=provider, capture_content=True, make_global=False, pseudonym_key=KEY_TEXT)
    with sdk.ticket("T-1", task_type="intake", intent={"phone": PHONE}) as ticket:
        ticket.customer_says(f"call {PHONE}")
    provider.shutdown()
    [span] = memory.get_finished_spans()
    intent = json.loads(str((span.attributes or {})["passhat.intent"]))
    assert intent == {"phone": passhat.Redactor(key=passhat.PseudonymKey(KEY_TEXT)).text(PHONE)}


def test_configure_redacts_the_spans_it_sends(receiver: OtlpReceiver) -> None:
    """`configure()` puts the redaction in front of its own exporter (the receiver is a real OTLP endpoint)."""
    sdk = passhat.configure(endpoint=receiver.url, make_global=False, pseudonym_key=KEY_TEXT)
    try:
        with sdk.tracer_provider.get_tracer("some.framework").start_as_current_span("chat") as span:
            span.set_attribute("gen_ai.input.messages", json.dumps([{"content": f"I am {EMAIL}"}]))
        assert sdk.flush(10)
    finally:
        sdk.shutdown()
    body = json.dumps([s.attributes for s in receiver.spans], default=str)
    assert EMAIL not in body
    assert passhat.Redactor(key=passhat.PseudonymKey(KEY_TEXT)).text(EMAIL) in body


@pytest.mark.parametrize(
    "said",
    [
        f"line one\n{PHONE}",  # an escape right before the value: found as in the decoded text
        f'he said "{EMAIL}" twice: {EMAIL}',
        f"a path C:\\temp\\ then {EMAIL}",  # an escaped backslash: redacted value by value
        f"tab\t{PHONE}\tend, unicode é {EMAIL}",
    ],
)
def test_strings_with_escapes_inside_json_are_redacted(redactor: passhat.Redactor, said: str) -> None:
    document = {"messages": [{"role": "user", "content": said, "n": 123456789012}], "count": 14155550199}
    for encoded in (json.dumps(document), json.dumps(document, ensure_ascii=False), json.dumps(document, indent=2)):
        span = _one(redactor, {"gen_ai.input.messages": encoded})
        assert span.attributes is not None
        value = json.loads(str(span.attributes["gen_ai.input.messages"]))
        assert value["messages"][0]["content"] == redactor.text(said)
        assert value["count"] == 14155550199 and value["messages"][0]["n"] == 123456789012  # numbers are kept


def test_a_span_that_cannot_be_redacted_leaves_without_its_text(caplog: pytest.LogCaptureFixture) -> None:
    """Fail closed: a redactor that breaks must neither leak the text nor stop the export."""

    def broken(*args: object) -> str:
        raise RuntimeError("boom")

    redactor = passhat.Redactor(key=KEY)
    for finding in ("claims", "regional", "text"):  # the redactor breaks whichever way a string reaches it
        object.__setattr__(redactor, finding, broken)
    exporter = RedactingSpanExporter(InMemorySpanExporter(), redactor)
    [span] = _exported(passhat.Redactor(key=KEY), lambda s: s.set_attribute("output.value", EMAIL))
    [withheld] = exporter.redacted([span])
    assert dict(withheld.attributes or {}) == {"output.value": "[REDACTED:redaction_error]"}
    assert "redacting a span failed" in caplog.text


def test_a_growing_conversation_is_redacted_as_if_each_were_new(redactor: passhat.Redactor) -> None:
    """Each model call's input repeats the earlier messages: only the new ones are scanned, and the result is the
    one a fresh redaction of the whole list gives (a tail that is not valid JSON is still redacted as text)."""
    from passhat._span_redaction import SpanRedaction

    messages: list[dict[str, object]] = [{"role": "user", "content": f"I am {EMAIL}"}]
    growing = SpanRedaction(redactor)
    texts = []
    for turn in range(6):
        texts.append(json.dumps(messages, separators=(",", ":")))
        messages.append({"role": "assistant", "content": f"call {PHONE} turn {turn}", "id": 1234567890123})
    texts.append(texts[-1][:-1] + ',{"content": "call +1 (555) 010-9999", broken]')
    for text in texts:
        once = growing.text(text, None)
        assert once == SpanRedaction(redactor).text(text, None)
        assert EMAIL not in once and PHONE not in once and "010-9999" not in once
    assert growing._lists, "the lists were remembered"
    assert json.loads(growing.text(texts[-2], None))[-1]["id"] == 1234567890123  # numbers are kept


def test_pseudonyms_are_keyed_hmac_sha256() -> None:
    import hmac

    from passhat._pseudonym import Pseudonyms

    for secret in (KEY_TEXT, "k" * 100):  # a key longer than SHA-256's block is hashed first, as RFC 2104 says
        pseudonyms = Pseudonyms(passhat.PseudonymKey(secret))
        for value in ("", EMAIL, PHONE, "é" * 300):
            expected = hmac.digest(secret.encode(), f"email\0{value}".encode(), "sha256")
            assert pseudonyms._digest("email", value) == expected


def test_ids_skipped_as_clean_are_redacted_as_the_patterns_would(redactor: passhat.Redactor) -> None:
    """The fast path for short strings (a UUID's shape, strings found clean on an earlier span) gives what the
    patterns give on every value, met once and met again: a UUID whose first group is all digits starts with a
    phone number, and one that is not quite a UUID is scanned as any string."""
    import random
    import uuid

    from passhat._span_redaction import SpanRedaction

    rng = random.Random(31)
    values = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(300)]
    values += [f"{rng.randrange(10**8):08d}-{rng.randrange(10**4):04d}-" + values[i][14:] for i in range(100)]
    values += [value.upper() for value in values[:20]] + [value.replace("-", "") for value in values[300:320]]
    values += ["12345678-1234-4abc-8def-0123456789ab", "4000 0566 5566 5556", "gpt-4o-2024-08-06", PHONE, "ok"]
    values += [f"{rng.randrange(10**7):07d}a-1234-4abc-8def-0123456789ab" for _ in range(20)]
    values += [f"pyd_ai_{rng.getrandbits(128):032x}" for _ in range(50)] + ["GB82WEST12345698765432", "find_patient"]
    values += ["gb82west12345698765432", "4111111111111111", "4111111111111111_x", "x4111111111111111", "ÉLISE"]
    values += [
        f"{rng.choice(['ab', 'AB', '', '_'])}{rng.randrange(10**16)}{rng.choice(['c', 'C', '', '_'])}"
        for _ in range(200)
    ]
    spans = SpanRedaction(redactor)
    found = 0
    for _ in range(2):
        for value in values:
            expected = redactor.text(value, None)
            assert (spans.attributes({"id": value}) or {})["id"] == expected, value
            found += expected != value
    assert found > 150, "the all-digit first groups, the IBAN, the cards and the phone were redacted"


def test_a_span_with_nothing_to_redact_leaves_as_it_is_and_long_texts_are_redacted(
    redactor: passhat.Redactor,
) -> None:
    """A span whose values hold nothing personal is handed on as the same object (not a copy), met once or again;
    a long message is redacted wherever its values sit, as the redactor redacts it."""
    from passhat._span_redaction import SpanRedaction

    plain: dict[str, str | int] = {
        "gen_ai.request.model": "gpt-4o-2024-08-06",
        "gen_ai.conversation.id": "01a24307-6d8a-73c3-b6ca-98dc6019438c",
        "gen_ai.usage.input_tokens": 62,
    }
    span = ReadableSpan(name="chat", attributes=plain)
    spans = SpanRedaction(redactor)
    assert spans.span(span) is span and spans.span(span) is span
    said = "The visit is on Wednesday 2026-12-09 at 09:30. " * 40 + f"Call {PHONE} or write to {EMAIL}."
    message = json.dumps([{"role": "user", "parts": [{"type": "text", "content": said}]}])
    redacted = str(_one(redactor, {"gen_ai.input.messages": message}).attributes["gen_ai.input.messages"])  # type: ignore[index]
    assert PHONE not in redacted and EMAIL not in redacted
    assert json.loads(redacted)[0]["parts"][0]["content"] == redactor.text(said)


def test_digits_of_other_scripts_hidden_in_unicode_escapes_are_redacted(redactor: passhat.Redactor) -> None:
    """``json.dumps`` writes every non-ASCII character as a ``\\u`` escape (OpenInference's ``input.value`` is made
    so): a phone number or a card written in Arabic-Indic digits shows no digit in the text, and is still found."""
    said = "call me on +٤٤ ٢٠ ٧٩٤٦ ٠٩٥٨ or pay with ٤١١١ ١١١١ ١١١١ ١١١١"
    assert redactor.text(said) != said
    for extra in ("", f" from {EMAIL}"):  # with a visible value elsewhere in the text, and without one
        document = [{"role": "user", "content": said + extra}]
        encoded = json.dumps(document)
        assert "\\u0664" in encoded
        span = _one(redactor, {"gen_ai.input.messages": encoded, "input.value": json.dumps({"text": said})})
        assert span.attributes is not None
        sent = json.loads(str(span.attributes["gen_ai.input.messages"]))
        assert sent[0]["content"] == redactor.text(said + extra)
        assert json.loads(str(span.attributes["input.value"]))["text"] == redactor.text(said)


_SAID = st.sampled_from(
    [
        EMAIL,
        PHONE,
        "4111 1111 1111 1111",
        "078-05-1120",
        "GB82 WEST 1234 5698 7654 32",
        "(020) 7946-0958",
        "pyd_ai_a401a768378647ed93a7bc98d56247a4",
        "01a24493-6daa-770b-8437-b2f033784858",
        "2026-12-09",
        "٤١١١ ١١١١ ١١١١ ١١١١",
        "é",
        "\n",
        "\\",
        '"',
        "a",
        "_",
        " ",
        "-",
        "+",
        "(",
    ]
)
_TEXT = st.lists(st.one_of(_SAID, st.text(alphabet="0123456789 -+().@abXYZ_%?é\n", max_size=8)), max_size=6).map(
    "".join
)
_JSON = st.recursive(
    st.one_of(_TEXT, st.sampled_from([14155550199, 4111111111111111, 12, -3.5, True, None, 123456789012])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["content", "role", "id", "args", "n"]), inner, max_size=3),
    ),
    max_leaves=8,
)
_ENCODINGS = [
    {},
    {"ensure_ascii": False},
    {"separators": (",", ":"), "ensure_ascii": False},
    {"indent": 1},
]


def _value_by_value(redactor: passhat.Redactor, value: object) -> object:
    if isinstance(value, str):
        return redactor.text(value)
    if isinstance(value, dict):
        return {key: _value_by_value(redactor, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_value_by_value(redactor, item) for item in value]
    return value


@given(
    st.lists(st.lists(_JSON, min_size=1, max_size=3), min_size=1, max_size=4),
    st.sampled_from(range(len(_ENCODINGS))),
    st.sampled_from(["", ', "broken', ",{", ", 4111111111111111 x]", "]]"]),
)
def test_json_texts_and_growing_conversations_are_redacted_as_value_by_value(
    turns: list[list[object]], encoding: int, broken: str
) -> None:
    """Every JSON text is redacted as its values are one by one (numbers kept), a text that is not JSON as text,
    and a conversation whose lists grow turn by turn (each model call's output first, then the next input) as if
    each list were met afresh: by the one scan of texts without escapes, the value-by-value path of texts with
    them, and the lists remembered."""
    from passhat._span_redaction import SpanRedaction

    redactor = passhat.Redactor(key=KEY)
    growing = SpanRedaction(redactor)
    messages: list[object] = []
    for number, items in enumerate(turns):
        texts = [json.dumps(items, **_ENCODINGS[encoding])]  # type: ignore[arg-type]
        messages = messages + items
        whole = json.dumps(messages, **_ENCODINGS[encoding])  # type: ignore[arg-type]
        texts.append(whole if broken == "" or number < len(turns) - 1 else whole[:-1] + broken)
        for text in texts:
            redacted = growing.text(text, None)
            assert redacted == SpanRedaction(redactor).text(text, None)
            try:
                data = json.loads(text)
            except ValueError:
                assert redacted == redactor.text(text)
            else:
                assert json.loads(redacted) == _value_by_value(redactor, data)
