"""Result files: each scenario committed exactly once, and crash leftovers dropped on reopen."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from optimizer.batch.spec import Scenario
from optimizer.batch.tasks import TaskResult, failed_result
from optimizer.batch.writer import (
    CSV_FILE,
    RESPONSES_FILE,
    RESULTS_DIR,
    ROW_SCHEMA,
    ResultWriter,
    read_results,
)


def _result(i: int) -> TaskResult:
    """A complete row without solving anything: the error row of a scenario."""
    s = Scenario(
        scenario_id=f"id-{i:04d}",
        comparison_key=f"k{i}",
        catalog_id="0" * 64,
        catalog_ref="quote.xlsx",
        request_json='{"top_k":1}',
    )
    return failed_result(s, RuntimeError(f"failure {i}"))


def _lines(out: Path, name: str = RESPONSES_FILE) -> list[str]:
    return (out / name).read_text().splitlines()


def test_an_error_row_has_exactly_the_schema_columns() -> None:
    assert list(_result(0).row) == ROW_SCHEMA.names


def test_a_scenario_added_twice_is_written_once(tmp_path: Path) -> None:
    writer = ResultWriter(tmp_path, flush_rows=2)
    assert [writer.add(_result(i)) for i in (0, 1, 0, 2, 1)] == [True, True, False, True, False]
    writer.flush()
    assert sorted(read_results(tmp_path)["scenario_id"]) == ["id-0000", "id-0001", "id-0002"]
    assert [json.loads(x)["scenario_id"] for x in _lines(tmp_path)] == [
        "id-0000",
        "id-0001",
        "id-0002",
    ]


def test_a_reopened_directory_knows_what_is_written_and_refuses_it_again(tmp_path: Path) -> None:
    first = ResultWriter(tmp_path)
    for i in range(3):
        first.add(_result(i))
    first.flush()
    again = ResultWriter(tmp_path)
    assert again.written == {"id-0000", "id-0001", "id-0002"}
    assert not again.add(_result(1))
    assert again.add(_result(3))


def test_text_and_parts_an_interrupted_flush_left_behind_are_dropped(tmp_path: Path) -> None:
    writer = ResultWriter(tmp_path, csv_copy=True)
    for i in range(2):
        writer.add(_result(i))
    writer.flush()
    # A crash between appending the text files and renaming the Parquet part into place:
    for name in (RESPONSES_FILE, CSV_FILE):
        with open(tmp_path / name, "a") as f:
            f.write('{"scenario_id": "id-0002"}\n{"truncated li')
    (tmp_path / RESULTS_DIR / "part-000001.parquet.tmp").write_bytes(b"PAR1 partial")
    ResultWriter(tmp_path)
    assert len(_lines(tmp_path)) == 2
    assert len(_lines(tmp_path, CSV_FILE)) == 1 + 2
    assert not list((tmp_path / RESULTS_DIR).glob("*.tmp"))
    assert len(read_results(tmp_path)) == 2


def test_asking_for_csv_on_resume_backfills_the_rows_already_written(tmp_path: Path) -> None:
    first = ResultWriter(tmp_path)
    first.add(_result(0))
    first.flush()
    second = ResultWriter(tmp_path, csv_copy=True)
    second.add(_result(1))
    second.flush()
    with open(tmp_path / CSV_FILE) as f:
        rows = list(csv.DictReader(f))
    assert [r["scenario_id"] for r in rows] == ["id-0000", "id-0001"]
    assert rows[0]["error"] == "RuntimeError: failure 0"


def test_a_directory_with_a_csv_copy_keeps_it_when_resumed_without_csv(tmp_path: Path) -> None:
    first = ResultWriter(tmp_path, csv_copy=True)
    first.add(_result(0))
    first.flush()
    second = ResultWriter(tmp_path)
    second.add(_result(1))
    second.flush()
    ResultWriter(tmp_path)  # reopening must not truncate the CSV
    assert len(_lines(tmp_path, CSV_FILE)) == 1 + 2


def test_a_directory_without_results_reads_as_an_empty_table(tmp_path: Path) -> None:
    frame = read_results(tmp_path)
    assert frame.empty
    assert list(frame.columns) == ROW_SCHEMA.names
