"""Switch cages: a switch-side module fills one cage of the switch it plugs into (issue 16).

hardware.md section 3: a Quantum-X800 Q3400-RA has 72 twin-port OSFP cages for its 144 x 800G
ports (a cage takes a 1.6T 2 x 800G module); an SN5600 has 64 OSFP cages of 800G, each one
port (2 x 400G by breakout), so a 1.6T module does not plug into it. The catalog says it with
``switches.ports_per_cage`` (tests/data/fabric_800g: Q3400-RA 2, SN5600 1).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.model import Catalog
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import fits_end, switch_end
from optimizer.topology.design import Design

DATA = Path(__file__).parent / "data" / "fabric_800g"
CATALOG = load_catalog(DATA)
LINKS = {lk.sku: lk for lk in CATALOG.links}
SWITCHES = {sw.sku: sw for sw in CATALOG.switches}


def _uncaged(catalog: Catalog) -> Catalog:
    """The catalog as an older one without the cage column."""
    switches = tuple(dataclasses.replace(s, ports_per_cage=None) for s in catalog.switches)
    return dataclasses.replace(catalog, switches=switches)


def _ethernet_800g(nodes: int) -> Design:
    return Design(
        server_sku="HGX-B300-8GPU",
        nodes=nodes,
        nic_sku="THOR-ULTRA-800",
        nics_per_node=8,
        fabric="roce",
        topology="fat_tree",
        switch_skus=("SN5600",),
    )


def _switch_modules(bom: BillOfMaterials) -> set[str]:
    return {
        ln.sku
        for ln in bom.lines
        if ln.category == "transceiver" and LINKS[ln.sku].fits_side == "switch"
    }


def test_a_cage_end_names_the_cage_bandwidth() -> None:
    assert switch_end(SWITCHES["Q3400-RA"]) == "switch:1600x2"
    assert switch_end(SWITCHES["SN5600"]) == "switch:800"
    assert switch_end(dataclasses.replace(SWITCHES["SN5600"], ports_per_cage=None)) == "switch"


def test_a_1_6t_module_fits_a_twin_port_cage_and_not_an_800g_cage() -> None:
    twin = LINKS["OSFP-1.6T-2xDR4"]
    assert fits_end(twin, "switch:1600")
    assert not fits_end(twin, "switch:800")
    assert fits_end(twin, "switch")  # cage not stated: any switch-side module
    assert not fits_end(twin, "host")


def test_an_800g_switch_fabric_buys_modules_that_fit_its_800g_cages() -> None:
    bom = build_bom(_ethernet_800g(64), CATALOG)
    assert _switch_modules(bom) == {"OSFP-800G-2xDR4"}  # whole 800G module per 800G link
    assert check_bom(_ethernet_800g(64), bom, CATALOG) == []


def test_without_the_cage_column_the_cheaper_1_6t_half_is_taken_as_before() -> None:
    uncaged = _uncaged(CATALOG)
    assert "OSFP-1.6T-2xDR4" in _switch_modules(build_bom(_ethernet_800g(64), uncaged))


def test_an_xdr_fabric_still_takes_the_1_6t_module_its_cages_hold() -> None:
    design = dataclasses.replace(
        _ethernet_800g(3),
        nic_sku="CX8-XDR-1x800",
        fabric="infiniband",
        switch_skus=("Q3400-RA",),
    )
    bom = build_bom(design, CATALOG)
    assert _switch_modules(bom) == {"XDR-1.6T-2xDR4-TWIN"}
    assert check_bom(design, bom, CATALOG) == []


def test_check_bom_rejects_a_module_that_does_not_fit_the_switch_cage() -> None:
    design = _ethernet_800g(64)
    wrong = build_bom(design, _uncaged(CATALOG))  # 1.6T halves in SN5600 cages
    codes = {v.code for v in check_bom(design, wrong, CATALOG)}
    assert "optic-cage" in codes


def test_ports_per_cage_must_divide_the_ports(tmp_path: Path) -> None:
    shutil.copytree(DATA, tmp_path / "cat")
    path = tmp_path / "cat" / "switches.csv"
    path.write_text(path.read_text().replace('placeholders",2\n', 'placeholders",5\n'))
    report = load_catalog_report(tmp_path / "cat")
    assert [(p.table, p.column) for p in report.errors] == [("switches", "ports_per_cage")]


def test_a_catalog_without_the_cage_column_states_no_cage(tmp_path: Path) -> None:
    shutil.copytree(DATA, tmp_path / "cat")
    path = tmp_path / "cat" / "switches.csv"
    lines = path.read_text().splitlines()
    path.write_text("".join(line.rsplit(",", 1)[0] + "\n" for line in lines))
    assert all(s.ports_per_cage is None for s in load_catalog(tmp_path / "cat").switches)


def test_the_bundled_switches_state_their_cages() -> None:
    """hardware.md section 3: a Quantum-2 QM9700 has 32 twin-port OSFP cages for its 64 x
    400G ports, a Q3400-RA 72 for 144 x 800G, the 800G Ethernet boxes one port per cage."""
    root = Path(__file__).resolve().parents[1] / "catalogs"
    cages = {
        s.sku: s.ports_per_cage
        for name in ("infiniband-ndr", "gen-2026")
        for s in load_catalog(root / name).switches
    }
    assert cages == {
        "MQM9700-NS2F": 2,
        "MQM9790-NS2F": 2,
        "Q3400-RA": 2,
        "SN5600": 1,
        "7060X6-64PE": 1,
        "AS9817-64O": 1,
    }
