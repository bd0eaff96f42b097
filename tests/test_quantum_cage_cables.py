"""InfiniBand cables at Quantum twin-port cages are splitters or twin-port cables, bought whole.

hardware.md sections 3-4: a Quantum-2 QM9700/QM9790 has 32 twin-port OSFP cages (64 x 400G
NDR), a Quantum-X800 Q3400 72 (144 x 800G XDR); a cage takes only a twin-port plug. A buyer
cables NICs with splitters (one twin-port end in the switch cage, two single-port ends at two
NICs: MCP7Y00 class, docs.nvidia.com 400g100gpam4ovpub) and switches with twin-port cables
(one cable, two links between the same two cages). Found reading BOMs as a vendor architect:
the main job ordered 2,048 single-plug "NDR-ACC-400G-5M" node-leaf cables at $450, while the
row's source is an 800G twin-port ACC priced per 400G end; no such single-plug cable fits.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.topology.bom import BillOfMaterials, BomLine, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import fits_end, switch_end
from optimizer.topology.design import Design
from optimizer.topology.layout import link_options
from optimizer.topology.plan import physical_plan

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
NDR = load_catalog(CATALOGS / "infiniband-ndr")
XDR = load_catalog(CATALOGS / "gen-2026")
LINKS = {lk.sku: lk for lk in NDR.links}
SPLITTER = LINKS["NDR-ACC-800G-2x400G-5M"]
TWIN = LINKS["NDR-ACC-800G-TWIN-5M"]
SINGLE_400G = dataclasses.replace(
    SPLITTER, sku="SINGLE-PLUG-400G-5M", speed_gbps=400, ports_per_module=None
)


def _fat_tree(nodes: int, server_sku: str = "SYS-8125GS-TNHR") -> Design:
    """``nodes`` 8-GPU servers (HGX H100 by default), 8 ConnectX-7 each, on a two-tier QM9700
    fat-tree."""
    return Design(
        server_sku=server_sku,
        nodes=nodes,
        nic_sku="MCX75310AAS-NEAT",
        nics_per_node=8,
        fabric="infiniband",
        topology="fat_tree",
        switch_skus=("MQM9700-NS2F",),
    )


def _cable_lines(bom: BillOfMaterials, group: str) -> list[BomLine]:
    return [ln for ln in bom.lines if ln.category == "cable" and ln.tier == group]


def _swap(bom: BillOfMaterials, group: str, line: BomLine) -> BillOfMaterials:
    """``bom`` with ``group``'s cable lines replaced by ``line``."""
    kept = [ln for ln in bom.lines if not (ln.category == "cable" and ln.tier == group)]
    return dataclasses.replace(bom, lines=(*kept, line))


def _with(catalog: Catalog, *extra: object) -> Catalog:
    return dataclasses.replace(catalog, links=(*catalog.links, *extra))


def test_a_quantum_cage_is_offered_no_single_400g_plug() -> None:
    catalog = _with(NDR, SINGLE_400G)
    plan = physical_plan(_fat_tree(16), catalog)
    for demand in plan.links:
        options = link_options(
            demand.length_m, demand.speed_gbps, "infiniband", catalog, demand.link_ends
        )
        assert options, demand.group
        assert all("SINGLE-PLUG-400G-5M" not in option.label for option in options)


def test_nics_are_cabled_with_splitters_one_per_two_links_at_the_splitter_price() -> None:
    design = _fat_tree(16)
    bom = build_bom(design, NDR)
    [line] = _cable_lines(bom, "node-leaf")
    part = LINKS[line.sku]
    assert (part.speed_gbps, part.module_ports) == (800, 2)
    assert line.quantity == math.ceil(16 * 8 / 2)
    assert line.unit_price_cents == part.price_cents
    assert line.extended_price_cents == line.quantity * part.price_cents
    assert check_bom(design, bom, NDR) == []


def test_switches_are_cabled_with_twin_port_cables_each_carrying_two_links() -> None:
    design = _fat_tree(16)  # 4 leaves x 2 spines, 16 links per pair, all within 5 m
    bom = build_bom(design, NDR)
    [line] = _cable_lines(bom, "leaf-spine")
    assert (LINKS[line.sku].speed_gbps, LINKS[line.sku].module_ports) == (800, 1)
    assert line.quantity == 16 * 8 // 2
    assert check_bom(design, bom, NDR) == []


def test_switches_whose_pairs_share_no_cage_take_optics_not_cables() -> None:
    """A cage's two links to two different switches: a twin-port module's two fibres can
    part ways, no cable can."""
    plan = physical_plan(_fat_tree(16), NDR)
    [uplinks] = [d for d in plan.links if d.group == "leaf-spine"]
    ends = ("switch:800@800", "switch:800@800")
    options = link_options(uplinks.length_m, 400, "infiniband", NDR, ends)
    assert options and {o.kind for o in options} == {"optics"}


def test_check_bom_refuses_single_400g_plugs_in_quantum_cages() -> None:
    catalog = _with(NDR, SINGLE_400G)
    design = _fat_tree(16)
    bom = build_bom(design, catalog)
    [line] = _cable_lines(bom, "node-leaf")
    single = dataclasses.replace(
        line,
        sku=SINGLE_400G.sku,
        quantity=16 * 8,
        extended_price_cents=16 * 8 * SINGLE_400G.price_cents,
    )
    codes = {v.code for v in check_bom(design, _swap(bom, "node-leaf", single), catalog)}
    assert "cable-cage" in codes


def test_check_bom_refuses_a_splitter_between_two_quantum_switches() -> None:
    design = _fat_tree(16)
    bom = build_bom(design, NDR)
    [line] = _cable_lines(bom, "leaf-spine")
    splitters = dataclasses.replace(
        line,
        sku=SPLITTER.sku,
        unit_price_cents=SPLITTER.price_cents,
        extended_price_cents=line.quantity * SPLITTER.price_cents,
    )
    problems = check_bom(design, _swap(bom, "leaf-spine", splitters), NDR)
    assert [v.code for v in problems if v.code == "cable-cage"] == ["cable-cage"]
    assert "narrow end" in next(v.message for v in problems if v.code == "cable-cage")


def test_a_splitter_costs_its_two_400g_ends() -> None:
    """The rows were priced per 400G end; a splitter is two of them, so capex is unchanged."""
    per_end = {"NDR-DAC-800G-2x400G-2M": 150_00, "NDR-ACC-800G-2x400G-5M": 450_00}
    for sku, cents in per_end.items():
        assert LINKS[sku].price_cents == 2 * cents


def test_xdr_nics_at_a_q3400_are_cabled_with_1_6t_splitters() -> None:
    design = Design(
        server_sku="GB300-NVL72",
        nodes=1,
        nic_sku="C8180",
        nics_per_node=72,
        fabric="infiniband",
        topology="single_switch",
        switch_skus=("Q3400-RA",),
    )
    bom = build_bom(design, XDR)
    parts = {lk.sku: lk for lk in XDR.links}
    cables = [parts[ln.sku] for ln in _cable_lines(bom, "node-leaf")]
    assert cables and all((lk.speed_gbps, lk.module_ports) == (1600, 2) for lk in cables)
    assert check_bom(design, bom, XDR) == []


def test_an_xdr_single_port_800g_module_does_not_fill_a_quantum_2_cage() -> None:
    """A Quantum-2 cage is two NDR ports (4 x 100G lanes each): two links bundled into one
    800G cage-to-cage link took gen-2026's XDR OSFP224-800G-DR4 (one 4 x 200G port), which
    cannot link up there; a twin-port module fills the cage (found reading BOMs: gen-2026,
    llama3-70b, $30M min-time, rank 1's leaf-spine)."""
    links = {lk.sku: lk for lk in XDR.links}
    qm9700 = next(sw for sw in XDR.switches if sw.sku == "MQM9700-NS2F")
    end = switch_end(qm9700, 800)

    assert not fits_end(links["OSFP224-800G-DR4"], end)
    assert fits_end(links["MMA4Z00-NS"], end)


def test_cage_to_cage_optics_at_quantum_2_are_twin_port_modules() -> None:
    # gen-2026's 8-GPU server: 48 cage-to-cage links beyond a twin cable's 5 m
    design = _fat_tree(9, "SYS-A22GA-NBRT")
    bom = build_bom(design, XDR)

    optics = {ln.sku for ln in bom.lines if ln.category == "transceiver"}

    assert optics == {"MMA4Z00-NS"}
    assert check_bom(design, bom, XDR) == []
