"""A rack-scale system in the facility (issue 16, rackscale): one rack position of its own at
its own power, held to a stated per-rack limit, never to the 42 kW packing default.

The fixture (tests/data/rack_scale_bom) holds one GB200 NVL72-like rack: 72 GPUs, 132 kW,
liquid-only. BERT-Large fits one rack, so the optimizer's answer is a single rack.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from cli_support import run
from optimizer_fixtures import spec_for

from optimizer.catalog import load_catalog
from optimizer.errors import InvalidInput
from optimizer.optimize.facility import facility_layout
from optimizer.optimize.request import OptimizeSpec
from optimizer.optimize.result import OptimizeResult
from optimizer.optimize.search import _most_nodes_under_caps
from optimizer.optimize.solve import optimize
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.plan import physical_plan

FIXTURE = Path(__file__).parent / "data" / "rack_scale_bom"
CATALOG = load_catalog(FIXTURE)
RACK = CATALOG.servers[0]


def rack_design(racks: int, layout: Layout | None = None) -> Design:
    return Design(
        RACK.sku,
        racks,
        "NIC-CX7-400",
        72,
        "infiniband",
        "fat_tree",
        switch_skus=("SW-QM9790",),
        layout=layout or Layout(),
    )


def one_rack_spec(**constraints: object) -> OptimizeSpec:
    """BERT-Large in 720 h: one rack of 72 GPUs is enough."""
    return spec_for(target_hours=720.0, top_k=1, max_nodes=36, topologies=(), **constraints)


def solve(spec: OptimizeSpec) -> OptimizeResult:
    return optimize(CATALOG, spec)


def test_the_fixture_row_is_rack_scale_and_an_8_gpu_server_is_not() -> None:
    assert RACK.rack_scale
    assert not replace(RACK, gpus_per_node=8, gpus_per_host=None, scale_up_gpus=None).rack_scale


def test_without_a_stated_limit_each_rack_scale_unit_takes_one_rack() -> None:
    placement = physical_plan(rack_design(3), CATALOG).placement
    assert (placement.nodes_per_rack, placement.server_racks) == (1, 3)


def test_an_ordinary_server_still_packs_by_the_default_rack_power() -> None:
    hgx = replace(RACK, gpus_per_node=8, gpus_per_host=None, power_kw=10.2, rack_units=8)
    assert Layout().servers_per_rack(hgx, 10.2) == 4


def test_a_stated_rack_limit_below_the_rack_refuses_it_naming_the_flag() -> None:
    limited = Layout(rack_power_kw=40.0, rack_power_stated=True)
    with pytest.raises(InvalidInput) as refused:
        limited.servers_per_rack(RACK, RACK.power_kw)
    assert refused.value.field == "constraints.max_rack_kw"
    assert "rack-scale system bought and placed as one rack drawing 132 kW" in str(refused.value)
    assert "--max-rack-kw of at least 132" in str(refused.value)


def test_a_stated_limit_is_marked_so_in_the_facility_layout() -> None:
    assert not facility_layout(one_rack_spec()).rack_power_stated
    assert facility_layout(replace(one_rack_spec(), rack_power_kw=150.0)).rack_power_stated
    assert facility_layout(one_rack_spec(cooling="air")).rack_power_stated  # the air ceiling


def test_liquid_racks_add_their_rows_cdu_to_the_floor_positions() -> None:
    placement = physical_plan(rack_design(3), CATALOG).placement
    assert placement.cdu_positions == 1
    assert placement.floor_positions == 3 + placement.network_racks + 1


def test_without_a_limit_the_optimizer_places_the_rack_alone_at_its_power() -> None:
    best = solve(one_rack_spec()).designs[0]
    assert (best.design.server_sku, best.design.nodes) == (RACK.sku, 1)
    assert (best.bom.racks, best.floor_positions, best.rack_kw, best.cooling) == (
        1,
        2,
        132.0,
        "liquid",
    )


def test_a_liquid_facility_without_a_stated_limit_admits_the_rack() -> None:
    assert solve(one_rack_spec(cooling="liquid")).designs


def test_a_rack_cap_counts_the_unit_as_one_rack() -> None:
    assert solve(one_rack_spec(max_racks=1)).designs
    spec = one_rack_spec(max_racks=3)  # the size search's bound: three racks, three units
    assert _most_nodes_under_caps(spec, RACK, facility_layout(spec)) == 3


def test_a_limit_at_the_racks_power_admits_it() -> None:
    assert solve(replace(one_rack_spec(), rack_power_kw=132.0)).designs


def test_an_air_facility_refuses_the_liquid_rack_and_names_liquid_cooling() -> None:
    result = solve(one_rack_spec(cooling="air"))
    assert result.designs == ()
    assert "--cooling liquid" in result.diagnosis


def test_procure_max_rack_kw_40_refuses_the_nvl72_and_says_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = run(
        capsys,
        *("optimize", "--catalog", str(FIXTURE), "--workload", "bert-large"),
        *("--target-hours", "720", "--max-rack-kw", "40", "--format", "json"),
    )
    said = " ".join(done.out.split())
    assert "raise --max-rack-kw to 132 kW (from 40 kW)" in said
    assert "GB200-NVL72 is a rack-scale system placed as one whole rack of 132 kW" in said
    assert "not split across racks" in said
