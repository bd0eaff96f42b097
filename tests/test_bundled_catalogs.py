"""The reference catalogs under catalogs/: valid, sourced, and each able to build its fabric
from 8 to 16,384 GPUs with in-rack, cross-row and cross-hall links."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.model import Catalog, Nic, Switch
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.topology.compat import link_fits

# Catalog folder -> the fabric it exists to offer.
EXPECTED = {
    "infiniband-ndr": "infiniband",
    "roce-spectrum": "roce",
    "ethernet-budget": "ethernet",
    "gen-2026": "infiniband",  # also RoCE at 400G and 800G: tests/test_gen2026_catalog.py
}
MAX_GPUS = 16_384
# Reach classes of the physical layout (docs/domain.md §3): node to leaf in the rack,
# leaf to spine across the row, spine to core across the hall.
IN_RACK_M, CROSS_ROW_M, CROSS_HALL_M = 3, 30, 500
COPPER = ("dac", "aec")
_FAMILY = {"infiniband": "infiniband", "roce": "ethernet", "ethernet": "ethernet"}


def _folder(name: str) -> Path:
    return next(p for p in bundled_catalogs() if p.name == name)


def _endpoint_pairs(catalog: Catalog, fabric: str) -> list[tuple[Nic, Switch, int]]:
    """(NIC, switch, usable ports at the NIC's speed) that can form ``fabric``."""
    pairs = []
    for nic in catalog.nics:
        for sw in catalog.switches:
            if (
                fabric not in nic.protocols
                or sw.fabric_family != _FAMILY[fabric]
                or (fabric == "roce" and not sw.lossless)
            ):
                continue
            if nic.speed_gbps == sw.port_speed_gbps:
                pairs.append((nic, sw, sw.ports))
            elif nic.speed_gbps * sw.breakout == sw.port_speed_gbps:
                pairs.append((nic, sw, sw.ports * sw.breakout))
    return pairs


def _links(
    catalog: Catalog, fabric: str, speed_gbps: int, kinds: tuple[str, ...], reach_m: float
) -> list[str]:
    return [
        lk.sku
        for lk in catalog.links
        if lk.kind in kinds and link_fits(lk, speed_gbps, fabric) and lk.reach_m >= reach_m
    ]


def _fiber(catalog: Catalog, reach_m: float) -> list[str]:
    return [lk.sku for lk in catalog.links if lk.kind == "fiber" and lk.reach_m >= reach_m]


def test_every_reference_catalog_is_bundled() -> None:
    assert {p.name for p in bundled_catalogs()} >= set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_catalog_loads_without_errors(name: str) -> None:
    report = load_catalog_report(_folder(name))
    assert report.errors == []
    assert report.catalog is not None and report.catalog.meta.name == name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_row_names_its_source(name: str) -> None:
    for table in sorted(_folder(name).glob("*.csv")):
        if table.name == "metadata.csv":
            continue
        with table.open(encoding="utf-8") as f:
            for number, row in enumerate(csv.DictReader(f), start=2):
                assert row.get("source", "").strip(), f"{table.name} row {number}"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_some_rows_carry_price_breaks_and_stock_limits(name: str) -> None:
    catalog = load_catalog(_folder(name))
    rows = (*catalog.servers, *catalog.nics, *catalog.switches, *catalog.links)
    assert catalog.price_breaks, "no volume price breaks"
    assert any(r.availability.stock_units is not None for r in rows), "no stock limits"
    broken = {pb.sku for pb in catalog.price_breaks}
    assert any(s.sku in broken for s in catalog.switches), "no switch has a volume break"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_an_eight_gpu_server_has_a_nic_slot_per_gpu(name: str) -> None:
    catalog = load_catalog(_folder(name))
    assert any(s.gpus_per_node == 8 and s.max_nics >= 8 for s in catalog.servers)


@pytest.mark.parametrize(("name", "fabric"), sorted(EXPECTED.items()))
def test_fabric_is_buildable_from_8_to_16384_gpus(name: str, fabric: str) -> None:
    catalog = load_catalog(_folder(name))
    pairs = _endpoint_pairs(catalog, fabric)
    assert pairs, f"no NIC and switch that form {fabric}"
    # A three-tier fat-tree of radix k serves k**3 / 4 endpoints (Al-Fares et al. 2008);
    # the worst case is one NIC per GPU.
    assert max(k**3 // 4 for _, _, k in pairs) >= MAX_GPUS
    speeds = {nic.speed_gbps for nic, _, _ in pairs}
    assert any(_links(catalog, fabric, s, COPPER, IN_RACK_M) for s in speeds), "in-rack copper"
    cross_row = [
        s
        for s in speeds
        if _links(catalog, fabric, s, ("aoc",), CROSS_ROW_M)
        or (
            _links(catalog, fabric, s, ("transceiver",), CROSS_ROW_M)
            and _fiber(catalog, CROSS_ROW_M)
        )
    ]
    assert cross_row, "leaf-to-spine across the row"
    assert any(_links(catalog, fabric, s, ("transceiver",), CROSS_HALL_M) for s in speeds)
    assert _fiber(catalog, CROSS_HALL_M), "single-mode fiber across the hall"


def test_roce_catalog_offers_a_switch_that_cannot_carry_roce() -> None:
    """So that the optimizer's "RoCE needs lossless Ethernet" rule changes the answer."""
    catalog = load_catalog(_folder("roce-spectrum"))
    assert any(not s.lossless for s in catalog.switches)
    assert any(s.lossless for s in catalog.switches)


def test_infiniband_catalog_nic_also_speaks_ethernet() -> None:
    catalog = load_catalog(_folder("infiniband-ndr"))
    assert any(n.protocols == {"infiniband", "roce", "ethernet"} for n in catalog.nics)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_stock_limited_cable_has_an_unlimited_alternative(name: str) -> None:
    """Finite stock forces a mix, never a dead end at 16,384 GPUs."""
    catalog = load_catalog(_folder(name))
    for limited in (lk for lk in catalog.links if lk.availability.stock_units is not None):
        assert any(
            other.availability.stock_units is None
            and other.speed_gbps == limited.speed_gbps
            and other.reach_m >= limited.reach_m
            for other in catalog.links
        ), limited.sku
