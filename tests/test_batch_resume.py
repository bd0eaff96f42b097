"""An interrupted batch keeps what it finished, and --resume completes it without repeats;
``procure batch`` drives the same runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client.cli import main
from optimizer.batch import BatchProgress, LocalEngine, plan_batch, read_results, run_batch
from optimizer.batch.spec import spec_from_document
from optimizer.batch.writer import CSV_FILE, RESPONSES_FILE
from optimizer.errors import InvalidInput

SPEC = {
    "catalogs": ["infiniband-ndr", "roce-spectrum"],
    "defaults": {
        "top_k": 1,
        "workload": {"model": "bert-large", "training_tokens": 1e10},
        "allowed_topologies": ["single_switch"],
        "constraints": {"max_gpus": 32},
    },
    "grid": {"constraints.target_training_hours": [12.0, 24.0, 48.0]},
}


@pytest.mark.slow
def test_an_interrupted_batch_resumes_where_it_stopped(tmp_path: Path) -> None:
    plan = plan_batch(spec_from_document(SPEC))
    seen: list[str] = []

    def ctrl_c_after_two(step: BatchProgress) -> None:
        seen.append(step.result.scenario_id)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with LocalEngine(1) as engine:
        with pytest.raises(KeyboardInterrupt):
            run_batch(plan, tmp_path, engine=engine, progress=ctrl_c_after_two)
        assert sorted(read_results(tmp_path)["scenario_id"]) == sorted(seen)
        with pytest.raises(InvalidInput):  # a second run must say it is a resume
            run_batch(plan, tmp_path, engine=engine)
        summary = run_batch(plan, tmp_path, engine=engine, resume=True)
    assert (summary.skipped, summary.written) == (2, len(plan.scenarios) - 2)
    ids = list(read_results(tmp_path)["scenario_id"])
    assert sorted(ids) == sorted(s.scenario_id for s in plan.scenarios)
    assert len((tmp_path / RESPONSES_FILE).read_text().splitlines()) == len(ids)


@pytest.mark.slow
def test_the_cli_writes_rows_csv_and_report_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({**SPEC, "grid": {"constraints.target_training_hours": [48.0]}}))
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["batch", str(spec), "--out", str(out), "--workers", "1", "--csv"])
    assert done.value.code in (0, None)
    assert "2 scenarios solved (0 with errors)" in capsys.readouterr().out
    assert len((out / CSV_FILE).read_text().splitlines()) == 1 + 2
    report = (out / "report.md").read_text()
    assert "infiniband-ndr" in report and "roce-spectrum" in report
    assert (out / "frontier.png").read_bytes()[:4] == b"\x89PNG"


def test_the_cli_refuses_workers_with_a_scheduler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.csv"
    spec.write_text("catalog,model\ninfiniband-ndr,bert-large\n")
    with pytest.raises(SystemExit) as done:
        main(
            [
                "batch",
                str(spec),
                "--out",
                str(tmp_path / "o"),
                "--workers",
                "2",
                "--scheduler",
                "tcp://127.0.0.1:1",
            ]
        )
    assert done.value.code == 3
    assert "workers" in capsys.readouterr().err
