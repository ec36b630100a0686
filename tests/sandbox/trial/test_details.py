"""A trial's details: built from the graded trial, kept as JSON, read back equal, and old documents still read."""

from __future__ import annotations

import json

import pytest

from passhat.sandbox import FlawConfig, ReferenceAgent, Sandbox, TrialDetails, run_trial
from tests.sandbox.trial.old_details import OLD_DETAILS, OLD_DETAILS_READ


async def test_a_trials_details_hold_its_changes_calls_transcript_and_agent(retail: Sandbox) -> None:
    scenario = next(s for s in retail.scenarios(count=4) if s.expected_write_tables)
    result = await run_trial(retail, scenario, 0, ReferenceAgent.factory(FlawConfig.off()))
    details = result.details
    assert [c.table for c in details.changes] == [c.table for c in result.record.diff.changes]
    assert details.tool_calls == tuple(result.record.tool_calls)
    assert details.transcript == tuple(result.record.transcript)
    assert details.final_response == result.record.final_response
    assert (details.usage, details.injected, details.agent) == (result.usage, None, result.agent)
    assert details.agent  # the runner names the agent it built


async def test_details_survive_the_json_text_the_store_keeps(retail: Sandbox) -> None:
    scenario = next(s for s in retail.scenarios(count=4) if s.expected_write_tables)
    details = (await run_trial(retail, scenario, 0, ReferenceAgent.factory(FlawConfig.off()))).details
    assert details.changes and details.tool_calls
    assert TrialDetails.from_json(json.loads(json.dumps(details.to_json()))) == details


def test_details_written_by_an_older_version_still_read() -> None:
    assert TrialDetails.from_json(OLD_DETAILS) == OLD_DETAILS_READ


def test_an_empty_document_reads_as_no_details() -> None:
    assert TrialDetails.from_json({}) == TrialDetails()
    assert TrialDetails.from_json(TrialDetails().to_json()) == TrialDetails()


def test_a_tool_call_with_an_unknown_outcome_is_refused_with_the_call() -> None:
    with pytest.raises(ValueError, match="outcome must be ok, error or empty"):
        TrialDetails.from_json({"tool_calls": [{"name": "get_order", "outcome": "maybe"}]})


async def test_the_document_is_built_once_travels_with_the_details_and_never_outlives_a_change(
    retail: Sandbox,
) -> None:
    import dataclasses
    import pickle

    scenario = next(s for s in retail.scenarios(count=4) if s.expected_write_tables)
    details = (await run_trial(retail, scenario, 0, ReferenceAgent.factory(FlawConfig.off()))).details
    document = details.to_json()
    assert details.to_json() is document  # built once (a worker process builds it before sending the row)
    travelled = pickle.loads(pickle.dumps(details))
    assert travelled == details and travelled.to_json() == document
    changed = dataclasses.replace(details, agent="another", infra_retries=("worker lost",))
    assert changed != details  # the cached document is no field: equality still compares the details
    assert changed.to_json()["agent"] == "another" and changed.to_json()["infra_retries"] == ["worker lost"]
    assert details.to_json()["agent"] == details.agent


async def test_pickled_details_travel_as_their_text_and_read_back_equal_on_first_use(retail: Sandbox) -> None:
    """A replay worker pickles a trial's row for the driver: the details go as the text the store writes, and
    the driver, which only writes it, never builds their objects; whoever reads a field gets the same details."""
    import dataclasses
    import pickle

    scenario = next(s for s in retail.scenarios(count=4) if s.expected_write_tables)
    details = (await run_trial(retail, scenario, 0, ReferenceAgent.factory(FlawConfig.off()))).details
    text = details.json_text()
    assert json.loads(text) == details.to_json()

    stored = pickle.loads(pickle.dumps(details))
    assert stored.json_text() == text and "changes" not in vars(stored)  # written as it came, not read back
    assert stored.to_json() == details.to_json() and "changes" not in vars(stored)
    assert stored.tool_calls == details.tool_calls  # a field read: all of them are read back
    assert stored == details and repr(stored) == repr(details)
    again = pickle.loads(pickle.dumps(details))
    assert details == again  # equality reads them back too, from either side
    lost = dataclasses.replace(pickle.loads(pickle.dumps(details)), infra_retries=("worker lost",))
    assert lost.infra_retries == ("worker lost",) and lost.changes == details.changes
    assert not hasattr(pickle.loads(pickle.dumps(details)), "no_such_field")


def test_details_orjson_refuses_are_written_by_the_standard_library() -> None:
    from passhat.checks import ToolCallRecord

    call = ToolCallRecord(name="lookup", arguments={"account": 2**70 + 1}, outcome="ok")
    details = TrialDetails(tool_calls=(call,))
    assert json.loads(details.json_text())["tool_calls"][0]["arguments"] == {"account": 2**70 + 1}
    import pickle

    assert pickle.loads(pickle.dumps(details)).tool_calls[0].arguments == {"account": 2**70 + 1}


def test_details_a_store_kept_read_back_on_first_use_and_as_this_versions_document() -> None:
    """`from_text`: a list of stored trials builds no details until a field is read; an older document then
    reads as `from_json` reads it, and is written back in this version's form."""
    text = json.dumps(OLD_DETAILS)
    stored = TrialDetails.from_text(text)
    assert "changes" not in vars(stored)
    assert stored == OLD_DETAILS_READ
    assert stored.to_json() == OLD_DETAILS_READ.to_json()
    assert json.loads(stored.json_text()) == OLD_DETAILS_READ.to_json()
    assert TrialDetails.from_text(text.encode()) == OLD_DETAILS_READ
    assert TrialDetails.from_text(None) == TrialDetails() == TrialDetails.from_text("")
    unreadable = TrialDetails.from_text(json.dumps({"tool_calls": [{"name": "x", "outcome": "maybe"}]}))
    with pytest.raises(ValueError, match="outcome"):
        _ = unreadable.tool_calls
    exact = TrialDetails.from_text(
        '{"tool_calls":[{"name":"x","arguments":{"n":1180591620717411303425},"outcome":"ok"}]}', exact=True
    )
    assert exact.tool_calls[0].arguments == {"n": 2**70 + 1}
