"""A cable may have different plugs at its two ends (``links.form_factor`` ``A/B``).

NVIDIA's MCP7Y10 (docs.nvidia.com MCP7Y10NXXX800Gpub) is an 800G twin-port OSFP to 2 x 400G
QSFP112 splitter: its finned OSFP end fills a Quantum-2 or Spectrum-4 cage, its two flat
QSFP112 ends a ConnectX-7 or BlueField-3 QSFP112 cage. With one form factor per row it could
only be stated wrong (OSFP: refused by the QSFP112 NICs it is made for) or not at all (any cage:
offered for every NIC, the AEC-400G-7M defect). infiniband-ndr's BlueField-3 B3140H could not be
cabled before: the catalog had no QSFP112 InfiniBand part.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import cable_fits_ends, plugs_fit
from optimizer.topology.design import Design
from optimizer.topology.layout import LinkOption

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
NDR = load_catalog(CATALOGS / "infiniband-ndr")
ROCE = load_catalog(CATALOGS / "roce-spectrum")
BUDGET = load_catalog(CATALOGS / "ethernet-budget")
HYBRID = next(lk for lk in NDR.links if lk.sku == "NDR-DAC-800G-2x400G-QSFP112-3M")
QUANTUM = "switch:800x2:OSFP@800"  # a Quantum-2 twin-port cage (compat.switch_end)


def _bluefield(nodes: int, nics: int = 4) -> Design:
    return Design(
        server_sku="SYS-8125GS-TNHR",
        nodes=nodes,
        nic_sku="B3140H",
        nics_per_node=nics,
        fabric="infiniband",
        topology="single_switch",
        switch_skus=("MQM9700-NS2F",),
    )


def test_a_cable_row_states_its_two_plugs_wide_end_first() -> None:
    assert HYBRID.plugs == ("OSFP-finned", "QSFP112-flat")
    osfp = next(lk for lk in NDR.links if lk.sku == "NDR-DAC-800G-2x400G-3M")
    assert osfp.plugs == ("OSFP", "OSFP")


def test_the_splitter_joins_a_qsfp112_nic_to_a_quantum_cage_wide_end_at_the_switch() -> None:
    assert cable_fits_ends(HYBRID, ("host:QSFP112", QUANTUM))
    assert cable_fits_ends(HYBRID, (QUANTUM, "host:QSFP-DD"))  # a QSFP-DD cage takes QSFP112
    assert not cable_fits_ends(HYBRID, ("host:OSFP", QUANTUM))  # a ConnectX-7's OSFP cage


def test_a_straight_cable_of_two_plugs_fits_either_way_round_never_one_plug_twice() -> None:
    straight = dataclasses.replace(
        HYBRID, speed_gbps=400, ports_per_module=None, form_factor="OSFP/QSFP112"
    )
    assert plugs_fit(straight, ("host:QSFP112", "switch:800:OSFP"))
    assert plugs_fit(straight, ("switch:800:OSFP", "host:QSFP112"))
    assert not plugs_fit(straight, ("host:QSFP112", "switch:400:QSFP-DD"))  # OSFP fits neither


def test_a_bluefield_in_one_rack_is_cabled_with_the_qsfp112_splitter() -> None:
    design = _bluefield(2)  # 8 links in one rack: 3.0 m
    bom = build_bom(design, NDR)
    assert [(ln.sku, ln.quantity) for ln in bom.lines if ln.category == "cable"] == [
        ("NDR-DAC-800G-2x400G-QSFP112-3M", 4)
    ]
    assert check_bom(design, bom, NDR) == []


def test_check_bom_rejects_the_qsfp112_splitter_at_a_connectx_7() -> None:
    design = dataclasses.replace(_bluefield(2), nic_sku="MCX75310AAS-NEAT")
    fan_out = LinkOption("cable", ((HYBRID.sku, 1),), 3.0, 18_000, 0.05, ((HYBRID.sku, 2),))
    bom = build_bom(design, NDR, {"node-leaf": [(fan_out, 8)]})
    violations = check_bom(design, bom, NDR)
    assert [v.code for v in violations] == ["nic-cage", "cable-plugs"]  # each end; both at once
    assert "MCX75310AAS-NEAT's OSFP cage" in violations[0].message


def test_check_bom_rejects_a_cable_whose_plugs_fit_each_end_only_one_at_a_time() -> None:
    """An OSFP/QSFP112 cable between a QSFP-DD NIC cage and a QSFP-DD switch: each cage alone
    takes one of its plugs (QSFP112: a QSFP-DD cage takes QSFP plugs), but its OSFP plug fits
    neither end, so it cannot sit with both plugged in."""
    straight = dataclasses.replace(
        HYBRID,
        sku="AEC-200G-OSFP-QSFP112",
        kind="aec",
        speed_gbps=200,
        fabric_family="ethernet",
        ports_per_module=None,
        form_factor="OSFP/QSFP112",
        reach_m=10.0,
    )
    nics = tuple(dataclasses.replace(n, form_factor="QSFP-DD") for n in BUDGET.nics)
    catalog = dataclasses.replace(BUDGET, links=(*BUDGET.links, straight), nics=nics)
    design = Design(
        server_sku="SYS-8125GS-TNHR",
        nodes=2,
        nic_sku="MCX653105A-HDAT",
        nics_per_node=1,
        fabric="roce",
        topology="single_switch",
        switch_skus=("7060DX5-64S",),
    )
    cable = LinkOption("cable", ((straight.sku, 1),), 10.0, 10_000, 1.0)
    bom = build_bom(design, catalog, {"node-leaf": [(cable, 2)]})
    codes = [v.code for v in check_bom(design, bom, catalog)]
    assert codes == ["cable-plugs"]


def test_two_plugs_are_refused_on_a_module_and_more_than_two_anywhere(tmp_path: Path) -> None:
    shutil.copytree(CATALOGS / "roce-spectrum", tmp_path / "cat")
    path = tmp_path / "cat" / "links.csv"
    lines = path.read_text().splitlines()
    module = next(i for i, line in enumerate(lines) if line.startswith("QDD-400G-DR4,"))
    cable = next(i for i, line in enumerate(lines) if line.startswith("AOC-400G-30M,"))
    lines[module] = lines[module].replace(",host,QSFP-DD,", ",host,QSFP-DD/OSFP,")
    lines[cable] = lines[cable].replace(",,QSFP-DD,,", ",,QSFP-DD/OSFP/QSFP112,,")
    path.write_text("\n".join(lines) + "\n")
    report = load_catalog_report(tmp_path / "cat")
    assert sorted((p.table, p.row, p.column) for p in report.errors) == sorted(
        [
            ("links", module + 1, "form_factor"),
            ("links", cable + 1, "form_factor"),
        ]
    )


def test_roce_spectrum_offers_the_splitter_for_a_thor2_at_an_800g_cage() -> None:
    """The Ethernet row of the same part: its wide end breaks out the 800G cage it fills,
    whether or not the tier needed the breakout (as a twin-port module does)."""
    splitter = next(lk for lk in ROCE.links if lk.sku == "DAC-800G-2x400G-QSFP112-3M")
    assert cable_fits_ends(splitter, ("host:QSFP-DD", "switch:800:OSFP800@800"))
    assert cable_fits_ends(splitter, ("host:QSFP-DD", "switch:800:OSFP800"))
    assert not cable_fits_ends(splitter, ("host:QSFP-DD", "switch:400:OSFP800"))  # 400G cage
    assert not cable_fits_ends(splitter, ("switch:800:OSFP800", "switch:800:OSFP800"))


def test_thor2_nodes_in_one_rack_take_splitters_not_optics() -> None:
    """Two nodes of four Thor2 each, on one AS9817-64O in their rack (3.0 m): the tier
    needs no breakout (8 links, 64 cages), so straight parts were the only offer, an SR4
    optic at each end ($1,010 a link with fiber); four splitters are $264 a link."""
    design = Design(
        server_sku="SYS-8125GS-TNHR",
        nodes=2,
        nic_sku="BCM957608-P1400GDF",
        nics_per_node=4,
        fabric="roce",
        topology="single_switch",
        switch_skus=("AS9817-64O",),
    )
    bom = build_bom(design, ROCE)
    links = [(ln.sku, ln.quantity) for ln in bom.lines if ln.category in ("cable", "transceiver")]
    assert links == [("DAC-800G-2x400G-QSFP112-3M", 4)]
    assert check_bom(design, bom, ROCE) == []
