"""In-network reduction where the switches offer it (issue 14, sharp).

The catalog's optional ``switches.in_network_reduction`` column says which switches reduce in
the network (InfiniBand SHARP); the optimizer estimates a design with in-network reduction
only when every switch of its BOM offers it, and check_bom refuses a false claim.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.canonical import canonical_json
from optimizer.catalog.model import Catalog, Switch
from optimizer.catalog.resolve import resolve_catalog
from optimizer.catalog.store import CatalogStore
from optimizer.optimize.candidates import (
    IN_NETWORK_NOTE,
    EstimateCache,
    Parts,
    SearchSpace,
    TimeKey,
    candidate_plans,
)
from optimizer.optimize.dominance import prune_dominated
from optimizer.optimize.solve import optimize
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.plan import physical_plan
from tests.catalog_files import TODAY, add_column, copy_small, read_rows, set_cell
from tests.optimizer_fixtures import spec_for, switch, tiny_catalog

SHARP_SW = replace(switch("SW-SHARP", "infiniband", 30_000), in_network_reduction=True)
PLAIN_SW = switch("SW-PLAIN", "infiniband", 29_000)


def _catalog(*switches: Switch) -> Catalog:
    """The tiny optimizer catalog with only ``switches`` (InfiniBand fabrics)."""
    return replace(tiny_catalog(), switches=switches)


def _space(catalog: Catalog) -> SearchSpace:
    return SearchSpace(catalog, spec_for(fabrics=("infiniband",), topologies=("fat_tree",)))


def _keys(catalog: Catalog) -> list[tuple[TimeKey, Parts]]:
    """Non-blocking fat-tree keys of SRV-A with two NICs per node."""
    return [
        (k, parts)
        for k, parts in _space(catalog).keys()  # noqa: SIM118 - SearchSpace is not a mapping
        if k.server_sku == "SRV-A" and k.nics_per_node == 2 and k.oversubscription == 1.0
    ]


def _timer(catalog: Catalog) -> EstimateCache:
    space = _space(catalog)
    return EstimateCache(
        space.spec.workload, {s.sku: s for s in space.servers}, space.spec.confidence
    )


# ------------------------------------------------------------------ the catalog column
def test_the_column_is_parsed_from_switches_csv(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    add_column(folder, "switches", "in_network_reduction", "false")
    set_cell(folder, "switches", 2, "in_network_reduction", "true")  # SW-QM9790
    flags = {s.sku: s.in_network_reduction for s in load_catalog(folder, today=TODAY).switches}
    assert flags == {"SW-QM9790": True, "SW-SN4600C": False}


def test_a_switches_csv_without_the_column_offers_no_in_network_reduction(
    tmp_path: Path,
) -> None:
    folder = copy_small(tmp_path)
    assert "in_network_reduction" not in read_rows(folder, "switches")[0]
    assert not any(s.in_network_reduction for s in load_catalog(folder, today=TODAY).switches)


def test_a_bad_value_names_the_table_row_and_column(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    add_column(folder, "switches", "in_network_reduction", "false")
    set_cell(folder, "switches", 3, "in_network_reduction", "yes")
    report = load_catalog_report(folder, today=TODAY)
    assert [(p.table, p.row, p.column, p.value) for p in report.errors] == [
        ("switches", 3, "in_network_reduction", "yes")
    ]
    assert "true or false" in report.errors[0].expected


def test_an_ethernet_switch_cannot_claim_in_network_reduction(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    add_column(folder, "switches", "in_network_reduction", "false")
    set_cell(folder, "switches", 3, "in_network_reduction", "true")  # SW-SN4600C, Ethernet
    report = load_catalog_report(folder, today=TODAY)
    assert [(p.table, p.row, p.column) for p in report.errors] == [
        ("switches", 3, "in_network_reduction")
    ]
    assert "InfiniBand" in report.errors[0].expected


def test_the_flag_round_trips_through_the_store(tmp_path: Path) -> None:
    catalog = resolve_catalog("infiniband-ndr")
    assert all(s.in_network_reduction for s in catalog.switches)
    with CatalogStore(tmp_path / "data") as store:
        info = store.put(catalog, tenant="acme")
        back = store.get(info.id, tenant="acme")
    assert canonical_json(back) == canonical_json(catalog)
    assert {s.sku: s.in_network_reduction for s in back.switches} == {
        "MQM9700-NS2F": True,
        "MQM9790-NS2F": True,
    }


def test_a_catalog_without_sharp_switches_keeps_its_canonical_bytes() -> None:
    """The field is left out while false, so catalogs stored before keep their ids."""
    catalog = _catalog(PLAIN_SW)
    assert b"in_network_reduction" not in canonical_json(catalog)
    assert b"in_network_reduction" in canonical_json(_catalog(SHARP_SW))


def test_bundled_sharp_switches_are_the_quantum_ones() -> None:
    offered = {
        s.sku
        for name in ("infiniband-ndr", "gen-2026", "roce-spectrum", "ethernet-budget")
        for s in resolve_catalog(name).switches
        if s.in_network_reduction
    }
    assert offered == {"MQM9700-NS2F", "MQM9790-NS2F", "Q3400-RA"}


# ------------------------------------------------------------------ the optimizer
def test_sharp_switches_make_a_key_estimated_with_in_network_reduction() -> None:
    keys = _keys(_catalog(SHARP_SW))
    assert [k.in_network_reduction for k, _ in keys] == [True]
    timer = _timer(_catalog(SHARP_SW))
    key = keys[0][0]
    sharp = timer.estimate(key, 4)
    plain = timer.estimate(replace(key, in_network_skus=frozenset()), 4)
    assert sharp is not None and plain is not None
    assert sharp.breakdown.data_parallel_s < plain.breakdown.data_parallel_s
    assert IN_NETWORK_NOTE in sharp.notes and IN_NETWORK_NOTE not in plain.notes


def test_a_sharp_key_is_offered_only_sharp_switches() -> None:
    keys = _keys(_catalog(SHARP_SW, PLAIN_SW))
    by_flag = {k.in_network_reduction: {w.sku for _, w in parts if w} for k, parts in keys}
    assert by_flag[True] == {"SW-SHARP"}


def test_the_plain_key_never_builds_an_all_sharp_fabric() -> None:
    """Its all-SHARP designs are the SHARP key's, faster at the same price."""
    catalog = _catalog(SHARP_SW, PLAIN_SW)
    key, parts = next((k, p) for k, p in _keys(catalog) if not k.in_network_reduction)
    plans = candidate_plans(key, 4, parts, catalog, Layout(), ("fat_tree",))
    assert plans
    assert all({d.sku for d in p.switches} != {"SW-SHARP"} for p in plans)


def _design(*skus: str) -> Design:
    return Design(
        server_sku="SRV-A",
        nodes=4,
        nic_sku="NIC-VPI",
        nics_per_node=2,
        fabric="infiniband",
        topology="fat_tree",
        switch_skus=skus,
    )


def test_a_bom_with_a_non_sharp_switch_is_never_credited() -> None:
    catalog = _catalog(SHARP_SW, PLAIN_SW)
    timer = _timer(catalog)
    for key, _ in _keys(catalog):
        timer.estimate(key, 4)  # the SHARP key makes SW-SHARP known as SHARP
    sharp = timer.reestimate(_design("SW-SHARP"), physical_plan(_design("SW-SHARP"), catalog))
    plain = timer.reestimate(_design("SW-PLAIN"), physical_plan(_design("SW-PLAIN"), catalog))
    assert sharp is not None and plain is not None
    assert IN_NETWORK_NOTE in sharp.notes
    assert IN_NETWORK_NOTE not in plain.notes


def test_check_bom_refuses_a_claim_the_switches_do_not_back() -> None:
    catalog = _catalog(SHARP_SW, PLAIN_SW)
    plain = _design("SW-PLAIN")
    bom = build_bom(plain, catalog)
    assert check_bom(plain, bom, catalog) == []
    found = check_bom(plain, bom, catalog, in_network_reduction=True)
    assert [v.code for v in found] == ["in-network"]
    assert "SW-PLAIN" in found[0].message


def test_check_bom_accepts_the_claim_on_sharp_switches() -> None:
    catalog = _catalog(SHARP_SW, PLAIN_SW)
    sharp = _design("SW-SHARP")
    assert check_bom(sharp, build_bom(sharp, catalog), catalog, in_network_reduction=True) == []


def test_a_sharp_switch_is_not_pruned_by_a_cheaper_plain_one() -> None:
    pruned = prune_dominated(_catalog(SHARP_SW, PLAIN_SW))
    assert {s.sku for s in pruned.switches} == {"SW-SHARP", "SW-PLAIN"}


def test_a_plain_switch_is_pruned_by_a_cheaper_sharp_one() -> None:
    dearer = replace(PLAIN_SW, price_cents=SHARP_SW.price_cents + 100)
    assert {s.sku for s in prune_dominated(_catalog(SHARP_SW, dearer)).switches} == {"SW-SHARP"}


@pytest.mark.parametrize(("switch_", "sharp"), [(SHARP_SW, True), (PLAIN_SW, False)])
def test_the_ranked_design_says_when_sharp_is_used(switch_: Switch, sharp: bool) -> None:
    spec = spec_for(target_hours=1e6, fabrics=("infiniband",), topologies=("fat_tree",))
    result = optimize(_catalog(switch_), replace(spec, top_k=1))
    (rank1,) = result.designs
    assert rank1.design.switch_skus == (switch_.sku,)
    assert ("(SHARP)" in rank1.explanation) is sharp
