"""The executor settings and the trace relay, without a Ray cluster: validation, refusals, spans across processes."""

from __future__ import annotations

import pathlib
import pickle
import sys

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

import passhat
from passhat.collector.cli import app
from passhat.collector.config import ConfigError, validate_config
from passhat.collector.replay import ReplaySettings
from passhat.collector.replay._relay import RuntimeSettings, SpanCapture, relay


def test_the_executor_keys_are_validated() -> None:
    config = validate_config(
        {"replay": {"executor": "ray", "ray_address": "ray://head:10001", "ray_workers": 8, "ray_concurrency": 2}},
        env={},
    )
    assert config.replay.executor == "ray" and config.replay.ray_workers == 8
    with pytest.raises(ConfigError) as error:
        validate_config({"replay": {"executor": "dask", "ray_concurrency": 0}}, env={})
    assert [p.split(":")[0] for p in error.value.problems] == ["replay.executor", "replay.ray_concurrency"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"executor": "dask"}, "executor must be 'local' or 'ray'"), ({"ray_concurrency": 0}, "ray_concurrency")],
)
def test_replay_settings_refuse_a_bad_executor(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ReplaySettings(**settings)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "dask"], "--executor must be local or ray, got 'dask'"),
        (["--executor", "ray", "--customer", "anthropic"], "--executor ray runs the scripted customer"),
        (["--ray-workers", "2"], "--ray-address and --ray-workers apply to --executor ray"),
        (["--workers", "2"], "--workers applies to `passhat replay`"),
    ],
)
def test_bench_refuses_executor_settings_that_do_not_apply(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["bench", "--domain", "retail", *args])
    assert result.exit_code == 2 and message in result.stderr


def test_without_ray_installed_choosing_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from passhat.collector.replay import _ray

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(ImportError, match=r"pip install 'passhat\[ray\]'"):
        _ray._ray()


def test_a_workers_spans_are_ended_in_the_drivers_runtime_as_its_own() -> None:
    """Traced on one runtime into a capture, pickled, relayed to another: the driver's exporter gets them whole."""
    driver_spans = InMemorySpanExporter()
    driver = passhat.configure(
        make_global=False, send=False, source="sandbox", redact_mode="blank", service_name="passhat replay",
        span_processors=[SimpleSpanProcessor(driver_spans)],
    )  # fmt: skip
    capture = SpanCapture()
    worker = RuntimeSettings.of(driver).runtime(capture)
    with worker.ticket("T-1#0", task_type="cancel_pending_order", intent={"email": "ann@example.org"}) as ticket:
        ticket.customer_says("please cancel, write to ann@example.org")
        with worker.tracer.start_as_current_span("execute_tool cancel_pending_order"):
            pass
    trace_id = ticket.trace_id
    spans = pickle.loads(pickle.dumps(capture.take(trace_id)))
    assert capture.take(trace_id) == []  # handed over once
    relay(driver, spans)
    worker.shutdown()

    exported = driver_spans.get_finished_spans()
    assert sorted(s.name for s in exported) == sorted(s.name for s in spans) and len(exported) == 2
    assert {format(s.context.trace_id, "032x") for s in exported} == {trace_id}
    root = next(s for s in exported if s.parent is None)
    child = next(s for s in exported if s.parent is not None)
    assert child.parent is not None and child.parent.span_id == root.context.span_id
    assert root.resource.attributes["service.name"] == "passhat replay"
    # The driver's redaction ran on the worker: the email is blanked in what reached the driver.
    text = repr(dict(root.attributes or {})) + repr([dict(e.attributes or {}) for e in root.events])
    assert "ann@example.org" not in text and "[REDACTED" in text
    driver.shutdown()


def test_relay_refuses_a_provider_that_takes_no_spans() -> None:
    from opentelemetry.trace import NoOpTracerProvider

    runtime = passhat.configure(make_global=False, tracer_provider=TracerProvider())
    capture = SpanCapture()
    with RuntimeSettings.of(runtime).runtime(capture).ticket("T-2#0", task_type="x") as ticket:
        pass
    runtime.tracer_provider = NoOpTracerProvider()
    with pytest.raises(TypeError, match="OpenTelemetry SDK TracerProvider"):
        relay(runtime, capture.take(ticket.trace_id))


def test_a_trial_that_lost_every_worker_is_stored_as_infra_never_as_the_agents_failure() -> None:
    from passhat.checks import NOT_AGENT_FAULT
    from passhat.collector.replay import AgentSpec, ReplayTicket, trial_row
    from passhat.collector.replay._ray import MAX_RETRIES, _lost
    from passhat.collector.store import TrialRow
    from passhat.sandbox import ReferenceAgent, Sandbox

    with Sandbox("retail") as sandbox:
        scenario = sandbox.scenarios("cancel_pending_order", 1)[0]
    item = ReplayTicket(scenario.scenario_id, scenario.task_type, "retail", scenario, ())
    lost = [f"Ray worker lost mid-trial (ActorDiedError): died {n}" for n in range(MAX_RETRIES)]
    row: TrialRow = trial_row(
        "run-1", AgentSpec(ReferenceAgent.factory(), "reference"), _lost(item, 2, lost, 1.5), infra_retries=lost
    )
    assert (row.ticket_id, row.attempt, row.passed) == (scenario.scenario_id, 2, False)
    assert row.infra_error is not None and f"{MAX_RETRIES} Ray workers were lost" in row.infra_error
    assert row.failure_label in NOT_AGENT_FAULT and row.termination_reason == "infra_error"
    assert row.details.infra_retries == tuple(lost)


def test_spans_prepared_in_a_worker_are_stored_exactly_as_relayed_ones(tmp_path: pathlib.Path) -> None:
    """The same trial's spans, relayed to the driver's store exporter or prepared in the worker for it and
    handed over (pickled, as they travel): the two stores hold the same spans, ticket, tool call and writes."""
    from passhat.collector.ingest import StoreSpanExporter
    from passhat.collector.store import open_store

    stores = [open_store(f"sqlite:///{tmp_path / name}") for name in ("relayed.db", "prepared.db")]
    exporters = [StoreSpanExporter(store, "shop") for store in stores]
    driver = passhat.configure(
        make_global=False, send=False, source="sandbox", redact_mode="blank", service_name="passhat replay",
        span_processors=[SimpleSpanProcessor(exporters[0])],
    )  # fmt: skip
    capture = SpanCapture()
    worker = RuntimeSettings.of(driver).runtime(capture)

    @worker.tool
    def cancel_pending_order(order_id: int) -> dict[str, str]:
        before, after = {"status": "pending"}, {"status": "cancelled"}
        passhat.record_write("orders", {"order_id": order_id}, before=before, after=after, runtime=worker)
        return {"status": "cancelled"}

    with worker.ticket("T-1#0", task_type="cancel_pending_order", intent={"email": "ann@example.org"}) as ticket:
        ticket.customer_says("please cancel order 7, write to ann@example.org")
        cancel_pending_order(7)
    spans = capture.take(ticket.trace_id)
    try:
        relay(driver, spans)
        prepare = exporters[1].prepare_in_workers()
        prepared = pickle.loads(pickle.dumps(prepare([snapshot.rebuild() for snapshot in spans])))
        exporters[1].export_prepared([prepared])
        relayed, made_here = (store.get_trace("shop", ticket.trace_id) for store in stores)
        assert len(relayed) == len(spans) >= 2
        assert made_here == relayed
        assert any(span.tool_call is not None for span in made_here)
        assert any(write.table == "orders" for span in made_here for write in span.state_writes)
        listed = [store.list_tickets("shop", source="sandbox") for store in stores]
        assert listed[0] == listed[1] and len(listed[0]) == 1
    finally:
        worker.shutdown()
        driver.shutdown()
        for store in stores:
            store.close()
