"""A span another library starts inside a replay's trial belongs to the trial, whichever provider made it.

A framework traces into OpenTelemetry's global provider, the production one once the agent's code configured
passhat with `set_global=True`. Before, its spans made in a trial (a ticket of the replay's own instance) went to
production's exporter and were missing from the trial's trace.
"""

from __future__ import annotations

import json
import subprocess
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import passhat


def _instances() -> tuple[passhat.Passhat, InMemorySpanExporter, passhat.Passhat, InMemorySpanExporter]:
    production, trial = InMemorySpanExporter(), InMemorySpanExporter()
    deployed = passhat.configure(
        make_global=False, send=False, service_name="support-agent", span_processors=[SimpleSpanProcessor(production)]
    )
    replay = passhat.configure(
        make_global=False, send=False, source="sandbox", redact_mode="blank",
        span_processors=[SimpleSpanProcessor(trial)],
    )  # fmt: skip
    return deployed, production, replay, trial


def test_a_frameworks_span_in_a_trial_goes_to_the_trial_not_production() -> None:
    deployed, production, replay, trial = _instances()
    framework = deployed.tracer_provider.get_tracer("some.framework")  # the global provider is production's
    with replay.ticket("T-1#0", task_type="refund") as ticket, framework.start_as_current_span("chat model"):
        pass
    assert production.get_finished_spans() == ()
    names = [span.name for span in trial.get_finished_spans()]
    assert "chat model" in names
    chat = next(span for span in trial.get_finished_spans() if span.name == "chat model")
    root = next(span for span in trial.get_finished_spans() if span.name != "chat model")
    assert chat.context.trace_id == root.context.trace_id == int(ticket.trace_id, 16)
    assert chat.parent is not None and chat.parent.span_id == root.context.span_id


def test_outside_a_trial_the_frameworks_spans_stay_in_production() -> None:
    deployed, production, _replay, trial = _instances()
    framework = deployed.tracer_provider.get_tracer("some.framework")
    with framework.start_as_current_span("no ticket"):
        pass
    with deployed.ticket("T-2", task_type="refund"), framework.start_as_current_span("production ticket"):
        pass
    assert {span.name for span in production.get_finished_spans()} >= {"no ticket", "production ticket"}
    assert trial.get_finished_spans() == ()


def test_the_trials_redactor_redacts_the_frameworks_text() -> None:
    deployed, _production, replay, trial = _instances()
    framework = deployed.tracer_provider.get_tracer("some.framework")
    said = json.dumps([{"role": "user", "content": "I am ann.lee@example.com"}])
    with replay.ticket("T-3#0", task_type="refund"):
        framework.start_span("chat model", attributes={"gen_ai.input.messages": said}).end()
    [chat] = [span for span in trial.get_finished_spans() if span.name == "chat model"]
    kept = str((chat.attributes or {})["gen_ai.input.messages"])
    assert "ann.lee@example.com" not in kept and "[REDACTED:email]" in kept


def test_a_span_ended_after_its_trial_closed_still_belongs_to_the_trial() -> None:
    deployed, production, replay, trial = _instances()
    framework = deployed.tracer_provider.get_tracer("some.framework")
    with replay.ticket("T-4#0", task_type="refund"):
        late = framework.start_span("streamed answer")
    late.end()
    assert [span.name for span in trial.get_finished_spans()].count("streamed answer") == 1
    assert production.get_finished_spans() == ()


def test_a_trial_whose_instance_keeps_nothing_never_sends_to_production() -> None:
    production = InMemorySpanExporter()
    deployed = passhat.configure(make_global=False, send=False, span_processors=[SimpleSpanProcessor(production)])
    silent = passhat.configure(make_global=False, tracer_provider=trace.NoOpTracerProvider(), source="sandbox")
    framework = deployed.tracer_provider.get_tracer("some.framework")
    with silent.ticket("T-5#0", task_type="refund"):
        framework.start_span("chat model").end()
    assert production.get_finished_spans() == ()


def test_relayed_and_flushed_spans_still_reach_the_instances_own_processors() -> None:
    """What the replay relays from its workers ends in the instance's processors (no start seen here)."""
    deployed, _production, replay, trial = _instances()
    with replay.ticket("T-6#0", task_type="refund"):
        pass
    [span] = trial.get_finished_spans()
    trial.clear()
    replay.tracer_provider._active_span_processor.on_end(span)  # type: ignore[attr-defined]
    assert trial.get_finished_spans() == (span,)
    assert replay.flush() and deployed.flush()


UNCLAIMED = """
from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import passhat
from passhat._trial_routing import TrialsOnlyProvider, route_unclaimed_spans_to_trials

framework = trace.get_tracer("some.framework")  # as a framework's module does at import: no provider yet
assert route_unclaimed_spans_to_trials()  # a worker process, its agent's module imported
assert not route_unclaimed_spans_to_trials()  # once
production, trial = InMemorySpanExporter(), InMemorySpanExporter()
replay = passhat.configure(
    make_global=False, send=False, redact_mode="blank", span_processors=[SimpleSpanProcessor(trial)]
)
# The agent's code configures production later (its main(), a factory): that instance works, and is not global.
deployed = passhat.configure(
    make_global=False, send=False, set_global=True, span_processors=[SimpleSpanProcessor(production)]
)
assert isinstance(trace.get_tracer_provider(), TrialsOnlyProvider)
with framework.start_as_current_span("outside a trial"):
    pass
with replay.ticket("T-1#0", task_type="refund"), framework.start_as_current_span("chat model") as chat:
    chat.set_attribute("gen_ai.input.messages", "I am ann.lee@example.com")
with deployed.ticket("T-2", task_type="refund"):
    pass
kept = {span.name: span for span in trial.get_finished_spans()}
assert "chat model" in kept and "outside a trial" not in kept, sorted(kept)
assert "ann.lee@example.com" not in str(kept["chat model"].attributes.get("gen_ai.input.messages"))
made = [span.name for span in production.get_finished_spans()]
assert made and "chat model" not in made and "outside a trial" not in made, made  # its own ticket only
print("ok")
"""

CLAIMED = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from passhat._trial_routing import route_unclaimed_spans_to_trials

mine = TracerProvider()
trace.set_tracer_provider(mine)  # the agent's module set its own
assert not route_unclaimed_spans_to_trials()
assert trace.get_tracer_provider() is mine
print("ok")
"""


def test_a_process_that_runs_trials_keeps_a_frameworks_trial_spans_when_no_global_provider_was_set() -> None:
    """A worker whose agent module set no global provider: the framework's spans in a trial are the trial's (they
    went to OpenTelemetry's no-op provider), those outside trials go nowhere, and the agent's own later
    `set_global=True` neither fails nor takes them. A provider the module set is left alone. Each in a process of
    its own: OpenTelemetry's global provider is set once a process."""
    for script in (UNCLAIMED, CLAIMED):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
