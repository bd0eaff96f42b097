"""A cable or host-side module plugs into a NIC only with the form factor of its cage.

hardware.md section 2: the ConnectX-7 MCX75310AAS-NEAT has one OSFP cage (flat-top OSFP
modules), the ConnectX-6 MCX653105A-HDAT a QSFP56 one. Before, the cage was not checked: the
gen-2026 answer for llama3-405b bought 12,312 QSFP112-400G-SR4 modules for GB200-NVL72's
built-in ConnectX-7s, which do not plug in.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from optimizer.catalog import load_catalog
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import fits_cage, fits_end, host_end
from optimizer.topology.design import Design
from optimizer.topology.layout import LinkOption, link_options
from optimizer.topology.plan import physical_plan

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
ROCE = load_catalog(CATALOGS / "roce-spectrum")
NICS = {n.sku: n for n in ROCE.nics}


def _cx7(nodes: int) -> Design:
    return Design(
        server_sku="SYS-A22GA-NBRT",
        nodes=nodes,
        nic_sku="MCX75310AAS-NEAT",
        nics_per_node=1,
        fabric="roce",
        topology="single_switch",
        switch_skus=("SN5600",),
    )


def test_a_plug_fits_a_cage_of_its_form_factor() -> None:
    assert fits_cage("OSFP-flat", "OSFP")
    assert fits_cage("OSFP", "OSFP")
    assert not fits_cage("QSFP112", "OSFP")
    assert not fits_cage("OSFP-finned", "OSFP")  # a switch module's finned top
    assert fits_cage("QSFP56", "QSFP-DD")  # QSFP-DD cages take QSFP plugs
    assert not fits_cage("QSFP-DD", "QSFP56")
    assert fits_cage("", "OSFP") and fits_cage("QSFP112", "")  # not stated: fits


def test_a_nic_end_names_its_cage() -> None:
    assert host_end(NICS["MCX75310AAS-NEAT"]) == "host:OSFP"
    assert host_end(NICS["BCM957608-P1400GDF"]) == "host:QSFP-DD"  # a QSFP112-DD cage
    unstated = dataclasses.replace(NICS["BCM957608-P1400GDF"], form_factor="")
    assert host_end(unstated) == "host"  # a cage the catalog does not state takes any plug
    assert host_end(None) == "host"


def test_an_osfp_nic_is_offered_only_osfp_plugs() -> None:
    offered = link_options(9.0, 400, "roce", ROCE, ("host:OSFP", "switch@800"))
    host_parts = {sku for o in offered for sku, _ in o.parts if sku.startswith(("QSFP", "OSFP-4"))}
    assert host_parts == {"OSFP-400G-DR4"}
    anywhere = link_options(9.0, 400, "roce", ROCE, ("host", "switch@800"))
    assert any("QSFP112-400G-SR4" in o.label for o in anywhere)


def test_the_builder_buys_flat_osfp_modules_for_a_connectx_7() -> None:
    design = _cx7(65)  # 65 links on 64 cages: broken out, optics at 9 m
    bom = build_bom(design, ROCE)
    host_modules = {
        ln.sku for ln in bom.lines if ln.category == "transceiver" and ln.sku.endswith("DR4")
    }
    assert "OSFP-400G-DR4" in host_modules
    assert not any(ln.sku == "QSFP112-400G-SR4" for ln in bom.lines)
    assert check_bom(design, bom, ROCE) == []


def test_check_bom_rejects_a_module_that_does_not_fit_the_nic_cage() -> None:
    design = _cx7(65)
    length_m = physical_plan(design, ROCE).links[0].length_m
    qsfp = next(
        o
        for o in link_options(length_m, 400, "roce", ROCE, ("host", "switch@800"))
        if "QSFP112-400G-SR4" in o.label
    )
    bom = build_bom(design, ROCE, {"node-leaf": [(qsfp, 65)]})
    violations = check_bom(design, bom, ROCE)
    assert [v.code for v in violations] == ["nic-cage"]
    assert "QSFP112-400G-SR4 (QSFP112 plug)" in violations[0].message


def test_a_catalog_without_nic_form_factors_fits_any_plug() -> None:
    unstated = dataclasses.replace(
        ROCE, nics=tuple(dataclasses.replace(n, form_factor="") for n in ROCE.nics)
    )
    design = _cx7(65)
    bom = build_bom(design, unstated)
    assert any(ln.sku == "QSFP112-400G-SR4" for ln in bom.lines)  # the cheapest optic again
    assert check_bom(design, bom, unstated) == []


def _cx7_on_osfp800(nodes: int) -> Design:
    return dataclasses.replace(_cx7(nodes), switch_skus=("AS9817-64O",))


def _thor2(nodes: int) -> Design:
    """Broadcom Thor2 400G NICs (a QSFP112-DD cage) on one 64 x 800G OSFP800 switch."""
    return dataclasses.replace(
        _cx7(nodes), nic_sku="BCM957608-P1400GDF", switch_skus=("AS9817-64O",)
    )


def test_a_qsfp_dd_nic_is_never_given_an_osfp_splitter_end() -> None:
    """65 links on 64 cages are broken out. An OSFP splitter's narrow end fills a ConnectX-7's
    cage but not a Thor2's, so the Thor2's links take QSFP plugs instead (the splitter is
    given the reach of the leaf here, where it would be the cheapest part)."""
    catalog = dataclasses.replace(
        ROCE,
        links=tuple(
            dataclasses.replace(lk, reach_m=30.0) if lk.sku == "DAC-800G-2x400G-OSFP-2M" else lk
            for lk in ROCE.links
        ),
    )
    design = _thor2(65)
    bom = build_bom(design, catalog)
    assert not any(ln.sku == "DAC-800G-2x400G-OSFP-2M" for ln in bom.lines)
    assert check_bom(design, bom, catalog) == []
    assert any(
        ln.sku == "DAC-800G-2x400G-OSFP-2M" for ln in build_bom(_cx7_on_osfp800(65), catalog).lines
    )


def test_check_bom_rejects_an_osfp_splitter_end_in_a_qsfp_dd_nic_cage() -> None:
    splitter = next(lk for lk in ROCE.links if lk.sku == "DAC-800G-2x400G-OSFP-2M")
    fan_out = LinkOption("cable", ((splitter.sku, 1),), 2.0, 22_000, 0.05, ((splitter.sku, 2),))
    design = _thor2(4)
    bom = build_bom(design, ROCE, {"node-leaf": [(fan_out, 4)]})
    assert "nic-cage" in [v.code for v in check_bom(design, bom, ROCE)]


def test_thor_ultra_takes_no_qsfp_dd800_module() -> None:
    """gen-2026's Thor Ultra has an OSFP112 cage (its source): the 800G QSFP-DD DR8 was
    offered for it while its form factor was not stated."""
    gen = load_catalog(CATALOGS / "gen-2026")
    thor = next(n for n in gen.nics if n.sku == "THOR-ULTRA-800G")
    dr8 = next(lk for lk in gen.links if lk.sku == "QDD-800G-DR8")
    assert host_end(thor) == "host:OSFP"
    assert not fits_end(dr8, host_end(thor))


def test_every_bundled_cable_and_module_states_its_plug() -> None:
    """A plug the catalog does not state fits every cage, so the optimizer bought the one
    that did (roce-spectrum's AEC-400G-7M) for a Thor2's QSFP-DD cage at one end and an
    OSFP800 switch cage at the other, which no single-plug cable joins."""
    unstated = [
        f"{path.parent.name}: {lk.sku}"
        for path in sorted(CATALOGS.glob("*/links.csv"))
        for lk in load_catalog(path.parent).links
        if lk.kind != "fiber" and not lk.form_factor
    ]
    assert unstated == []


def test_a_qsfp_dd_nic_on_an_osfp800_switch_is_not_given_the_osfp_aec() -> None:
    """The Thor2's straight links to an AS9817-64O take optics at both ends, each in its own
    cage, where they took the AEC of no stated plug (docs/cli.md's 24-GPU answer)."""
    design = _thor2(3)
    bom = build_bom(design, ROCE)
    skus = {ln.sku for ln in bom.lines}
    assert "AEC-400G-7M" not in skus
    assert {"QSFP112-400G-SR4", "OSFP-800G-2xSR4"} <= skus
    assert check_bom(design, bom, ROCE) == []
    assert "AEC-400G-7M" in {ln.sku for ln in build_bom(_cx7_on_osfp800(3), ROCE).lines}
