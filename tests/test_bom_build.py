"""build_bom: line items, volume breaks, stock-aware link choice, and the shared profile."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from optimizer.catalog import load_catalog
from optimizer.errors import InvalidInput
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.export import bom_to_frame, safe_text, write_bom
from optimizer.topology.layout import link_options
from optimizer.topology.plan import physical_plan
from tests.topology_fixtures import topology_catalog

CAT = topology_catalog()
CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"


def _design(**kw) -> Design:
    base = {
        "server_sku": "SRV-H100",
        "nodes": 64,
        "nic_sku": "CX7-400",
        "nics_per_node": 8,
        "fabric": "infiniband",
        "topology": "fat_tree",
        "switch_skus": ("NDR-64",),
    }
    return Design(**{**base, **kw})


def _qty(bom, **match) -> int:
    return sum(
        ln.quantity for ln in bom.lines if all(getattr(ln, k) == v for k, v in match.items())
    )


def test_bom_lists_every_category_with_extended_prices():
    bom = build_bom(_design(), CAT)
    assert {ln.category for ln in bom.lines} == {
        "server",
        "nic",
        "switch",
        "transceiver",
        "fiber",
        "cable",
    }
    assert all(ln.extended_price_cents == ln.unit_price_cents * ln.quantity for ln in bom.lines)
    assert bom.network_cents == bom.capex_cents - _qty(bom, category="server") * 30_000_000


def test_cheapest_reaching_part_is_chosen_per_group():
    bom = build_bom(_design(), CAT)
    # Packed leaves are top-of-rack (3 m): copper; uplinks cross the row: multimode optics.
    assert _qty(bom, tier="node-leaf", sku="IB-DAC-3M") == 512
    assert _qty(bom, tier="leaf-spine", sku="IB-SR4") == 2 * 512


def test_volume_break_applies_to_the_total_across_tiers():
    # 128 leaves + 128 spines + 64 cores of one SKU: the >= 64 break applies to every line.
    bom = build_bom(_design(nodes=512, topology="rail_optimized"), CAT)
    switch_lines = [ln for ln in bom.lines if ln.category == "switch"]
    assert len(switch_lines) == 3
    assert {ln.unit_price_cents for ln in switch_lines} == {3_400_000}


def test_stock_shortfall_moves_the_rest_to_the_next_cheapest_option():
    cheap_aoc = dataclasses.replace(
        CAT,
        links=tuple(
            dataclasses.replace(lk, price_cents=50_000) if lk.sku == "IB-AOC-30M" else lk
            for lk in CAT.links
        ),
    )
    design = _design(topology="rail_optimized")
    bom = build_bom(design, cheap_aoc)
    assert _qty(bom, sku="IB-AOC-30M") == 300  # all the stock
    assert (
        _qty(bom, tier="node-leaf", category="transceiver") // 2
        + _qty(bom, tier="node-leaf", sku="IB-AOC-30M")
        == 512
    )
    assert check_bom(design, bom, cheap_aoc) == []


def test_an_explicit_link_choice_is_priced_as_given():
    design = _design(topology="rail_optimized")
    plan = physical_plan(design, CAT)
    choice = {
        d.group: [(link_options(d.length_m, 400, "infiniband", CAT)[-1], d.count)]
        for d in plan.links
    }
    bom = build_bom(design, CAT, choice)
    assert bom.capex_cents > build_bom(design, CAT).capex_cents
    assert check_bom(design, bom, CAT) == []


def test_a_link_choice_with_the_wrong_count_is_refused():
    design = _design()
    plan = physical_plan(design, CAT)
    choice = {
        d.group: [(link_options(d.length_m, 400, "infiniband", CAT)[0], d.count - 1)]
        for d in plan.links
    }
    with pytest.raises(InvalidInput) as e:
        build_bom(design, CAT, choice)
    assert e.value.field == "link_choice.node-leaf"


def test_no_part_reaching_a_group_is_refused():
    short = dataclasses.replace(CAT, links=tuple(lk for lk in CAT.links if lk.reach_m <= 3))
    with pytest.raises(InvalidInput, match="reaches") as e:
        build_bom(_design(), short)
    assert e.value.field == "links.leaf-spine"


def test_oversubscription_shows_in_the_bom_and_in_the_profile():
    full = _design(nodes=256)
    over = _design(nodes=256, oversubscription=3.0)
    bom_full, bom_over = build_bom(full, CAT), build_bom(over, CAT)
    assert _qty(bom_over, tier="spine") < _qty(bom_full, tier="spine")
    assert _qty(bom_over, tier="leaf-spine", category="transceiver") < _qty(
        bom_full, tier="leaf-spine", category="transceiver"
    )
    profile_full = physical_plan(full, CAT).sizing.profile
    profile_over = physical_plan(over, CAT).sizing.profile
    assert profile_over.oversubscription == 3.0 > profile_full.oversubscription
    assert profile_over.bisection_ratio < profile_full.bisection_ratio


def test_rail_optimization_shows_in_the_cabling_and_in_the_profile():
    packed = _design(nodes=128)
    rails = _design(nodes=128, topology="rail_optimized")
    # Rail leaves serve 32 nodes across 8 racks: node links leave the rack and need optics.
    assert _qty(build_bom(packed, CAT), tier="node-leaf", category="cable") == 1024
    assert _qty(build_bom(rails, CAT), tier="node-leaf", category="transceiver") == 2048
    assert physical_plan(rails, CAT).sizing.profile.rail_optimized
    assert not physical_plan(packed, CAT).sizing.profile.rail_optimized


@pytest.mark.parametrize(
    ("catalog", "design"),
    [
        (
            "infiniband-ndr",
            Design(
                "DGX-H100",
                127,
                "MCX75310AAS-NEAT",
                8,
                "infiniband",
                "rail_optimized",
                switch_skus=("MQM9790-NS2F",),
            ),
        ),
        (
            "roce-spectrum",
            Design(
                "SYS-A22GA-NBRT",
                64,
                "BCM957608-P1400GDF",
                8,
                "roce",
                "fat_tree",
                switch_skus=("SN5600",),
            ),
        ),
        (
            "ethernet-budget",
            Design(
                "L40S-8GPU-4U",
                8,
                "E810-CQDA2",
                2,
                "ethernet",
                "single_switch",
                switch_skus=("SN4600C",),
            ),
        ),
    ],
)
def test_bundled_catalogs_build_sound_boms(catalog, design):
    cat = load_catalog(CATALOGS / catalog)
    bom = build_bom(design, cat)
    assert check_bom(design, bom, cat) == []
    assert 0 < bom.network_share < 0.5


def test_formula_like_text_is_prefixed_with_a_quote():
    assert safe_text("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    for start in ("+", "-", "@", "\t", "\r"):
        assert safe_text(start + "x") == "'" + start + "x"
    assert safe_text("MQM9700") == "MQM9700"


def test_frame_has_a_total_row_equal_to_capex():
    bom = build_bom(_design(), CAT)
    frame = bom_to_frame(bom)
    assert list(frame["category"])[-1] == "TOTAL"
    assert frame["extended_price_usd"].iloc[-1] * 100 == bom.capex_cents
    assert sum(frame["extended_price_usd"].iloc[:-1]) == frame["extended_price_usd"].iloc[-1]


def _poisoned_bom():
    bom = build_bom(_design(), CAT)
    line = dataclasses.replace(bom.lines[0], vendor="=cmd|' /C calc'!A0", source="@SUM(A1)")
    return dataclasses.replace(bom, lines=(line, *bom.lines[1:]))


def test_csv_export_is_injection_safe_and_exact(tmp_path):
    path = write_bom(_poisoned_bom(), tmp_path / "bom.csv")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert frame["vendor"].iloc[0] == "'=cmd|' /C calc'!A0"
    assert frame["source"].iloc[0] == "'@SUM(A1)"
    assert frame["unit_price_usd"].iloc[0] == "300000.00"


def test_xlsx_export_writes_no_formulas(tmp_path):
    path = write_bom(_poisoned_bom(), tmp_path / "bom.xlsx")
    sheet = openpyxl.load_workbook(path).active
    cells = [c for row in sheet.iter_rows() for c in row]
    assert all(c.data_type != "f" for c in cells)
    assert sheet.cell(row=2, column=3).value == "'=cmd|' /C calc'!A0"


def test_unknown_export_suffix_is_refused(tmp_path):
    with pytest.raises(InvalidInput) as e:
        write_bom(build_bom(_design(), CAT), tmp_path / "bom.pdf")
    assert e.value.field == "path"


# (A one-node torus is refused since issue 13: its NICs would stay uncabled.)
@pytest.mark.parametrize(("topology", "switches"), [("dragonfly", ("NDR-64",))])
def test_groups_without_links_add_no_lines(topology, switches):
    design = _design(nodes=1, topology=topology, switch_skus=switches)
    bom = build_bom(design, CAT)
    assert all(ln.quantity > 0 for ln in bom.lines)
    assert check_bom(design, bom, CAT) == []
