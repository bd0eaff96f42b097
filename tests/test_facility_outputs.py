"""A design's facility figures reach every output (issue 17, fixB): the text tables (wide and
narrow) show racks, floor positions, the fullest rack and cooling when a facility flag is
given; sweep scenario rows and batch result rows carry floor_positions, cooling and rack_kw
like the tco_* columns."""

from __future__ import annotations

import pyarrow as pa
import pytest
from cli_support import SMALL_SCENARIO, run
from rich.console import Console

from client.narrow import narrow_designs_table
from client.render import FACILITY_HEADERS, asks_about_facility, designs_table
from client.sweep import DESIGN_COLUMNS as SWEEP_COLUMNS
from client.sweep import Outcome
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.batch.tasks import _response_columns
from optimizer.batch.writer import ROW_SCHEMA
from optimizer.rows import FACILITY_COLUMNS

FEASIBLE = (*SMALL_SCENARIO, "--target-hours", "8", "--top-k", "1")


def _response() -> optimize_pb2.OptimizeResponse:
    design = optimize_pb2.Design(
        rank=1, gpus=16, racks=3, floor_positions=4, rack_kw=28.6, cooling="liquid"
    )
    return optimize_pb2.OptimizeResponse(status="OPTIMAL", designs=[design])


def _text(table: object, width: int) -> str:
    console = Console(width=width, record=True)
    console.print(table)
    return console.export_text()


def test_a_facility_flag_adds_racks_floor_positions_and_cooling_to_the_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "optimize", *FEASIBLE, "--max-floor-positions", "10")
    assert result.code == 0, result.err
    assert "racks/floor" in result.out or "floor pos" in result.out


def test_without_a_facility_flag_the_table_keeps_its_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "optimize", *FEASIBLE)
    assert result.code == 0, result.err
    assert "racks/floor" not in result.out and "floor pos" not in result.out


@pytest.mark.parametrize(
    "constraints",
    [
        {"max_racks": 2},
        {"max_floor_positions": 2},
        {"max_rack_kw": 30.0},
        {"rack_power_kw": 30.0},
        {"cooling": "air"},
    ],
)
def test_each_facility_limit_asks_for_the_facility_columns(constraints: dict[str, object]) -> None:
    req = optimize_pb2.OptimizeRequest(constraints=optimize_pb2.Constraints(**constraints))
    assert asks_about_facility(req)


def test_a_power_cap_alone_does_not_add_columns() -> None:
    req = optimize_pb2.OptimizeRequest(constraints=optimize_pb2.Constraints(max_power_kw=100))
    assert not asks_about_facility(req)


def test_the_wide_table_shows_each_figure() -> None:
    text = _text(designs_table(_response(), "t", show_facility=True), 240)
    for header in FACILITY_HEADERS:
        assert header in text
    assert "28.6" in text and "liquid" in text


def test_the_narrow_table_shows_racks_floor_and_cooling_under_the_power() -> None:
    text = _text(narrow_designs_table(_response(), "t", show_facility=True), 80)
    assert "3/4" in text and "28.6 liquid" in text


def test_sweep_rows_carry_the_facility_columns() -> None:
    outcome = Outcome(1, optimize_pb2.OptimizeRequest(catalog="c"), _response())
    row = outcome.row()
    assert set(FACILITY_COLUMNS) <= set(SWEEP_COLUMNS)
    assert (row["floor_positions"], row["cooling"], row["rack_kw"]) == (4, "liquid", 28.6)


def test_batch_rows_carry_the_facility_columns_in_the_schema() -> None:
    row = _response_columns(_response())
    assert (row["floor_positions"], row["cooling"], row["rack_kw"]) == (4, "liquid", 28.6)
    table = pa.Table.from_pylist([row], schema=pa.schema([ROW_SCHEMA.field(c) for c in row]))
    assert table.column("floor_positions").to_pylist() == [4]
    assert table.column("cooling").to_pylist() == ["liquid"]
