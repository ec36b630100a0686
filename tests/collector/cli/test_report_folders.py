"""Two projects of one collector, one config: `passhat report` of a period for the config's project and for
another one (`--project`) wrote the same `reports/<period>/report.*`, the last one silently replacing the other."""

from __future__ import annotations

import json
import pathlib

from typer.testing import CliRunner

from passhat.collector.cli import app
from passhat.collector.store import open_store
from tests.collector.ui import ui_data


def test_each_projects_report_of_a_period_has_a_folder_of_its_own(tmp_path: pathlib.Path) -> None:
    url = f"sqlite:///{tmp_path / 'passhat.db'}"
    store = open_store(url)
    try:
        for project in ("shop", "bank"):
            ui_data.seed(store, project)
    finally:
        store.close()
    config = tmp_path / "passhat.toml"
    config.write_text(f'project = "shop"\n[store]\nurl = "{url}"\n[report]\nout_dir = "reports"\n')
    period = ui_data.PERIODS[1]
    runner = CliRunner()
    for extra in ([], ["--project", "bank"]):
        result = runner.invoke(app, ["report", "--period", period, "--config", str(config), *extra])
        assert result.exit_code == 0, result.output
    own = json.loads((tmp_path / "reports" / period / "report.json").read_text())
    other = json.loads((tmp_path / "reports" / "bank" / period / "report.json").read_text())
    assert own["run"]["run_id"] == f"run-shop-{period}" and other["run"]["run_id"] == f"run-bank-{period}"


def test_the_report_of_a_period_not_started_says_so(tmp_path: pathlib.Path) -> None:
    """It said to run `passhat replay --period` of that week, which then found no tickets."""
    import datetime as dt

    from passhat.collector.store import week_of

    url = f"sqlite:///{tmp_path / 'passhat.db'}"
    open_store(url).close()
    config = tmp_path / "passhat.toml"
    config.write_text(f'project = "shop"\n[store]\nurl = "{url}"\n')
    later = week_of(dt.datetime.now(dt.UTC) + dt.timedelta(days=21))
    result = CliRunner().invoke(app, ["report", "--period", later.name, "--config", str(config)])
    assert result.exit_code != 0
    assert f"{later.name} has not started yet (it starts on {later.start})" in result.output, result.output
    assert "passhat replay" not in result.output
