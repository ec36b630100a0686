"""passhat.collector: ingest, storage, replay, reliability statistics, alerts, reports and the CLI."""
