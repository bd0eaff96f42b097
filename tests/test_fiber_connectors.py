"""An optic takes fiber of its connector (links.connector): MPO-12 for SR4/DR4 and each port
of a twin-port module, MPO-16 for SR8/DR8, LC duplex for CWDM4/FR4. Before the column, fiber
was matched by reach alone, so ethernet-budget's 400G DR4 got LC duplex fiber and gen-2026's
MPO-16 DR8 an MPO-12 trunk: a buyer would have ordered fiber that does not plug in."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.model import Catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.layout import link_options, matching_fiber

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"


def _catalog(name: str) -> Catalog:
    return load_catalog(CATALOGS / name)


def _fiber_for(catalog: Catalog, optic_sku: str) -> str | None:
    optic = next(lk for lk in catalog.links if lk.sku == optic_sku)
    fiber = matching_fiber(optic, [lk for lk in catalog.links if lk.kind == "fiber"])
    return fiber.sku if fiber else None


@pytest.mark.parametrize(
    ("catalog", "optic", "fiber"),
    [
        ("ethernet-budget", "QDD-400G-DR4", "FIBER-OS2-MPO12"),  # was FIBER-OS2-LC
        ("ethernet-budget", "QDD-400G-SR8", "FIBER-OM4-MPO16"),  # was FIBER-OM4-MPO12
        ("ethernet-budget", "QSFP28-100G-CWDM4", "FIBER-OS2-LC"),
        ("ethernet-budget", "QSFP28-100G-SR4", "FIBER-OM4-MPO12"),
        ("gen-2026", "QDD-800G-DR8", "FIBER-OS2-MPO16"),  # was FIBER-OS2-MPO12
        ("gen-2026", "OSFP-800G-2xFR4", "FIBER-OS2-LC"),  # was FIBER-OS2-MPO12
        ("roce-spectrum", "OSFP-800G-2xFR4", "FIBER-OS2-LC"),
        ("roce-spectrum", "OSFP-800G-2xDR4", "FIBER-OS2-MPO12"),
        ("infiniband-ndr", "MMA4Z00-NS", "FIBER-OM4-MPO12"),
    ],
)
def test_an_optic_takes_fiber_of_its_connector_and_medium(
    catalog: str, optic: str, fiber: str
) -> None:
    assert _fiber_for(_catalog(catalog), optic) == fiber


@pytest.mark.parametrize("path", bundled_catalogs(), ids=lambda p: p.name)
def test_every_bundled_optic_has_fiber_of_its_connector(path: Path) -> None:
    catalog = load_catalog(path)
    for optic in (lk for lk in catalog.links if lk.kind == "transceiver"):
        assert optic.connector, f"{optic.sku} states no connector"
        assert _fiber_for(catalog, optic.sku) is not None, optic.sku


def test_optics_of_different_connectors_are_never_paired() -> None:
    """A 2xFR4 (LC) and a 2xDR4 (MPO-12) are both single-mode 500 m+ optics: they share no
    fiber, so no link option puts them at the two ends of one link."""
    catalog = _catalog("roce-spectrum")
    for option in link_options(40.0, 400, "roce", catalog):
        skus = {sku for sku, _ in option.parts}
        assert not {"OSFP-800G-2xFR4", "OSFP-800G-2xDR4"} <= skus, option.label


def _leaf_spine() -> Design:
    """512 400G NICs on SN5600s: every link group runs on single-mode MPO-12 optics."""
    return Design(
        server_sku="SYS-8125GS-TNHR",
        nodes=64,
        nic_sku="MCX75310AAS-NEAT",
        nics_per_node=8,
        fabric="roce",
        topology="fat_tree",
        switch_skus=("SN5600",),
    )


def test_check_bom_rejects_fiber_the_optics_do_not_take() -> None:
    """The leaf-spine's MPO-12 trunks swapped for LC duplex fiber of the same price: only
    the connector is wrong, and check_bom says so."""
    catalog = _catalog("roce-spectrum")
    design = _leaf_spine()
    built = build_bom(design, catalog)
    assert check_bom(design, built, catalog) == []
    lines = [
        dataclasses.replace(ln, sku="FIBER-OS2-LC")
        if (ln.tier, ln.sku) == ("leaf-spine", "FIBER-OS2-MPO12")
        else ln
        for ln in built.lines
    ]
    assert lines != list(built.lines)
    swapped = dataclasses.replace(built, lines=tuple(lines))
    violations = check_bom(design, swapped, catalog)
    assert {v.code for v in violations} == {"fiber-connector"}
    assert any("FIBER-OS2-LC (LC) on leaf-spine" in v.message for v in violations)


def test_a_connector_on_a_cable_row_is_refused(tmp_path: Path) -> None:
    shutil.copytree(CATALOGS / "roce-spectrum", tmp_path / "cat")
    path = tmp_path / "cat" / "links.csv"
    lines = path.read_text().splitlines()
    dac = next(i for i, line in enumerate(lines) if line.startswith("DAC-400G-QSFP112-3M,"))
    assert lines[dac].endswith(",")
    lines[dac] += "MPO-12"
    path.write_text("\n".join(lines) + "\n")
    report = load_catalog_report(tmp_path / "cat")
    assert [(p.table, p.row, p.column) for p in report.errors] == [("links", dac + 1, "connector")]
    assert "only optics and fiber" in report.errors[0].expected
