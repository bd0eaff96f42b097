"""`procure optimize`: every output format, plots, request files and the infeasible exit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from cli_support import SMALL_SCENARIO, run
from google.protobuf import json_format
from PIL import Image

from client.plots import DPI, FIGURE_SIZE_IN
from optimizer._pb.procurement.v1 import optimize_pb2

FEASIBLE = (*SMALL_SCENARIO, "--target-hours", "8", "--top-k", "2")
# No design trains BERT-Large on 2e10 tokens in 4 hours for $100,000.
INFEASIBLE = (*SMALL_SCENARIO, "--target-hours", "4", "--budget-usd", "1e5", "--top-k", "1")


def test_table_shows_ranked_designs_and_the_rank_1_bom_with_units(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "optimize", *FEASIBLE)
    assert result.code == 0, result.err
    assert "ranked designs (OPTIMAL" in result.out
    assert "bill of materials, rank 1" in result.out
    assert re.search(r"\$\d{1,3}(,\d{3})+ ", result.out)  # dollars, thousands separators
    assert "\x1b[" not in result.out  # no colour codes when stdout is not a terminal


def test_json_parses_into_the_response_message(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "optimize", *FEASIBLE, "--format", "json")
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert result.code == 0 and resp.status == "OPTIMAL"
    assert [d.rank for d in resp.designs] == [1, 2]
    assert resp.designs[0].capex_usd == sum(b.extended_price_usd for b in resp.designs[0].bom)


def test_csv_has_one_row_per_design_with_units_in_column_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "designs.csv"
    result = run(capsys, "optimize", *FEASIBLE, "--format", "csv", "--output", str(out))
    frame = pd.read_csv(out)
    assert result.code == 0 and result.out == ""
    assert list(frame["rank"]) == [1, 2]
    assert {"capex_usd", "training_time_hours", "network_share", "power_kw"} <= set(frame)


def test_xlsx_holds_the_designs_and_the_rank_1_bom(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    book = tmp_path / "plan.xlsx"
    result = run(capsys, "optimize", *FEASIBLE, "--format", "xlsx", "--output", str(book))
    sheets = pd.read_excel(book, sheet_name=None, engine="openpyxl")
    assert result.code == 0
    assert set(sheets) == {"designs", "bom_rank1"}
    bom = sheets["bom_rank1"]
    assert "server" in set(bom["category"])
    assert bom["extended_price_usd"].sum() == pytest.approx(sheets["designs"]["capex_usd"][0])


def test_xlsx_without_an_output_file_names_the_option_and_exits_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "optimize", *FEASIBLE, "--format", "xlsx")
    assert result.code == 3
    assert result.err.startswith("error: --output:") and "Traceback" not in result.err


def test_png_plot_is_an_image_of_the_documented_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    png = tmp_path / "frontier.png"
    result = run(capsys, "optimize", *FEASIBLE, "--plot", str(png))
    assert result.code == 0
    with Image.open(png) as image:
        assert image.format == "PNG"
        assert image.size == (FIGURE_SIZE_IN[0] * DPI, FIGURE_SIZE_IN[1] * DPI)


def test_svg_plot_is_an_svg_document(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    svg = tmp_path / "frontier.svg"
    result = run(capsys, "optimize", *FEASIBLE, "--plot", str(svg), "--format", "json")
    assert result.code == 0
    assert "<svg" in svg.read_text()[:2000]


def test_a_plot_with_an_unknown_suffix_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, "optimize", *FEASIBLE, "--plot", str(tmp_path / "plot.gif"))
    assert result.code == 2
    assert "Invalid value for '--plot'" in result.err and "expected a .png or .svg" in result.err


def test_flags_override_the_fields_of_a_request_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps(
            {
                "workload": {"model": "bert-large", "training_tokens": 2e10},
                "constraints": {"target_training_hours": 1000},
                "top_k": 1,
            }
        )
    )
    result = run(
        capsys,
        "optimize",
        str(request),
        "--catalog",
        SMALL_SCENARIO[1],
        "--target-hours",
        "4",
        "--format",
        "json",
    )
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert result.code == 0
    assert resp.designs[0].training_time_hours <= 4


def test_a_request_file_with_an_unknown_field_names_the_file_and_exits_3(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    request = tmp_path / "request.json"
    request.write_text('{"budget": 1}')
    result = run(capsys, "optimize", str(request))
    assert result.code == 3
    assert result.err.startswith("error: request.json:") and result.err.count("\n") == 1


def test_an_infeasible_scenario_says_why_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "optimize", *INFEASIBLE)
    assert result.code == 0
    assert "No design: " in result.out and "budget" in result.out


def test_fail_on_infeasible_exits_4(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "optimize", *INFEASIBLE, "--fail-on-infeasible", "--format", "json")
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert result.code == 4
    assert not resp.designs and resp.diagnosis
