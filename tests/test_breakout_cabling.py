"""Broken-out switch ports take a part that fills them: a fan-out cable or a twin-port module.

hardware.md sections 3-4: an SN5600 or a Tomahawk 5 box has 64 OSFP cages of 800G, 128 x 400G
by breakout; the breakout is made by what sits in the cage, an 800G OSFP to 2 x 400G splitter
(NVIDIA MCP7Y00, 1-3 m) or a twin-port 2 x 400G module. A straight 400G cable in such a cage
runs the whole port at 400G: one link, not two. The topology counts 128 ports, so the model
offers only parts that fill a broken-out port there, and ``check_bom`` counts the physical
ports a BOM's straight cables take. (Before: the README's $20M RoCE answer plugged 112 straight
400G AOCs into one 64-cage AS9817-64O.)
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.model import Catalog
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import cable_fits_ends, cage_gbps, fits_end, switch_end
from optimizer.topology.design import Design
from optimizer.topology.layout import LinkOption, link_options
from optimizer.topology.plan import physical_plan

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
ROCE = load_catalog(CATALOGS / "roce-spectrum")
LINKS = {lk.sku: lk for lk in ROCE.links}
SWITCHES = {sw.sku: sw for sw in ROCE.switches}
SPLITTER = LINKS["DAC-800G-2x400G-OSFP-2M"]


def _single_switch(nodes: int) -> Design:
    """``nodes`` servers, one 400G NIC each, on one 64 x 800G switch (128 x 400G ports). The
    NIC is a ConnectX-7: its OSFP cage takes the OSFP splitter's narrow end (a Thor2's
    QSFP112-DD cage does not, test_nic_cages)."""
    return Design(
        server_sku="SYS-A22GA-NBRT",
        nodes=nodes,
        nic_sku="MCX75310AAS-NEAT",
        nics_per_node=1,
        fabric="roce",
        topology="single_switch",
        switch_skus=("AS9817-64O",),
    )


def _with_reach(catalog: Catalog, sku: str, reach_m: float) -> Catalog:
    links = tuple(
        dataclasses.replace(lk, reach_m=reach_m) if lk.sku == sku else lk for lk in catalog.links
    )
    return dataclasses.replace(catalog, links=links)


def test_a_switch_end_says_its_port_is_broken_out_below_the_port_speed() -> None:
    sn5600 = dataclasses.replace(SWITCHES["SN5600"], ports_per_cage=None, form_factor=None)
    assert switch_end(sn5600, 400, broken_out=True) == "switch@800"
    assert switch_end(sn5600, 400) == "switch"  # a tier that needs no breakout: a whole port
    assert switch_end(sn5600, 800, broken_out=True) == "switch"
    assert switch_end(sn5600) == "switch"
    assert switch_end(SWITCHES["SN5600"], 400, broken_out=True) == "switch:800:OSFP@800"


def test_only_a_part_of_the_port_speed_fills_a_broken_out_port() -> None:
    assert fits_end(SPLITTER, "switch@800")
    assert not fits_end(LINKS["DAC-400G-QSFP112-3M"], "switch@800")
    assert fits_end(LINKS["OSFP-800G-2xSR4"], "switch@800")  # twin-port: 2 x 400G
    assert not fits_end(LINKS["QSFP112-400G-SR4"], "switch@800")


def test_a_fan_out_cable_has_exactly_one_wide_end() -> None:
    assert cable_fits_ends(SPLITTER, ("host", "switch@800"))
    assert not cable_fits_ends(SPLITTER, ("host", "switch"))  # no port its 800G end fills
    assert not cable_fits_ends(SPLITTER, ("switch@800", "switch@800"))
    assert not cable_fits_ends(SPLITTER, ("host", "host"))


def test_a_straight_cable_is_not_offered_at_a_broken_out_port() -> None:
    offered = {o.label for o in link_options(2.0, 400, "roce", ROCE, ("host", "switch@800"))}
    assert "1 x DAC-800G-2x400G-OSFP-2M" in offered
    assert not any("DAC-400G" in label or "AOC-400G" in label for label in offered)
    straight = {o.label for o in link_options(2.0, 400, "roce", ROCE, ("host", "host"))}
    assert "1 x DAC-400G-QSFP112-3M" in straight  # host to host it plugs in at its speed


def test_a_fan_out_cable_is_not_offered_for_a_link_at_its_full_speed() -> None:
    offered = {o.label for o in link_options(2.0, 800, "roce", ROCE, ("switch", "switch"))}
    assert "1 x DAC-800G-OSFP-3M" in offered
    assert not any("2x400G" in label for label in offered)


def test_a_splitter_serves_two_links_at_half_its_price_each() -> None:
    option = next(
        o for o in link_options(2.0, 400, "roce", ROCE, ("host", "switch@800")) if o.kind == "cable"
    )
    assert option == LinkOption(
        "cable",
        (("DAC-800G-2x400G-OSFP-2M", 1),),
        2.0,
        SPLITTER.price_cents // 2,
        SPLITTER.power_w / 2,
        (("DAC-800G-2x400G-OSFP-2M", 2),),
        ("DAC-800G-2x400G-OSFP-2M",),  # its wide end fills the shared cage: whole per switch
    )


def test_splitters_are_bought_whole_for_an_odd_number_of_links() -> None:
    """65 links on 64 cages: the ports are broken out, two links per splitter."""
    catalog = _with_reach(ROCE, SPLITTER.sku, 30.0)  # reaching the leaf, for the test
    design = _single_switch(65)
    bom = build_bom(design, catalog)
    cables = {ln.sku: ln.quantity for ln in bom.lines if ln.category == "cable"}
    assert cables == {SPLITTER.sku: 33}  # one spare narrow end
    assert check_bom(design, bom, catalog) == []


def test_a_switch_with_a_cage_per_link_takes_straight_cables() -> None:
    """24 links on 64 cages need no breakout: each takes a whole port, a straight cable
    included (the independent enumerator found this cheaper build)."""
    plan_ends = {d.group: d.link_ends for d in physical_plan(_single_switch(24), ROCE).links}
    assert plan_ends == {"node-leaf": ("host:OSFP", "switch:800:OSFP800")}
    assert physical_plan(_single_switch(65), ROCE).links[0].link_ends == (
        "host:OSFP",
        "switch:800:OSFP800@800",
    )


def test_check_bom_counts_the_whole_port_each_straight_cable_takes() -> None:
    """64 cages: 112 straight 400G cables need 112 of them (the README's old $20M answer)."""
    catalog = _with_reach(ROCE, "AEC-400G-7M", 30.0)
    design = _single_switch(112)
    straight = LinkOption("cable", (("AEC-400G-7M", 1),), 30.0, 50_000, 0.1)
    bom = build_bom(design, catalog, {"node-leaf": [(straight, 112)]})
    violations = check_bom(design, bom, catalog)
    assert [v.code for v in violations] == ["breakout"]
    assert "112 ports, its 1 switches have 64" in violations[0].message


def test_check_bom_accepts_straight_cables_while_the_cages_last() -> None:
    """20 straight cables take 20 of the 64 cages: buildable, if wasteful."""
    catalog = _with_reach(ROCE, "AEC-400G-7M", 30.0)
    design = _single_switch(20)
    straight = LinkOption("cable", (("AEC-400G-7M", 1),), 30.0, 50_000, 0.1)
    bom = build_bom(design, catalog, {"node-leaf": [(straight, 20)]})
    assert check_bom(design, bom, catalog) == []


def test_check_bom_rejects_a_splitter_whose_wide_end_fills_no_port() -> None:
    """ethernet-budget's SN4600 has 200G ports: an 800G splitter end does not plug in."""
    catalog = _with_reach(ROCE, SPLITTER.sku, 30.0)
    design = dataclasses.replace(_single_switch(4), switch_skus=("SN5600",))
    sn5600_400 = dataclasses.replace(SWITCHES["SN5600"], port_speed_gbps=400, breakout=1)
    catalog = dataclasses.replace(
        catalog,
        switches=tuple(sn5600_400 if s.sku == "SN5600" else s for s in catalog.switches),
    )
    fan_out = LinkOption("cable", ((SPLITTER.sku, 1),), 30.0, 22_000, 0.05, ((SPLITTER.sku, 2),))
    bom = build_bom(design, catalog, {"node-leaf": [(fan_out, 4)]})
    codes = [v.code for v in check_bom(design, bom, catalog)]
    assert codes == ["breakout"]


def test_every_bundled_catalog_fills_its_broken_out_ports() -> None:
    """Whatever a bundled catalog offers at a broken-out port has the port's speed there."""
    for path in sorted(p for p in CATALOGS.iterdir() if (p / "links.csv").exists()):
        catalog = load_catalog(path)
        for sw in catalog.switches:
            for speed in (sw.port_speed_gbps // n for n in range(2, sw.breakout + 1)):
                fabric = "infiniband" if sw.fabric_family == "infiniband" else "roce"
                ends = ("host", switch_end(sw, speed, broken_out=True))
                for option in link_options(3.0, speed, fabric, catalog, ends):
                    at_switch = [
                        lk
                        for lk in catalog.links
                        if lk.sku in dict(option.parts) and lk.kind != "fiber"
                        if lk.kind != "transceiver" or lk.fits_side == "switch"
                    ]
                    assert [lk.speed_gbps for lk in at_switch] == [cage_gbps(sw)], (
                        path.name,
                        sw.sku,
                        option.label,
                    )


def test_a_fan_out_cable_row_loads_and_a_fiber_with_ports_is_refused(tmp_path: Path) -> None:
    shutil.copytree(CATALOGS / "roce-spectrum", tmp_path / "cat")
    path = tmp_path / "cat" / "links.csv"
    lines = path.read_text().splitlines()
    fiber = next(i for i, line in enumerate(lines) if line.startswith("FIBER-OM4-MPO12,"))
    assert lines[fiber].endswith(",,,MPO-12")  # side, form_factor, ports_per_module, connector
    lines[fiber] = lines[fiber].removesuffix(",MPO-12") + "2,MPO-12"
    path.write_text("\n".join(lines) + "\n")
    report = load_catalog_report(tmp_path / "cat")
    assert [(p.table, p.row, p.column) for p in report.errors] == [
        ("links", fiber + 1, "ports_per_module")  # the file's line; the splitter row loads
    ]
