"""Multi-plane fabrics: a NIC whose ports feed independent networks (issue 16, fabric800).

Sources: a ConnectX-8 runs Ethernet as 2 x 400GbE (single-port 800GbE is not supported per its
firmware release notes; reference nics.csv, hardware.md section 2); the DGX B300 MGX /
Spectrum-X reference design runs twin planes of 2 x 400G per GPU, one scalable unit of 64
nodes taking 16 leaves and 8 spines (hardware.md section 5). The catalog says it with
``nics.planes`` (tests/data/fabric_800g: CX8-ETH-2x400 has 2).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.model import Catalog
from optimizer.optimize.backends import Limits, get_backend
from optimizer.optimize.problem import RowBuilder
from optimizer.optimize.request import OptimizeSpec
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan
from optimizer.workload.presets import preset

DATA = Path(__file__).parent / "data" / "fabric_800g"
CATALOG = load_catalog(DATA)
TWO_PLANES = "CX8-ETH-2x400"


def _one_plane(catalog: Catalog) -> Catalog:
    """The same catalog with the two-port NIC cabling one port (no planes column)."""
    nics = tuple(
        dataclasses.replace(n, planes=None) if n.sku == TWO_PLANES else n for n in catalog.nics
    )
    return dataclasses.replace(catalog, nics=nics)


def _spectrum_x(nodes: int, topology: str = "rail_optimized") -> Design:
    return Design(
        server_sku="HGX-B300-8GPU",
        nodes=nodes,
        nic_sku=TWO_PLANES,
        nics_per_node=8,
        fabric="roce",
        topology=topology,
        switch_skus=("SN5600",),
    )


def _codes(design: Design, bom: BillOfMaterials) -> set[str]:
    return {v.code for v in check_bom(design, bom, CATALOG)}


def _scaled(bom: BillOfMaterials, category: str, tier: str, factor: float) -> BillOfMaterials:
    lines = tuple(
        dataclasses.replace(ln, quantity=int(ln.quantity * factor))
        if ln.category == category and ln.tier == tier
        else ln
        for ln in bom.lines
    )
    return dataclasses.replace(bom, lines=lines)


def test_a_two_plane_scalable_unit_reproduces_the_b300_spectrum_x_switch_counts() -> None:
    plan = physical_plan(_spectrum_x(64), CATALOG)
    assert {d.tier: d.quantity for d in plan.switches} == {"leaf": 16, "spine": 8}


def test_each_plane_is_sized_as_its_own_network_of_one_port_per_nic() -> None:
    two = physical_plan(_spectrum_x(64), CATALOG)
    one = physical_plan(_spectrum_x(64), _one_plane(CATALOG))
    assert {d.tier: d.quantity for d in one.switches} == {"leaf": 8, "spine": 4}
    assert {d.group: d.count for d in two.links} == {d.group: 2 * d.count for d in one.links}
    assert two.sizing.planes == 2 and one.sizing.planes == 1


def test_the_profile_is_one_planes_so_hops_do_not_grow_with_the_planes() -> None:
    two = physical_plan(_spectrum_x(64), CATALOG).sizing.profile
    one = physical_plan(_spectrum_x(64), _one_plane(CATALOG)).sizing.profile
    assert two == one
    assert two.endpoints == 512 and two.max_switch_hops == 3


def test_uplinks_still_bundle_at_800g_within_each_plane() -> None:
    plan = physical_plan(_spectrum_x(64), CATALOG)
    assert {(d.group, d.count, d.speed_gbps) for d in plan.links} == {
        ("node-leaf", 1024, 400),
        ("leaf-spine", 512, 800),
    }


def test_a_two_plane_bom_cables_both_ports_of_every_nic_and_verifies() -> None:
    design = _spectrum_x(64)
    bom = build_bom(design, CATALOG)
    nic = next(ln for ln in bom.lines if ln.category == "nic")
    assert nic.quantity == 512
    assert "spare" not in nic.source and "one per fabric plane" in nic.source
    assert check_bom(design, bom, CATALOG) == []


def test_without_planes_the_second_port_is_spare_and_said_so() -> None:
    bom = build_bom(_spectrum_x(64), _one_plane(CATALOG))
    nic = next(ln for ln in bom.lines if ln.category == "nic")
    assert "1 of 2 ports cabled per NIC, 1 spare" in nic.source


def test_check_bom_rejects_a_bom_that_builds_only_one_plane() -> None:
    design = _spectrum_x(64)
    bom = build_bom(design, CATALOG)
    # Half of every tier and of the node-leaf optics: one plane's network, as if unplaned.
    for category, tier in [
        ("switch", "leaf"),
        ("switch", "spine"),
        ("transceiver", "node-leaf"),
        ("fiber", "node-leaf"),
    ]:
        bom = _scaled(bom, category, tier, 0.5)
    codes = _codes(design, bom)
    assert {"switch-count", "endpoint-unlinked", "nic-uncabled"} <= codes


def test_check_bom_rejects_a_tier_that_does_not_split_into_identical_planes() -> None:
    design = _spectrum_x(64)
    bom = build_bom(design, CATALOG)
    odd = tuple(
        dataclasses.replace(ln, quantity=ln.quantity + 1)
        if ln.category == "switch" and ln.tier == "spine"
        else ln
        for ln in bom.lines
    )
    assert "plane-split" in _codes(design, dataclasses.replace(bom, lines=odd))


def test_a_nic_cannot_feed_more_planes_than_it_has_ports(tmp_path: Path) -> None:
    shutil.copytree(DATA, tmp_path / "cat")
    nics = tmp_path / "cat" / "nics.csv"
    nics.write_text(nics.read_text().replace(",false,2\n", ",false,3\n"))
    report = load_catalog_report(tmp_path / "cat")
    assert [(p.table, p.column) for p in report.errors] == [("nics", "planes")]


def test_a_catalog_without_the_planes_column_loads_with_one_plane() -> None:
    ndr = load_catalog(Path(__file__).resolve().parents[1] / "catalogs" / "infiniband-ndr")
    assert all(n.planes is None and n.plane_count == 1 for n in ndr.nics)


def test_the_mip_prices_both_planes_as_the_bom_does() -> None:
    design = _spectrum_x(5, topology="fat_tree")  # 40 ports per plane: one leaf each
    plan = physical_plan(design, CATALOG)
    builder = RowBuilder(CATALOG, OptimizeSpec(workload=preset("llama3-8b")))
    cents = builder.exact_cost(plan, get_backend("cpsat"), Limits(time_limit_s=10.0))
    assert {d.tier: d.quantity for d in plan.switches} == {"leaf": 2}
    assert cents == build_bom(design, CATALOG).capex_cents
