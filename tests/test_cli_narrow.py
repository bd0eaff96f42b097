"""An 80-column terminal: tables wrap descriptive cells but never cut a headline number, and
quantities carry their unit (fiber in metres)."""

from __future__ import annotations

import json

import pytest
from cli_support import SMALL_SCENARIO, run, run_process
from google.protobuf import json_format
from rich.console import Console

from client import render
from client.render import hours, money
from optimizer._pb.procurement.v1 import optimize_pb2

FEASIBLE = (*SMALL_SCENARIO, "--target-hours", "8", "--top-k", "3")
COLUMNS_80 = {"COLUMNS": "80"}


def _response(capsys: pytest.CaptureFixture[str]) -> optimize_pb2.OptimizeResponse:
    result = run(capsys, "optimize", *FEASIBLE, "--format", "json")
    assert result.code == 0
    return json_format.Parse(result.out, optimize_pb2.OptimizeResponse())


def test_optimize_at_80_columns_prints_every_capex_and_time_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    resp = _response(capsys)
    table = run_process("optimize", *FEASIBLE, env=COLUMNS_80)
    assert table.code == 0
    assert max(len(line) for line in table.out.splitlines()) <= 80
    assert "…" not in table.out
    for d in resp.designs:
        assert money(d.capex_usd) in table.out
        assert hours(d.training_time_hours) in table.out
        assert (
            f"{hours(d.training_time_hours_low)}-{hours(d.training_time_hours_high)}" in table.out
        )
    assert "total" in table.out and money(resp.designs[0].capex_usd) in table.out


def test_optimize_on_a_wide_terminal_keeps_one_column_per_quantity(
    capsys: pytest.CaptureFixture[str],
) -> None:
    table = run_process("optimize", *FEASIBLE, env={"COLUMNS": "200"})
    assert "range (h)" in table.out and "power (kW)" in table.out


def test_a_big_design_at_80_columns_keeps_nine_digit_capex_whole() -> None:
    design = optimize_pb2.Design(
        rank=1,
        gpus=16384,
        server_sku="SYS-8125GS-TNHR",
        fabric="infiniband",
        topology="fat_tree",
        oversubscription=1.0,
        capex_usd=645_665_792.0,
        training_time_hours=586.0,
        training_time_hours_low=539.0,
        training_time_hours_high=12_651.0,
        power_kw=21_404.0,
        binding=["budget", "power"],
        racks=512,
        bom=[
            optimize_pb2.BomLine(
                category="server",
                sku="SYS-8125GS-TNHR",
                vendor="Supermicro",
                quantity=2048,
                unit_price_usd=296_644.0,
                extended_price_usd=607_526_912.0,
                tier="node",
            )
        ],
    )
    resp = optimize_pb2.OptimizeResponse(status="OPTIMAL", designs=[design])
    console = Console(width=80, record=True, no_color=True)
    render.print_optimize(resp, console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    for whole in ("$645,665,792", "$607,526,912", "$296,644.00", "586", "539-12,651", "2,048"):
        assert whole in text


def test_the_fiber_line_shows_metres_and_price_per_metre() -> None:
    fiber = optimize_pb2.BomLine(
        category="fiber",
        sku="FIBER-OM4-MPO12",
        vendor="generic",
        quantity=67_584,
        unit_price_usd=2.5,
        extended_price_usd=168_960.0,
        tier="torus",
        length_m=10.2,
    )
    design = optimize_pb2.Design(rank=1, capex_usd=168_960.0, racks=1, bom=[fiber])
    for width in (80, 200):
        console = Console(width=width, record=True, no_color=True)
        render.print_optimize(optimize_pb2.OptimizeResponse(designs=[design]), console)
        text = console.export_text()
        assert "67,584 m" in text and "$2.50/m" in text, text


def test_sweep_at_80_columns_prints_capex_and_time_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    grid = ("sweep", *SMALL_SCENARIO, "--budgets", "1e5,1e6", "--targets", "8")
    doc = json.loads(run(capsys, *grid, "--format", "json").out)
    table = run_process(*grid, env=COLUMNS_80)
    assert table.code == 0 and "…" not in table.out
    assert max(len(line) for line in table.out.splitlines()) <= 80
    for scenario in doc["scenarios"]:
        for d in scenario["response"]["designs"][:1]:
            assert money(d["capex_usd"]) in table.out
            assert hours(d["training_time_hours"]) in table.out
