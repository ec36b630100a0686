"""Content capture costs what the cap keeps: a huge argument or result is serialised only up to past the cap."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

import passhat
from passhat.testing import capture

MORE_THAN = re.compile(r"…\[truncated: more than (\d+) chars\]$")


class Row:
    """A model-like value (``model_dump``, as pydantic's): counts how many of its kind were made JSON."""

    dumped = 0

    def __init__(self, number: int) -> None:
        self.number = number

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        Row.dumped += 1
        return {"number": self.number, "email": f"customer{self.number}@example.com"}


@passhat.tool
def count(ids: Collection[Any]) -> int:
    return len(ids)


@passhat.tool
def echo(value: Any) -> Any:
    return value


def _attributes(spans: Any, name: str) -> dict[str, Any]:
    return dict(spans.one(f"execute_tool {name}").attributes or {})


def test_a_huge_argument_is_made_json_only_up_to_past_the_cap() -> None:
    rows = [Row(number) for number in range(100_000)]
    Row.dumped = 0
    with capture(max_content_length=1000) as spans:
        assert count(rows) == 100_000
    recorded = str(_attributes(spans, "count")["gen_ai.tool.call.arguments"])
    assert Row.dumped < 500  # not one per row (100,000 before): what fits in the cap and its margin
    found = MORE_THAN.search(recorded)
    assert found is not None and int(found.group(1)) > 0
    assert len(recorded) == 1000 + len(found.group(0))
    assert recorded.startswith('{"ids":[{"number":0,"email":"') and "@example.com" in recorded
    assert "customer0@example.com" not in recorded  # redaction applies to all that is recorded


def test_a_list_of_a_million_numbers_is_capped_with_an_honest_marker() -> None:
    with capture() as spans:
        count(list(range(1_000_000)))
    recorded = str(_attributes(spans, "count")["gen_ai.tool.call.arguments"])
    assert recorded.startswith('{"ids":[0,1,2,3,')
    found = MORE_THAN.search(recorded)
    assert found is not None and len(recorded) == 4096 + len(found.group(0))


def test_a_huge_string_result_is_redacted_and_capped() -> None:
    text = "write to ada.lovelace@example.com or call +1 415 555 0134. " * 50_000
    with capture(max_content_length=200) as spans:
        echo(text)
    attributes = _attributes(spans, "echo")
    for recorded in (str(attributes["gen_ai.tool.call.arguments"]), str(attributes["gen_ai.tool.call.result"])):
        assert MORE_THAN.search(recorded) is not None
        assert "ada.lovelace@example.com" not in recorded and "555 0134" not in recorded
        assert recorded.count("@example.com") >= 2  # the emails are there, pseudonymised


def test_blanking_that_shortens_the_text_still_keeps_the_cut_far_past_the_cap() -> None:
    """A long email blanked to `[REDACTED:email]` shortens the text four times: passhat keeps more, so what it
    records is the cap's worth of whole, redacted values, never the start of a value cut before redaction."""
    emails = [f"{'a' * 60}{number}@example.com" for number in range(20_000)]
    with capture(max_content_length=100, redact_mode="blank") as spans:
        count(emails)
    recorded = str(_attributes(spans, "count")["gen_ai.tool.call.arguments"])
    assert recorded.startswith('{"ids":["[REDACTED:email]","[REDACTED:email]"')
    assert "aaaa" not in recorded and MORE_THAN.search(recorded) is not None


def test_a_value_a_little_over_the_cap_keeps_the_exact_count() -> None:
    with capture(max_content_length=50) as spans:
        echo(list(range(100)))
    recorded = str(_attributes(spans, "echo")["gen_ai.tool.call.result"])
    whole = "[" + ",".join(str(number) for number in range(100)) + "]"
    assert recorded == f"{whole[:50]}…[truncated {len(whole) - 50} chars]"


def test_odd_values_are_recorded_as_before_when_small() -> None:
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    value = {1: {3, 2}, "raw": b"\xff\x00", "text": b"caf\xc3\xa9", "nested": (1.5, None, True), "cycle": cyclic}
    with capture() as spans:
        echo(value)
    recorded = str(_attributes(spans, "echo")["gen_ai.tool.call.result"])
    expected = '{"1":[2,3],"raw":"/wA=","text":"café","nested":[1.5,null,true],"cycle":[1,[1,[1,"<builtins.list>"]]]}'
    assert recorded == expected  # what the code before the bound recorded


def test_huge_bytes_and_sets_are_bounded_too() -> None:
    with capture(max_content_length=100) as spans:
        echo(("é" * 1_000_000).encode())
        count(set(range(1_000_000)))
    text = str(_attributes(spans, "echo")["gen_ai.tool.call.result"])
    assert text.startswith('"éééé') and MORE_THAN.search(text) is not None
    numbers = str(_attributes(spans, "count")["gen_ai.tool.call.arguments"])
    assert numbers.startswith('{"ids":[0,1,10,100,1000,10000,100000,100001,') and MORE_THAN.search(numbers)


def test_a_long_message_is_redacted_and_capped_without_scanning_it_all() -> None:
    with capture(max_content_length=100) as spans, passhat.ticket("T-1", task_type="refund") as ticket:
        ticket.customer_says("my email is ada.lovelace@example.com. " * 100_000)
    [attributes] = spans.events("passhat.customer_message")
    recorded = str((attributes or {})["passhat.message.content"])
    assert "ada.lovelace@example.com" not in recorded and MORE_THAN.search(recorded) is not None
