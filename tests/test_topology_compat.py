"""Protocol and speed rules: which NIC, switch and link parts a fabric may combine."""

from __future__ import annotations

import pytest

from optimizer.topology.compat import (
    link_fits,
    nic_fits_fabric,
    ports_at_speed,
    switch_fits_fabric,
)
from tests.topology_fixtures import topology_catalog

CAT = topology_catalog()
SWITCH = {s.sku: s for s in CAT.switches}
NIC = {n.sku: n for n in CAT.nics}
LINK = {lk.sku: lk for lk in CAT.links}


def test_breakout_serves_a_400g_nic_on_two_halves_of_an_800g_port():
    assert ports_at_speed(SWITCH["SN5600"], 400) == 128


def test_native_speed_uses_every_port_once():
    assert ports_at_speed(SWITCH["NDR-64"], 400) == 64


def test_a_nic_faster_than_the_port_is_incompatible():
    assert ports_at_speed(SWITCH["NDR-64"], 800) == 0


def test_a_split_beyond_the_breakout_is_incompatible():
    assert ports_at_speed(SWITCH["SN5600"], 200) == 0  # 4 x 200G needs breakout 4


def test_a_speed_that_does_not_divide_the_port_is_incompatible():
    assert ports_at_speed(SWITCH["NDR-64"], 300) == 0


@pytest.mark.parametrize(
    ("sku", "fabric", "fits"),
    [
        ("NDR-64", "infiniband", True),
        ("NDR-64", "roce", False),
        ("NDR-64", "ethernet", False),
        ("SN5600", "roce", True),
        ("SN5600", "ethernet", True),
        ("SN5600", "infiniband", False),
        ("TH5-LOSSY", "roce", False),
        ("TH5-LOSSY", "ethernet", True),
    ],
)
def test_switch_fabric_rules(sku, fabric, fits):
    assert switch_fits_fabric(SWITCH[sku], fabric) is fits


def test_infiniband_needs_an_infiniband_nic():
    assert nic_fits_fabric(NIC["CX7-400"], "infiniband")
    assert not nic_fits_fabric(NIC["THOR2-400"], "infiniband")
    assert nic_fits_fabric(NIC["THOR2-400"], "roce")


def test_links_must_be_rated_for_the_fabric_family():
    assert link_fits(LINK["IB-DAC-3M"], 400, "infiniband")
    assert not link_fits(LINK["IB-DAC-3M"], 400, "roce")
    assert link_fits(LINK["ETH-DAC-3M"], 400, "roce")
    assert not link_fits(LINK["ETH-DAC-3M"], 400, "infiniband")


def test_fiber_carries_any_fabric_up_to_its_rating():
    assert link_fits(LINK["FIBER-OM4"], 400, "infiniband")
    assert link_fits(LINK["FIBER-OM4"], 800, "ethernet")


def test_cables_and_optics_run_at_exactly_their_rate():
    assert not link_fits(LINK["IB-DAC-3M"], 200, "infiniband")
