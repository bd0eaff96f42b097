"""The rule-of-thumb baseline is the seed's rule, applied the way a buyer would (issue 13).

The seed article (shared/domain.md section 2): InfiniBand above 256 GPUs, RoCE from 32 to 256,
TCP Ethernet below 32; a non-blocking rail-optimized fat-tree with one 400G-class NIC per GPU;
the cheapest server meeting the target; where stock of a part runs out, the next part.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest

from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog, Server
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.optimize.baseline import BaselineDesign, reference_design, rule_of_thumb
from optimizer.optimize.candidates import EstimateCache, TimeKey
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.topology.check import check_bom
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

# Targets that need 1,280-3,072 H100s (Llama 3 70B) and about 512 (MPT-30B) on the bundled
# catalogs (benchmarks/scenarios.py states them as "N GPUs' worth of work").
LARGE = (preset("llama3-70b"), 1800.0)
MEDIUM = (preset("mpt-30b"), 60.0)


@cache
def _bundled(name: str) -> Catalog:
    return load_catalog(next(p for p in bundled_catalogs() if p.name == name))


def _spec(workload: Workload, target_hours: float, max_gpus: int | None = None) -> OptimizeSpec:
    return OptimizeSpec(
        workload=workload,
        constraints=Constraints(target_training_hours=target_hours, max_gpus=max_gpus),
    )


def _with_stock(catalog: Catalog, table: str, sku: str, stock: int) -> Catalog:
    """``catalog`` with ``stock`` units of ``sku`` in ``table`` (servers, nics, switches, links)."""
    rows = tuple(
        dataclasses.replace(r, availability=dataclasses.replace(r.availability, stock_units=stock))
        if r.sku == sku
        else r
        for r in getattr(catalog, table)
    )
    return dataclasses.replace(catalog, **{table: rows})


def _bought(base: BaselineDesign) -> dict[str, int]:
    got: dict[str, int] = {}
    for line in base.bom.lines:
        got[line.sku] = got.get(line.sku, 0) + line.quantity
    return got


@pytest.mark.parametrize("name", ["infiniband-ndr", "roce-spectrum"])
def test_above_a_thousand_gpus_the_rule_is_a_rail_optimized_fat_tree(name: str) -> None:
    base = rule_of_thumb(_bundled(name), _spec(*LARGE))
    assert base is not None, "the catalog builds a switched fabric at this size"
    assert base.gpus > 1000
    assert base.design.topology == "rail_optimized"
    assert base.design.switch_skus, "a fat-tree has switches"
    assert base.design.oversubscription == 1.0


def test_above_a_thousand_gpus_the_reference_is_a_rail_optimized_fat_tree() -> None:
    base = reference_design(_bundled("infiniband-ndr"), _spec(*LARGE))
    assert base is not None
    assert base.gpus > 1000
    assert (base.design.topology, base.design.fabric) == ("rail_optimized", "infiniband")


def test_one_nic_per_gpu_of_the_400g_class() -> None:
    catalog = _bundled("infiniband-ndr")
    base = rule_of_thumb(catalog, _spec(*MEDIUM))
    assert base is not None
    server = next(s for s in catalog.servers if s.sku == base.design.server_sku)
    nic = next(n for n in catalog.nics if n.sku == base.design.nic_sku)
    assert base.design.nics_per_node == server.gpus_per_node
    assert nic.speed_gbps == 400


def test_a_stock_limited_cheapest_nic_gives_way_to_the_next_nic() -> None:
    catalog = _with_stock(_bundled("roce-spectrum"), "nics", "BCM957608-P1400GDF", 8)
    base = rule_of_thumb(catalog, _spec(*MEDIUM))
    assert base is not None, "the next NIC (ConnectX-7, no stock limit) builds it"
    assert base.design.nic_sku == "MCX75310AAS-NEAT"
    assert "BCM957608-P1400GDF" in base.note


def test_a_nic_no_catalog_part_plugs_into_does_not_stand_in() -> None:
    """infiniband-ndr's other NIC, the BlueField-3 B3140H, has a QSFP112 cage (NVIDIA's
    BlueField-3 manual) and the catalog's InfiniBand parts are all OSFP: with the ConnectX-7
    out of stock there is no NIC to cable."""
    catalog = _with_stock(_bundled("infiniband-ndr"), "nics", "MCX75310AAS-NEAT", 8)
    assert {n.sku: n.form_factor for n in catalog.nics}["B3140H"] == "QSFP112"
    base = rule_of_thumb(catalog, _spec(*MEDIUM))
    assert base is None or base.design.nic_sku != "B3140H"


def test_a_stock_limited_cheapest_switch_gives_way_to_the_next_switch() -> None:
    catalog = _with_stock(_bundled("infiniband-ndr"), "switches", "MQM9790-NS2F", 1)
    base = rule_of_thumb(catalog, _spec(*MEDIUM))
    assert base is not None, "the next switch (MQM9700-NS2F, no stock limit) builds it"
    assert base.design.switch_skus == ("MQM9700-NS2F",)
    assert "MQM9790-NS2F" in base.note


def test_a_stock_limited_cheapest_link_gives_way_to_the_next_link() -> None:
    catalog = _with_stock(_bundled("infiniband-ndr"), "links", "NDR-DAC-800G-2x400G-2M", 1)
    base = rule_of_thumb(catalog, _spec(*MEDIUM))
    assert base is not None
    assert _bought(base).get("NDR-DAC-800G-2x400G-2M", 0) <= 1
    assert check_bom(base.design, base.bom, catalog) == []


def test_a_stock_limited_server_gives_way_to_the_next_server() -> None:
    catalog = _bundled("infiniband-ndr")
    first = rule_of_thumb(catalog, _spec(*MEDIUM))
    assert first is not None
    limited = _with_stock(catalog, "servers", first.design.server_sku, first.design.nodes - 1)
    base = rule_of_thumb(limited, _spec(*MEDIUM))
    assert base is not None
    assert base.design.server_sku != first.design.server_sku


def test_the_reference_design_takes_the_next_switch_too() -> None:
    catalog = _with_stock(_bundled("infiniband-ndr"), "switches", "MQM9790-NS2F", 1)
    base = reference_design(catalog, _spec(*MEDIUM))
    assert base is not None
    assert base.design.switch_skus == ("MQM9700-NS2F",)


@pytest.mark.parametrize(("gpus", "fabric"), [(31, "ethernet"), (32, "roce"), (256, "roce")])
def test_the_rule_fabric_by_gpu_count(gpus: int, fabric: str) -> None:
    from optimizer.optimize.baseline import rule_fabrics

    assert rule_fabrics(gpus)[0] == fabric
    assert rule_fabrics(257)[0] == "infiniband"


@cache
def _all_fabrics_catalog() -> Catalog:
    """infiniband-ndr's servers and NICs with both catalogs' switches and links: every fabric
    of the rule can be built, so the rule's own choice shows at every size."""
    ib, roce = _bundled("infiniband-ndr"), _bundled("roce-spectrum")
    links = {lk.sku: lk for lk in (*ib.links, *roce.links)}  # roce's fiber runs at 800G too
    return dataclasses.replace(
        ib,
        servers=tuple(s for s in ib.servers if s.sku == "SYS-8125GS-TNHR"),
        switches=(*ib.switches, *roce.switches),
        links=tuple(links.values()),
    )


def _hours(catalog: Catalog, workload: Workload, key: TimeKey, nodes: int) -> float:
    timer = EstimateCache(
        workload, {s.sku: s for s in catalog.servers}, OptimizeSpec(workload).confidence
    )
    return timer.hours(key, nodes)


def _key(server: Server, fabric: str, topology: str, radix: int) -> TimeKey:
    return TimeKey(server.sku, fabric, 400, server.gpus_per_node, topology, 1.0, radix)


@pytest.mark.parametrize(
    ("nodes", "fabric", "topology", "radix", "below_fabric", "below_gpus"),
    [
        # 3 nodes = 24 GPUs on Ethernet (one 128x400G switch); a shade faster needs RoCE at 32.
        (3, "ethernet", "single_switch", 128, "roce", 32),
        # 32 nodes = 256 GPUs on RoCE (rail-optimized); a shade faster needs InfiniBand at 264.
        (32, "roce", "rail_optimized", 128, "infiniband", 264),
    ],
)
def test_the_fabric_changes_at_the_rules_gpu_boundaries(
    nodes: int, fabric: str, topology: str, radix: int, below_fabric: str, below_gpus: int
) -> None:
    catalog = _all_fabrics_catalog()
    workload = preset("bert-large")  # its time falls at every node count around both boundaries
    server = catalog.servers[0]
    at_boundary = _hours(catalog, workload, _key(server, fabric, topology, radix), nodes)

    base = rule_of_thumb(catalog, _spec(workload, at_boundary))
    assert base is not None
    assert (base.design.fabric, base.gpus) == (fabric, nodes * server.gpus_per_node)
    assert base.note == ""

    faster = rule_of_thumb(catalog, _spec(workload, at_boundary * 0.999))
    assert faster is not None
    assert (faster.design.fabric, faster.gpus) == (below_fabric, below_gpus)


@pytest.mark.parametrize("name", [p.name for p in bundled_catalogs()])
@pytest.mark.parametrize("work", [(preset("bert-large"), 14.0), MEDIUM, LARGE])
def test_the_baselines_boms_pass_check_bom(name: str, work: tuple[Workload, float]) -> None:
    catalog = _bundled(name)
    for make in (rule_of_thumb, reference_design):
        base = make(catalog, _spec(*work))
        if base is not None:
            assert check_bom(base.design, base.bom, catalog) == [], make.__name__


def test_where_the_rules_fabric_cannot_attach_the_size_the_next_fabric_is_used() -> None:
    full = _all_fabrics_catalog()
    # 8-port InfiniBand switches: a rail-optimized fat-tree of them attaches 16 nodes at most.
    small_ib = tuple(
        dataclasses.replace(w, ports=8) if w.fabric_family == "infiniband" else w
        for w in full.switches
    )
    catalog = dataclasses.replace(full, switches=small_ib)
    workload = preset("bert-large")
    server = catalog.servers[0]
    roce_at_256 = _hours(catalog, workload, _key(server, "roce", "rail_optimized", 128), 32)

    base = rule_of_thumb(catalog, _spec(workload, roce_at_256 * 0.999))
    assert base is not None, "RoCE, the next fabric in the rule's order, builds it"
    assert base.design.fabric == "roce"
    assert base.gpus > 256
    assert "cannot build infiniband" in base.note
