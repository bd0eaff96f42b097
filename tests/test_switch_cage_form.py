"""A plug at a switch has the form factor of the switch's cages, as one at a NIC has the NIC's.

hardware.md section 3: an SN5600 or Arista 7060X6 has OSFP cages, an Edgecore AS9817-64O
OSFP800, an AS9817-64D QSFP-DD800, the 400G Tomahawk-4 boxes QSFP-DD. Found reading BOMs as
a vendor architect: a roce-spectrum dragonfly on AS9817-64O cabled its routers with
AOC-400G-30M, a QSFP-DD AOC by its source, and gen-2026 offered the QSFP-DD800 module
QDD-800G-DR8 at OSFP cages: neither plug goes into those cages.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.model import Catalog
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import fits_cage, switch_end
from optimizer.topology.design import Design
from optimizer.topology.layout import link_options

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
ROCE = load_catalog(CATALOGS / "roce-spectrum")
GEN_2026 = load_catalog(CATALOGS / "gen-2026")


def _switch(catalog: Catalog, sku: str) -> str:
    return next(switch_end(sw, 400) for sw in catalog.switches if sw.sku == sku)


def _dragonfly(nodes: int) -> Design:
    """``nodes`` HGX servers, 8 Thor2 400G NICs each, routers of AS9817-64O (OSFP800)."""
    return Design(
        server_sku=ROCE.servers[0].sku,
        nodes=nodes,
        nic_sku="BCM957608-P1400GDF",
        nics_per_node=8,
        fabric="roce",
        topology="dragonfly",
        switch_skus=("AS9817-64O",),
    )


def _replace_sku(bom: BillOfMaterials, group: str, sku: str, catalog: Catalog) -> BillOfMaterials:
    """``bom`` with ``group``'s cable or optic lines ordering ``sku`` instead."""
    price = next(lk.price_cents for lk in catalog.links if lk.sku == sku)
    lines = tuple(
        dataclasses.replace(
            ln, sku=sku, unit_price_cents=price, extended_price_cents=ln.quantity * price
        )
        if ln.tier == group and ln.category in ("cable", "transceiver")
        else ln
        for ln in bom.lines
    )
    return dataclasses.replace(bom, lines=lines)


def test_osfp800_and_osfp224_cages_take_osfp_plugs_and_qsfp_dd800_takes_qsfp() -> None:
    assert fits_cage("OSFP", "OSFP800") and fits_cage("OSFP-finned", "OSFP800", top="finned")
    assert fits_cage("OSFP224-finned", "OSFP", top="finned")
    assert not fits_cage("OSFP-flat", "OSFP800", top="finned")  # a NIC's flat-top module
    assert fits_cage("QSFP-DD", "QSFP-DD800") and fits_cage("QSFP112", "QSFP-DD800")
    assert not fits_cage("QSFP-DD", "OSFP800")
    assert not fits_cage("QSFP-DD800", "OSFP")


def test_a_qsfp_dd_aoc_is_not_offered_between_osfp800_switches() -> None:
    end = _switch(ROCE, "AS9817-64O")
    options = link_options(9.0, 400, "roce", ROCE, (end, end))
    assert options
    assert all("AOC-400G-30M" not in o.label for o in options)


def test_a_qsfp_dd800_module_is_not_offered_at_an_osfp_switch() -> None:
    sn5600 = next(sw for sw in GEN_2026.switches if sw.sku == "SN5600")
    options = link_options(100.0, 800, "roce", GEN_2026, (switch_end(sn5600),) * 2)
    assert options
    assert all("QDD-800G-DR8" not in o.label for o in options)


def test_a_dragonfly_of_osfp800_routers_buys_no_qsfp_dd_plug() -> None:
    design = _dragonfly(64)
    bom = build_bom(design, ROCE)
    forms = {lk.sku: lk.form_factor for lk in ROCE.links}
    at_switches = [ln for ln in bom.lines if ln.tier in ("intra-group", "global")]
    assert at_switches and all(
        fits_cage(forms[ln.sku], "OSFP800", top="finned")
        for ln in at_switches
        if ln.category != "fiber"
    )
    assert check_bom(design, bom, ROCE) == []


def test_check_bom_refuses_a_qsfp_dd_cable_in_an_osfp800_cage() -> None:
    design = _dragonfly(64)
    bom = _replace_sku(build_bom(design, ROCE), "intra-group", "AOC-400G-30M", ROCE)
    problems = [v for v in check_bom(design, bom, ROCE) if v.code == "switch-cage"]
    assert problems and "AS9817-64O OSFP800" in problems[0].message


def test_check_bom_refuses_a_qsfp_dd800_module_at_an_osfp_switch() -> None:
    design = Design(
        server_sku="SYS-A22GA-NBRT",
        nodes=64,
        nic_sku="BCM957608-P1400GDF",
        nics_per_node=8,
        fabric="roce",
        topology="fat_tree",
        switch_skus=("SN5600",),
    )
    bom = build_bom(design, GEN_2026)
    optics = [ln for ln in bom.lines if ln.tier == "leaf-spine" and ln.category == "transceiver"]
    assert optics, "the uplinks take optics"
    swapped = _replace_sku(bom, "leaf-spine", "QDD-800G-DR8", GEN_2026)
    codes = {v.code for v in check_bom(design, swapped, GEN_2026)}
    assert "switch-cage" in codes


def test_an_unknown_switch_cage_is_refused_naming_table_row_and_column(tmp_path: Path) -> None:
    shutil.copytree(CATALOGS / "roce-spectrum", tmp_path / "cat")
    path = tmp_path / "cat" / "switches.csv"
    lines = path.read_text().splitlines()
    lines[1] = lines[1].removesuffix(",OSFP") + ",OSPF"
    path.write_text("\n".join(lines) + "\n")
    report = load_catalog_report(tmp_path / "cat")
    assert [(p.table, p.row, p.column) for p in report.errors] == [("switches", 2, "form_factor")]
