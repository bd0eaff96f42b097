"""A DGX's NIC ports sit in twin-port OSFP cages, which take only a whole twin-port plug.

NVIDIA DGX H100 and DGX B200 user guides: the 8 ConnectX-7 400G cluster ports come out through
4 twin-port OSFP cages (the "Cedar" modules, 2 x 400G each), cabled with twin-port 800G OSFP
transceivers (MMA4Z00-NS) at the DGX end as at the Quantum-2 end (DGX SuperPOD reference
architectures). ``servers.nic_cage`` OSFP-twin states it. Before, the builder cabled a DGX with
800G-to-2x400G splitters (NDR-ACC-800G-2x400G-5M), whose single 400G plugs do not fit the
DGX's cages, and check_bom accepted it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog
from optimizer.errors import InvalidInput
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import host_end
from optimizer.topology.design import Design
from optimizer.topology.layout import link_options
from optimizer.topology.plan import physical_plan

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
NDR = load_catalog(CATALOGS / "infiniband-ndr")
LINKS = {lk.sku: lk for lk in NDR.links}
SERVERS = {s.sku: s for s in NDR.servers}
NICS = {n.sku: n for n in NDR.nics}


def _dgx(server: str = "DGX-B200", nodes: int = 4) -> Design:
    return Design(
        server_sku=server,
        nodes=nodes,
        nic_sku="MCX75310AAS-NEAT",
        nics_per_node=8,
        fabric="infiniband",
        topology="single_switch",
        switch_skus=("MQM9790-NS2F",),
    )


def _node_leaf_parts(design: Design) -> set[str]:
    bom = build_bom(design, NDR)
    return {ln.sku for ln in bom.lines if ln.tier == "node-leaf" and ln.category != "fiber"}


def test_the_bundled_dgx_rows_state_twin_port_osfp_nic_cages() -> None:
    assert SERVERS["DGX-B200"].nic_cage == "OSFP-twin"
    assert SERVERS["DGX-H100"].nic_cage == "OSFP-twin"
    assert SERVERS["SYS-8125GS-TNHR"].nic_cage is None  # its NIC cards' own cages


def test_a_dgx_nic_end_is_a_twin_port_cage_shared_by_two_links() -> None:
    assert host_end(NICS["MCX75310AAS-NEAT"], SERVERS["DGX-B200"]) == "host:800x2:OSFP@800"
    assert host_end(NICS["MCX75310AAS-NEAT"], SERVERS["SYS-8125GS-TNHR"]) == "host:OSFP"


@pytest.mark.parametrize("server", ["DGX-B200", "DGX-H100"])
def test_the_dgx_design_node_leaf_parts_fit_its_cages(server: str) -> None:
    design = _dgx(server)
    parts = _node_leaf_parts(design)
    for sku in parts:
        part = LINKS[sku]
        assert part.speed_gbps == 800, sku  # a whole twin-port cage: 2 x 400G
        assert part.kind != "transceiver" or part.module_ports == 2, sku
        assert part.kind == "transceiver" or part.module_ports == 1, sku  # no splitter
    assert check_bom(design, build_bom(design, NDR), NDR) == []


def test_a_dgx_on_one_switch_takes_a_twin_port_cable_per_dgx_cage() -> None:
    design = _dgx("DGX-B200", nodes=4)  # 32 links: 16 DGX cages, each to one switch cage
    bom = build_bom(design, NDR)
    cables = {ln.sku: ln.quantity for ln in bom.lines if ln.category == "cable"}
    assert cables == {"NDR-ACC-800G-TWIN-5M": 16}
    assert check_bom(design, bom, NDR) == []


def _rail_dgx(nodes: int) -> Design:
    return dataclasses.replace(
        _dgx("DGX-B200", nodes), topology="rail_optimized", oversubscription=3.0
    )


def test_a_dgx_over_several_leaves_takes_twin_port_modules_at_both_ends() -> None:
    design = _rail_dgx(7)  # rail-optimized: a DGX cage's two ports on two rail leaves
    bom = build_bom(design, NDR)
    node_leaf = {ln.sku for ln in bom.lines if ln.tier == "node-leaf"}
    assert node_leaf <= {"MMA4Z00-NS", "MMS4X00-NM", "FIBER-OM4-MPO12", "FIBER-OS2-MPO12"}
    assert check_bom(design, bom, NDR) == []


def test_check_bom_refuses_a_twin_port_cable_from_a_dgx_over_several_leaves() -> None:
    design = _rail_dgx(7)
    plan = physical_plan(design, NDR)
    node_leaf = next(d for d in plan.links if d.group == "node-leaf")
    twin = next(
        o
        for o in link_options(
            node_leaf.length_m, 400, "infiniband", NDR, ("host:800x2:OSFP:pair@800", "switch@800")
        )
        if o.label == "1 x NDR-ACC-800G-TWIN-5M"
    )
    choice = {
        d.group: [(link_options(d.length_m, d.speed_gbps, d.fabric, NDR, d.link_ends)[0], d.count)]
        for d in plan.links
        if d.count
    }
    bom = build_bom(design, NDR, {**choice, "node-leaf": [(twin, node_leaf.count)]})
    assert "nic-cage" in [v.code for v in check_bom(design, bom, NDR)]


def test_a_dgx_is_offered_no_splitter_nor_single_port_module() -> None:
    length_m = physical_plan(_dgx(), NDR).links[0].length_m
    offered = link_options(length_m, 400, "infiniband", NDR, ("host:800x2:OSFP@800", "switch@800"))
    skus = {sku for o in offered for sku, _ in o.parts}
    assert offered
    assert not skus & {"NDR-ACC-800G-2x400G-5M", "NDR-AOC-800G-2x400G-30M", "MMA4Z00-NS400"}


def test_check_bom_refuses_the_splitter_bom_for_a_dgx() -> None:
    design = _dgx()
    length_m = physical_plan(design, NDR).links[0].length_m
    splitter = next(
        o
        for o in link_options(length_m, 400, "infiniband", NDR, ("host:OSFP", "switch@800"))
        if o.label == "1 x NDR-ACC-800G-2x400G-5M"
    )
    bom = build_bom(design, NDR, {"node-leaf": [(splitter, 32)]})
    violations = check_bom(design, bom, NDR)
    assert [v.code for v in violations] == ["nic-cage"]
    assert "NDR-ACC-800G-2x400G-5M" in violations[0].message
    assert "DGX-B200" in violations[0].message


def test_check_bom_refuses_a_single_port_module_at_a_dgx_cage() -> None:
    design = _dgx()
    length_m = physical_plan(design, NDR).links[0].length_m
    single = next(
        o
        for o in link_options(length_m, 400, "infiniband", NDR, ("host:OSFP", "switch@800"))
        if "MMA4Z00-NS400" in o.label
    )
    bom = build_bom(design, NDR, {"node-leaf": [(single, 32)]})
    codes = [v.code for v in check_bom(design, bom, NDR)]
    assert "nic-cage" in codes


def test_a_server_without_a_stated_nic_cage_keeps_the_splitter() -> None:
    plain = dataclasses.replace(
        NDR, servers=tuple(dataclasses.replace(s, nic_cage=None) for s in NDR.servers)
    )
    design = _dgx()
    bom = build_bom(design, plain)
    assert any(ln.sku == "NDR-ACC-800G-2x400G-5M" for ln in bom.lines)
    assert check_bom(design, bom, plain) == []


def test_the_catalog_loader_names_a_bad_nic_cage(tmp_path: Path) -> None:
    src = CATALOGS / "infiniband-ndr"
    dst = tmp_path / "cat"
    dst.mkdir()
    for f in src.iterdir():
        if f.is_file():
            (dst / f.name).write_bytes(f.read_bytes())
    servers = (dst / "servers.csv").read_text()
    (dst / "servers.csv").write_text(servers.replace(",OSFP-twin", ",OSFP-quad", 1))
    with pytest.raises(InvalidInput) as err:
        load_catalog(dst)
    text = str(err.value)
    assert "servers" in text and "nic_cage" in text and "OSFP-quad" in text
