"""`procure sweep`: one row per scenario, the frontier, every output format, scenario files."""

from __future__ import annotations

import itertools
import json
from io import StringIO
from pathlib import Path

import pandas as pd
import pytest
from cli_support import SMALL_SCENARIO, run
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from client.commands.sweep import NumberList
from client.plots import DPI, FIGURE_SIZE_IN
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.reporting.frontier import frontier

# 2 budgets x 2 targets; $100,000 buys no design, so two rows say why.
GRID = (*SMALL_SCENARIO, "--budgets", "1e5,2e6", "--targets", "8,24")


def _dominates(a: optimize_pb2.ParetoPoint, b: optimize_pb2.ParetoPoint) -> bool:
    return (
        a.capex_usd <= b.capex_usd
        and a.training_time_hours <= b.training_time_hours
        and (a.capex_usd, a.training_time_hours) != (b.capex_usd, b.training_time_hours)
    )


def test_csv_has_one_row_per_scenario_with_the_rank_1_design_or_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "sweep", *GRID, "--format", "csv")
    rows = pd.read_csv(StringIO(result.out))
    assert result.code == 0
    assert result.err == ""  # no progress bar when stderr is not a terminal
    assert len(rows) == 4
    assert list(zip(rows["budget_usd"], rows["target_training_hours"], strict=True)) == [
        (1e5, 8),
        (1e5, 24),
        (2e6, 8),
        (2e6, 24),
    ]
    poor, rich = rows[rows["budget_usd"] == 1e5], rows[rows["budget_usd"] == 2e6]
    assert poor["gpus"].isna().all() and poor["reason"].str.contains("budget").all()
    assert (rich["capex_usd"] <= 2e6).all() and (
        rich["training_time_hours"] <= rich["target_training_hours"]
    ).all()
    assert {"fabric", "topology", "network_share", "server_sku"} <= set(rows)


def test_json_holds_request_and_response_messages_and_a_non_dominated_frontier(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "sweep", *GRID, "--format", "json")
    doc = json.loads(result.out)
    responses = [
        json_format.ParseDict(s["response"], optimize_pb2.OptimizeResponse())
        for s in doc["scenarios"]
    ]
    [frontier_doc] = doc["frontier"]
    front = [json_format.ParseDict(p, optimize_pb2.ParetoPoint()) for p in frontier_doc["points"]]
    assert result.code == 0 and len(responses) == 4
    assert frontier_doc["workload"] == "bert-large, 2e+10 tokens"
    for s in doc["scenarios"]:
        json_format.ParseDict(s["request"], optimize_pb2.OptimizeRequest())
    designs = [d for r in responses for d in r.designs]
    assert front and not any(_dominates(p, q) for p in front for q in front)
    assert not any(_dominates(_point(d), p) for d in designs for p in front)


def _point(d: optimize_pb2.Design) -> optimize_pb2.ParetoPoint:
    return optimize_pb2.ParetoPoint(
        capex_usd=d.capex_usd, training_time_hours=d.training_time_hours
    )


def test_table_lists_scenarios_reasons_and_the_frontier(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "sweep", *GRID, "--top-k", "1")
    assert result.code == 0
    assert "budget sweep: 4 scenarios" in result.out
    assert "$2,000,000" in result.out and "no design" in result.out
    assert "scenario 1: no design: " in result.out
    assert "cost-time Pareto frontier" in result.out


def test_each_workload_gets_its_own_frontier(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys,
        "sweep",
        "--catalog",
        SMALL_SCENARIO[1],
        "--workload",
        "bert-large",
        "--workload",
        "llama3-8b",
        "--tokens",
        "2e10",
        "--targets",
        "24",
        "--top-k",
        "1",
        "--format",
        "json",
    )
    doc = json.loads(result.out)
    assert result.code == 0
    assert [f["workload"] for f in doc["frontier"]] == [
        "bert-large, 2e+10 tokens",
        "llama3-8b, 2e+10 tokens",
    ]


def test_xlsx_and_png_together(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    book, png = tmp_path / "sweep.xlsx", tmp_path / "sweep.png"
    result = run(
        capsys, "sweep", *GRID, "--format", "xlsx", "--output", str(book), "--plot", str(png)
    )
    sheets = pd.read_excel(book, sheet_name=None, engine="openpyxl")
    assert result.code == 0
    assert set(sheets) == {"scenarios", "frontier"} and len(sheets["scenarios"]) == 4
    assert {"workload", "capex_usd", "training_time_hours", "fabric"} <= set(sheets["frontier"])
    with Image.open(png) as image:
        assert image.size == (FIGURE_SIZE_IN[0] * DPI, FIGURE_SIZE_IN[1] * DPI)


def test_fail_on_infeasible_exits_4_when_any_scenario_has_no_design(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(
        capsys,
        "sweep",
        *SMALL_SCENARIO,
        "--budgets",
        "1e5",
        "--targets",
        "8",
        "--fail-on-infeasible",
        "--format",
        "csv",
    )
    assert result.code == 4


def test_a_budget_only_grid_minimises_time(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "sweep", *SMALL_SCENARIO, "--budgets", "4e5", "--format", "json")
    doc = json.loads(result.out)
    assert result.code == 0
    assert doc["scenarios"][0]["request"]["objective"] == "min_time"


@pytest.mark.parametrize("suffix", ["yaml", "json", "csv"])
def test_a_scenario_file_gives_one_row_per_scenario(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str
) -> None:
    catalog = SMALL_SCENARIO[1]
    scenarios = [
        {
            "catalog": catalog,
            "workload": {"model": "bert-large", "training_tokens": 2e10},
            "constraints": {"target_training_hours": t},
        }
        for t in (8, 24)
    ]
    path = tmp_path / f"scenarios.{suffix}"
    if suffix == "csv":
        path.write_text(
            "catalog,model,training_tokens,target_training_hours\n"
            f"{catalog},bert-large,2e10,8\n{catalog},bert-large,2e10,24\n"
        )
    else:  # JSON is YAML too
        path.write_text(json.dumps({"scenarios": scenarios}))
    result = run(capsys, "sweep", "--scenarios", str(path), "--top-k", "1", "--format", "json")
    doc = json.loads(result.out)
    assert result.code == 0
    assert [s["request"]["constraints"]["target_training_hours"] for s in doc["scenarios"]] == [
        8,
        24,
    ]
    assert all(s["request"]["top_k"] == 1 for s in doc["scenarios"])


def test_grid_flags_with_a_scenario_file_are_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("catalogs: [x]\n")
    result = run(capsys, "sweep", "--scenarios", str(path), "--budgets", "1e6")
    assert result.code == 2 and "--budgets" in result.err and "Traceback" not in result.err


def test_a_bad_number_list_names_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "sweep", *SMALL_SCENARIO, "--budgets", "1e6,lots")
    assert result.code == 2
    assert "--budgets" in result.err and "'1e6,lots'" in result.err


def test_a_sweep_without_budgets_or_targets_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "sweep", *SMALL_SCENARIO)
    assert result.code == 2 and "--budgets or --targets" in result.err


@given(st.floats(1, 1e9), st.floats(1, 1e9), st.integers(2, 200))
def test_a_start_stop_count_range_has_count_values_from_start_to_stop(
    start: float, stop: float, count: int
) -> None:
    values = NumberList().convert(f"{start!r}:{stop!r}:{count}", None, None)
    assert len(values) == count
    assert values[0] == start and values[-1] == pytest.approx(stop)
    steps = [b - a for a, b in itertools.pairwise(values)]
    assert all(s >= 0 for s in steps) or all(s <= 0 for s in steps)


_points = st.lists(
    st.builds(
        optimize_pb2.ParetoPoint,
        capex_usd=st.integers(1, 50).map(float),
        training_time_hours=st.integers(1, 50).map(float),
    ),
    max_size=30,
)


@given(_points)
def test_the_frontier_is_exactly_the_non_dominated_points(
    points: list[optimize_pb2.ParetoPoint],
) -> None:
    front = frontier(points)
    key = {(p.capex_usd, p.training_time_hours) for p in front}
    assert not any(_dominates(q, p) for p in front for q in points)
    assert all(
        (p.capex_usd, p.training_time_hours) in key or any(_dominates(f, p) for f in front)
        for p in points
    )
    assert [p.capex_usd for p in front] == sorted(p.capex_usd for p in front)
