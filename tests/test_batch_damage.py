"""Damaged output is found and put right on resume: an unreadable part is quarantined and
its scenarios rerun; a deleted part or a truncated side file makes the side files be
rewritten from the committed parts; every file ends holding each scenario exactly once
(issue 20, item 4)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from batch_support import fast_spec, write_spec
from cli_support import run

from optimizer.batch import BatchPlan, LocalEngine, iter_batch, plan_batch, read_results, run_batch
from optimizer.batch.repair import COMMIT_MARKER, QUARANTINE_DIR, STAGING_DIR, repair
from optimizer.batch.runner import MANIFEST_FILE
from optimizer.batch.spec import spec_from_document
from optimizer.batch.writer import CSV_FILE, RESPONSES_FILE, RESULTS_DIR, ROW_SCHEMA, TIMING_COLUMNS

TARGETS = [6.0, 12.0, 24.0]  # x 2 catalogs = 6 scenarios, committed 2 per part


@pytest.fixture(scope="module")
def plan() -> BatchPlan:
    return plan_batch(spec_from_document(fast_spec(TARGETS)))


@pytest.fixture(scope="module")
def engine() -> Iterator[LocalEngine]:
    with LocalEngine(1) as e:
        yield e


@pytest.fixture(scope="module")
def clean(plan: BatchPlan, engine: LocalEngine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The batch written in three parts of two rows each, with a CSV copy, never damaged."""
    out = tmp_path_factory.mktemp("clean")
    for _ in iter_batch(plan, out, engine=engine, csv=True, flush_rows=2):
        pass
    assert len(list((out / RESULTS_DIR).glob("part-*.parquet"))) == 3
    return out


def _copy(clean: Path, tmp_path: Path) -> Path:
    import shutil

    out = tmp_path / "out"
    shutil.copytree(clean, out)
    return out


def _rows(out: Path) -> pd.DataFrame:
    frame = read_results(out).drop(columns=list(TIMING_COLUMNS))
    return frame.sort_values("scenario_id").reset_index(drop=True)


def assert_each_scenario_once_as_in(out: Path, clean: Path) -> None:
    """Parts, responses.jsonl and results.csv hold each scenario once, equal to a clean run."""
    pd.testing.assert_frame_equal(_rows(out), _rows(clean))
    ids = sorted(_rows(clean)["scenario_id"])
    lines = (out / RESPONSES_FILE).read_text().splitlines()
    assert sorted(json.loads(x)["scenario_id"] for x in lines) == ids
    assert sorted(pd.read_csv(out / CSV_FILE)["scenario_id"]) == ids


def _parts(out: Path) -> list[Path]:
    return sorted((out / RESULTS_DIR).glob("part-*.parquet"))


@pytest.mark.parametrize("damage", ["truncated", "empty"])
def test_a_damaged_last_part_is_quarantined_and_rerun(
    plan: BatchPlan, engine: LocalEngine, clean: Path, tmp_path: Path, damage: str
) -> None:
    out = _copy(clean, tmp_path)
    last = _parts(out)[-1]
    data = last.read_bytes()
    last.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"")
    summary = run_batch(plan, out, engine=engine, resume=True, csv=True, report=False)
    assert (summary.skipped, summary.written) == (4, 2)
    assert [p.name.endswith(last.name) for p in summary.quarantined] == [True]
    assert (out / QUARANTINE_DIR).is_dir() and summary.quarantined[0].exists()
    assert (
        str(summary.quarantined[0]) in json.loads((out / MANIFEST_FILE).read_text())["quarantined"]
    )
    assert_each_scenario_once_as_in(out, clean)


def test_a_deleted_middle_part_leaves_no_duplicate_in_the_side_files(
    plan: BatchPlan, engine: LocalEngine, clean: Path, tmp_path: Path
) -> None:
    out = _copy(clean, tmp_path)
    _parts(out)[1].unlink()
    summary = run_batch(plan, out, engine=engine, resume=True, report=False)
    assert (summary.skipped, summary.written) == (4, 2)
    assert any("a part was deleted" in p for p in summary.repairs)
    assert_each_scenario_once_as_in(out, clean)


def test_a_truncated_responses_file_is_noticed_and_its_scenarios_rerun(
    plan: BatchPlan, engine: LocalEngine, clean: Path, tmp_path: Path
) -> None:
    out = _copy(clean, tmp_path)
    text = (out / RESPONSES_FILE).read_bytes()
    (out / RESPONSES_FILE).write_bytes(text[: len(text) - 100])  # the last line loses its end
    summary = run_batch(plan, out, engine=engine, resume=True, report=False)
    assert any("truncated" in p for p in summary.repairs)
    assert summary.written == 2  # the last part's two scenarios
    assert_each_scenario_once_as_in(out, clean)
    assert any(q.name.endswith(RESPONSES_FILE) for q in summary.quarantined)


def test_the_cli_resumes_a_damaged_directory_without_an_internal_error(
    clean: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _copy(clean, tmp_path)
    _parts(out)[-1].write_bytes(b"")
    spec = write_spec(tmp_path / "spec.json", fast_spec(TARGETS))
    got = run(capsys, "batch", str(spec), "--out", str(out), "--workers", "1", "--resume")
    assert got.code == 0, got.err
    assert "repaired: part-000002.parquet: unreadable" in got.out
    assert_each_scenario_once_as_in(out, clean)


def test_a_rewrite_interrupted_before_its_commit_marker_is_discarded(
    clean: Path, tmp_path: Path
) -> None:
    out = _copy(clean, tmp_path)
    (out / STAGING_DIR).mkdir()
    (out / STAGING_DIR / RESPONSES_FILE).write_text("half a rewrite")
    assert repair(out, ROW_SCHEMA).clean
    assert not (out / STAGING_DIR).exists()
    assert_each_scenario_once_as_in(out, clean)


def test_a_rewrite_interrupted_after_its_commit_marker_is_rolled_forward(
    clean: Path, tmp_path: Path
) -> None:
    out = _copy(clean, tmp_path)
    _parts(out)[1].unlink()
    found = repair(out, ROW_SCHEMA)  # compacts into one new part
    assert found.rewritten and len(_parts(out)) == 1
    # Replay a crash right after the marker was synced: old parts and files still in place.
    reference = _copy(clean, tmp_path / "again")
    _parts(reference)[1].unlink()
    stage = reference / STAGING_DIR
    stage.mkdir()
    new_part = _parts(out)[0]
    (stage / new_part.name).write_bytes(new_part.read_bytes())
    for name in (RESPONSES_FILE, CSV_FILE):
        (stage / name).write_bytes((out / name).read_bytes())
    (stage / COMMIT_MARKER).write_text(new_part.name)
    assert repair(reference, ROW_SCHEMA).clean
    assert [p.name for p in _parts(reference)] == [new_part.name]
    assert (reference / RESPONSES_FILE).read_bytes() == (out / RESPONSES_FILE).read_bytes()
