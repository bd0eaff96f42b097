"""In-network reduction where the switches offer it (issue 14, sharp).

The catalog's optional ``switches.in_network_reduction`` column says which switches reduce in
the network (InfiniBand SHARP); the optimizer estimates a design with in-network reduction
only when every switch of its BOM offers it, and check_bom refuses a false claim.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.enumerator import enumerate_optimum
from optimizer.catalog import load_catalog
from optimizer.catalog.canonical import canonical_json
from optimizer.catalog.model import Catalog, Switch
from optimizer.catalog.resolve import resolve_catalog
from optimizer.catalog.store import CatalogStore
from optimizer.optimize.baseline import rule_of_thumb
from optimizer.optimize.candidates import (
    IN_NETWORK_NOTE,
    EstimateCache,
    Parts,
    SearchSpace,
    TimeKey,
    candidate_plans,
)
from optimizer.optimize.dominance import prune_dominated
from optimizer.optimize.request import Objective
from optimizer.optimize.solve import optimize
from optimizer.performance.cluster import ClusterSpec, server_cluster
from optimizer.performance.estimator import estimate
from optimizer.performance.plan import ParallelPlan
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.plan import physical_plan
from optimizer.topology.sizing import size_network
from optimizer.workload.presets import preset
from tests.catalog_files import TODAY, copy_small, read_rows, the_one_error, with_new_column
from tests.optimizer_fixtures import server, spec_for, switch, tiny_catalog

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
    folder = with_new_column(tmp_path, "switches", "in_network_reduction", "false", 2, "true")
    flags = {s.sku: s.in_network_reduction for s in load_catalog(folder, today=TODAY).switches}
    assert flags == {"SW-QM9790": True, "SW-SN4600C": False}


def test_a_switches_csv_without_the_column_offers_no_in_network_reduction(
    tmp_path: Path,
) -> None:
    folder = copy_small(tmp_path)
    assert "in_network_reduction" not in read_rows(folder, "switches")[0]
    assert not any(s.in_network_reduction for s in load_catalog(folder, today=TODAY).switches)


def test_a_bad_value_names_the_table_row_and_column(tmp_path: Path) -> None:
    error = the_one_error(tmp_path, "switches", "in_network_reduction", "false", 3, "yes")
    assert "true or false" in error.expected


def test_an_ethernet_switch_cannot_claim_in_network_reduction(tmp_path: Path) -> None:
    # line 3 is SW-SN4600C, an Ethernet switch
    error = the_one_error(tmp_path, "switches", "in_network_reduction", "false", 3, "true")
    assert "InfiniBand" in error.expected


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


# ------------------------------------------------------------------ NVLS apart from SHARP
def _h100_cluster(sharp: bool, nvls: bool | None = False) -> ClusterSpec:
    cluster = server_cluster(
        server("SRV-A", 250_000),
        nodes=4,
        fabric="infiniband",
        nic_gbps=400,
        nics_per_node=2,
        topology=size_network("fat_tree", 8, 64).profile,
        in_network_reduction=sharp,
    )
    return replace(cluster, nvls=nvls)


TP8 = ParallelPlan(tensor=8, pipeline=1, data=4, zero_stage=1, micro_batch_size=1)


def test_a_catalog_design_on_sharp_switches_is_timed_alike_inside_the_server() -> None:
    """SHARP is the network's switches, NVLS the server's NVSwitch: a SHARP design gains on
    the data-parallel reduction across nodes, not on the tensor all-reduces inside a node."""
    w = preset("llama3-8b")
    sharp = estimate(w, _h100_cluster(sharp=True), TP8).breakdown
    plain = estimate(w, _h100_cluster(sharp=False), TP8).breakdown
    assert sharp.tensor_parallel_s == plain.tensor_parallel_s
    assert sharp.data_parallel_s < plain.data_parallel_s


def test_the_estimate_requests_one_flag_still_turns_on_nvls() -> None:
    """The request's ``cluster.in_network_reduction`` means SHARP and NVLS (estimate.proto)."""
    w = preset("llama3-8b")
    both = estimate(w, _h100_cluster(sharp=True, nvls=None), TP8).breakdown
    sharp_only = estimate(w, _h100_cluster(sharp=True), TP8).breakdown
    assert both.tensor_parallel_s < sharp_only.tensor_parallel_s


# ------------------------------------------------------------------ the independent checks
def _sharp_and_plain_twin() -> tuple[Catalog, Catalog]:
    """One switch, once with SHARP and once without: everything else equal."""
    return _catalog(SHARP_SW), _catalog(replace(SHARP_SW, in_network_reduction=False))


# MPT-1B at a 128-sequence batch: on 4 nodes its gradient all-reduce outlasts the backward it
# overlaps, so the reduction the switches do shows in the step (BERT-Large at its preset's
# 256 sequences hides it under the compute, and both switches time alike, as they should).
EXPOSED_REDUCTION = preset("mpt-1b", training_tokens=4e10, global_batch_size=128)


def test_the_enumerator_times_an_all_sharp_design_with_in_network_reduction() -> None:
    spec = spec_for(
        budget_usd=2e6,
        objective=Objective.MIN_TIME,
        fabrics=("infiniband",),
        topologies=("fat_tree",),
        workload=EXPOSED_REDUCTION,
    )
    sharp, plain = (enumerate_optimum(c, spec, max_nodes=4) for c in _sharp_and_plain_twin())
    assert sharp is not None and plain is not None
    assert sharp.time_hours < plain.time_hours
    (rank1,) = optimize(_catalog(SHARP_SW), replace(spec, top_k=1)).designs
    assert rank1.time_hours == pytest.approx(sharp.time_hours, rel=1e-9)


def test_the_rule_of_thumb_credits_sharp_on_its_sharp_switch() -> None:
    catalog, twin = _sharp_and_plain_twin()
    w = EXPOSED_REDUCTION
    one_node = rule_of_thumb(
        catalog, spec_for(target_hours=1e6, fabrics=("infiniband",), workload=w)
    )
    assert one_node is not None
    spec = spec_for(target_hours=one_node.time_hours * 0.4, fabrics=("infiniband",), workload=w)
    sharp, plain = rule_of_thumb(catalog, spec), rule_of_thumb(twin, spec)
    assert sharp is not None and plain is not None and plain.gpus > 8
    assert (sharp.gpus, sharp.time_hours) < (plain.gpus, plain.time_hours)
