"""Optics by side: a NIC-side module is not half a twin-port switch module (issue 13, defect 9).

NVIDIA LinkX NDR cabling: a ConnectX-7 OSFP cage takes a flat-top single-port 400G module
(MMA4Z00-NS400 class), a Quantum-2 cage a finned twin-port 2 x 400G module (MMA4Z00-NS
class) serving two links; switch-to-switch links are twin-port at both ends.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.canonical import canonical_document
from optimizer.catalog.model import Catalog
from optimizer.optimize.backends import Limits, get_backend
from optimizer.optimize.problem import RowBuilder
from optimizer.optimize.request import OptimizeSpec
from optimizer.topology.bom import BillOfMaterials, BomLine, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.layout import link_options
from optimizer.topology.plan import physical_plan
from optimizer.workload.presets import preset

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
NDR = load_catalog(CATALOGS / "infiniband-ndr")


def _optics_only(catalog: Catalog) -> Catalog:
    """The catalog without cable assemblies, so every link is built from optics."""
    links = tuple(lk for lk in catalog.links if lk.kind in ("transceiver", "fiber"))
    return dataclasses.replace(catalog, links=links)


OPTICS = _optics_only(NDR)


def _design(
    nodes: int,
    nics_per_node: int = 8,
    topology: str = "rail_optimized",
    server_sku: str = "SYS-8125GS-TNHR",  # add-in ConnectX-7s in their own OSFP cages
) -> Design:
    return Design(
        server_sku=server_sku,
        nodes=nodes,
        nic_sku="MCX75310AAS-NEAT",
        nics_per_node=nics_per_node,
        fabric="infiniband",
        topology=topology,
        switch_skus=("MQM9790-NS2F",),
    )


def _qty(bom: BillOfMaterials, sku: str, tier: str) -> int:
    return sum(ln.quantity for ln in bom.lines if ln.sku == sku and ln.tier == tier)


def _replace(bom: BillOfMaterials, index: int, line: BomLine) -> BillOfMaterials:
    lines = list(bom.lines)
    lines[index] = line
    return dataclasses.replace(bom, lines=tuple(lines))


def test_a_node_leaf_optic_pairs_a_host_module_with_half_a_twin_port_switch_module() -> None:
    options = [o for o in link_options(12.0, 400, "infiniband", NDR, ("host", "switch"))]
    sr4 = next(o for o in options if "MMA4Z00-NS400" in dict(o.parts))
    assert dict(sr4.parts) == {"MMA4Z00-NS400": 1, "MMA4Z00-NS": 1, "FIBER-OM4-MPO12": 12}
    assert dict(sr4.module_ports) == {"MMA4Z00-NS": 2}
    # $600 host module + half of the $900 twin module + 12 m of $2.50 fiber.
    assert sr4.unit_cost_cents == 60_000 + 45_000 + 12 * 250


def test_a_switch_to_switch_optic_is_two_twin_port_halves_never_a_host_module() -> None:
    options = link_options(12.0, 400, "infiniband", NDR, ("switch", "switch"))
    skus = {sku for o in options for sku, _ in o.parts}
    assert "MMA4Z00-NS400" not in skus and "MMS4X00-NS400" not in skus
    sr4 = next(o for o in options if "MMA4Z00-NS" in dict(o.parts))
    assert dict(sr4.parts)["MMA4Z00-NS"] == 2  # one port at each end: one module's worth


def test_an_optical_fat_tree_bom_lists_host_side_and_switch_side_modules() -> None:
    # 32 nodes x 8 rails: 256 node-leaf links and 256 leaf-spine links, all optical (a DGX's
    # twin-port cages take twin-port modules at both ends: tests/test_dgx_twin_cages.py).
    bom = build_bom(_design(32), OPTICS)
    assert _qty(bom, "MMA4Z00-NS400", "node-leaf") == 256  # one per NIC
    assert _qty(bom, "MMA4Z00-NS", "node-leaf") == 128  # two leaf ports per module
    assert _qty(bom, "MMA4Z00-NS", "leaf-spine") == 256  # 512 switch ports, two per module
    assert _qty(bom, "MMA4Z00-NS400", "leaf-spine") == 0
    assert check_bom(_design(32), bom, OPTICS) == []


# A DGX ships with its eight built-in NICs, so one NIC per node needs an add-in-NIC server.
_ADD_IN = "SYS-8125GS-TNHR"


def test_an_odd_port_count_buys_the_whole_twin_module() -> None:
    # 3 nodes x 1 NIC on one leaf: 3 host modules, 3 switch ports = 2 twin modules.
    design = _design(3, nics_per_node=1, topology="fat_tree", server_sku=_ADD_IN)
    bom = build_bom(design, OPTICS)
    assert _qty(bom, "MMA4Z00-NS400", "node-leaf") == 3
    assert _qty(bom, "MMA4Z00-NS", "node-leaf") == 2
    assert check_bom(design, bom, OPTICS) == []


def test_the_mip_prices_whole_twin_modules_as_the_bom_does() -> None:
    design = _design(3, nics_per_node=1, topology="fat_tree", server_sku=_ADD_IN)
    plan = physical_plan(design, OPTICS)
    builder = RowBuilder(OPTICS, OptimizeSpec(workload=preset("llama3-8b")))
    cents = builder.exact_cost(plan, get_backend("cpsat"), Limits(time_limit_s=10.0))
    assert cents == build_bom(design, OPTICS).capex_cents


def test_check_bom_rejects_a_host_side_module_on_a_switch_to_switch_link() -> None:
    design = _design(32)
    bom = build_bom(design, OPTICS)
    i = next(
        i for i, ln in enumerate(bom.lines) if ln.tier == "leaf-spine" and ln.sku == "MMA4Z00-NS"
    )
    host = next(lk for lk in OPTICS.links if lk.sku == "MMA4Z00-NS400")
    line = dataclasses.replace(bom.lines[i], sku=host.sku, quantity=512)
    codes = {v.code for v in check_bom(design, _replace(bom, i, line), OPTICS)}
    assert "optic-side" in codes


def test_check_bom_rejects_host_modules_counted_as_switch_halves() -> None:
    # Today's mistake: two identical host-side modules per node-leaf link, no switch module.
    design = _design(32)
    bom = build_bom(design, OPTICS)
    i = next(
        i for i, ln in enumerate(bom.lines) if ln.tier == "node-leaf" and ln.sku == "MMA4Z00-NS"
    )
    j = next(
        j for j, ln in enumerate(bom.lines) if ln.tier == "node-leaf" and ln.sku == "MMA4Z00-NS400"
    )
    doubled = _replace(bom, j, dataclasses.replace(bom.lines[j], quantity=512))
    doubled = dataclasses.replace(
        doubled, lines=tuple(ln for k, ln in enumerate(doubled.lines) if k != i)
    )
    codes = {v.code for v in check_bom(design, doubled, OPTICS)}
    assert "optic-ports" in codes


def test_check_bom_rejects_a_spare_twin_module() -> None:
    design = _design(32)
    bom = build_bom(design, OPTICS)
    i = next(
        i for i, ln in enumerate(bom.lines) if ln.tier == "node-leaf" and ln.sku == "MMA4Z00-NS"
    )
    extra = dataclasses.replace(bom.lines[i], quantity=bom.lines[i].quantity + 1)
    codes = {v.code for v in check_bom(design, _replace(bom, i, extra), OPTICS)}
    assert "optic-ports" in codes


@pytest.mark.parametrize("name", ["infiniband-ndr", "roce-spectrum", "ethernet-budget"])
def test_every_bundled_transceiver_states_its_side(name: str) -> None:
    catalog = load_catalog(CATALOGS / name)
    for lk in catalog.links:
        assert lk.fits_side in ("host", "switch", "any")
        assert lk.speed_gbps % lk.module_ports == 0


def test_a_catalog_without_the_optics_columns_keeps_its_canonical_encoding() -> None:
    # Keys of a links row as CANONICAL_VERSION 1 stored them before side/form_factor/ports.
    old_keys = {
        "sku",
        "vendor",
        "kind",
        "speed_gbps",
        "fabric_family",
        "reach_m",
        "power_w",
        "price_cents",
        "availability",
    }
    plain = dataclasses.replace(NDR.links[0], side=None, form_factor="", ports_per_module=None)
    doc = canonical_document(dataclasses.replace(NDR, links=(plain,)))
    assert set(doc["links"][0]) == old_keys
    twin = next(lk for lk in NDR.links if lk.sku == "MMA4Z00-NS")
    doc = canonical_document(dataclasses.replace(NDR, links=(twin,)))
    assert doc["links"][0]["ports_per_module"] == 2 and doc["links"][0]["side"] == "switch"


def test_ports_per_module_must_split_the_speed_evenly(tmp_path: Path) -> None:
    shutil.copytree(CATALOGS / "infiniband-ndr", tmp_path / "cat")
    links = tmp_path / "cat" / "links.csv"
    text = links.read_text()
    links.write_text(text.replace("OSFP-finned,2", "OSFP-finned,3", 1))
    report = load_catalog_report(tmp_path / "cat")
    assert [(p.table, p.column) for p in report.errors] == [("links", "ports_per_module")]


def test_a_cable_has_no_side(tmp_path: Path) -> None:
    shutil.copytree(CATALOGS / "infiniband-ndr", tmp_path / "cat")
    links = tmp_path / "cat" / "links.csv"
    lines = links.read_text().splitlines()
    dac = next(i for i, ln in enumerate(lines) if ln.startswith("NDR-DAC-800G-2x400G-2M"))
    lines[dac] = lines[dac].replace(",,OSFP,2", ",host,OSFP,2")
    links.write_text("\n".join(lines) + "\n")
    report = load_catalog_report(tmp_path / "cat")
    assert [(p.table, p.column) for p in report.errors] == [("links", "side")]
