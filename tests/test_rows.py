"""optimizer.rows: the one place a Design becomes a flat row (optimize csv/xlsx, sweep, batch)."""

from __future__ import annotations

import pytest

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.rows import DESIGN_COLUMNS, design_row, rank1_row

DESIGN = optimize_pb2.Design(
    rank=1,
    gpus=64,
    server_sku="=HYPERLINK()",
    nic_sku="CX7",
    capex_usd=2.5e6,
    training_time_hours=120.0,
    binding=["budget", "power"],
    cost=optimize_pb2.CostBreakdown(network_share=0.12),
)


def test_a_design_fills_every_column_in_table_order() -> None:
    row = design_row(DESIGN)
    assert tuple(row) == DESIGN_COLUMNS
    assert row["capex_usd"] == 2.5e6 and row["network_share"] == pytest.approx(0.12)
    assert row["binding"] == "budget;power"


def test_no_design_keeps_the_row_shape_with_empty_values() -> None:
    assert design_row(None, ("gpus", "capex_usd")) == {"gpus": None, "capex_usd": None}


def test_the_text_transform_touches_only_catalog_text() -> None:
    row = design_row(DESIGN, ("server_sku", "fabric", "gpus"), text=lambda s: "'" + s)
    assert row == {"server_sku": "'=HYPERLINK()", "fabric": "", "gpus": 64}


def test_an_unknown_column_is_refused_by_name() -> None:
    with pytest.raises(KeyError, match="'price'"):
        design_row(DESIGN, ("gpus", "price"))


def test_rank1_row_is_the_first_design_or_empty() -> None:
    response = optimize_pb2.OptimizeResponse(designs=[DESIGN, optimize_pb2.Design(rank=2)])
    assert rank1_row(response, ("rank",)) == {"rank": 1}
    assert rank1_row(optimize_pb2.OptimizeResponse(), ("rank",)) == {"rank": None}
