"""Laws every BOM the builder produces obeys, over random designs (hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import link_fits, nic_fits_fabric, switch_fits_fabric
from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan
from optimizer.topology.torus import ports_per_node, torus_shape
from tests.topology_fixtures import forwarding_catalog, topology_catalog

# NICs that forward, so that random tori of any size are buildable (ConnectX ones would be
# refused beyond two nodes: tests/test_buildability.py).
CATALOGS = {
    stock: forwarding_catalog(topology_catalog(aoc_stock=stock)) for stock in (None, 0, 40, 300)
}
PARTS = {
    "infiniband": (("CX7-400",), ("NDR-64",)),
    "roce": (("CX7-400", "THOR2-400"), ("SN5600",)),
    "ethernet": (("CX7-400", "THOR2-400"), ("SN5600", "TH5-LOSSY")),
}


@st.composite
def designs(draw: st.DrawFn) -> tuple[Design, int | None]:
    fabric = draw(st.sampled_from(sorted(PARTS)))
    nics, switches = PARTS[fabric]
    topology = draw(
        st.sampled_from(["single_switch", "fat_tree", "rail_optimized", "dragonfly", "torus"])
    )
    nics_per_node = draw(st.integers(6, 8) if topology == "torus" else st.integers(1, 8))
    max_nodes = {"single_switch": 64 // nics_per_node, "torus": 150}.get(topology, 320)
    oversubscription, tier = 1.0, "leaf"
    if topology in ("fat_tree", "rail_optimized"):
        oversubscription = draw(st.sampled_from([1.0, 2.0, 3.0]))
        tier = draw(st.sampled_from(["leaf", "aggregation"]))
    nodes = draw(st.integers(2 if topology == "torus" else 1, max_nodes))
    if topology == "torus":  # every NIC port cabled: NICs per node a multiple of torus ports
        assume(nics_per_node % ports_per_node(torus_shape(nodes, 3)) == 0)
    design = Design(
        server_sku="SRV-H100",
        nodes=nodes,
        nic_sku=draw(st.sampled_from(nics)),
        nics_per_node=nics_per_node,
        fabric=fabric,
        topology=topology,
        oversubscription=oversubscription,
        switch_skus=() if topology == "torus" else (draw(st.sampled_from(switches)),),
        oversubscribed_tier=tier,
    )
    return design, draw(st.sampled_from(sorted(CATALOGS, key=str)))


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(designs())
def test_every_endpoint_has_a_link(case):
    """Link ends the parts give (a splitter's or a twin-port module's every port; a whole part
    may leave one port spare per multi-port SKU, and one per switch where each switch buys
    whole parts for its own ends) cover every endpoint."""
    design, stock = case
    catalog = CATALOGS[stock]
    bom = build_bom(design, catalog)
    if design.topology == "torus":  # each torus link joins two NIC ports, every port cabled
        links, spare = _links_served(bom.lines, catalog)
        assert 2 * links - 2 * spare <= design.endpoints <= 2 * links
        return
    node_leaf = [ln for ln in bom.lines if ln.tier == "node-leaf"]
    links, spare = _links_served(node_leaf, catalog)
    first = {"leaf", "router"}
    spare += sum(ln.quantity for ln in bom.lines if ln.category == "switch" and ln.tier in first)
    assert links - spare <= design.nodes * design.nics_per_node <= links


def _links_served(lines, catalog):
    """(links the cables and optics give, how many of them may be a whole part's spare)."""
    parts = {lk.sku: lk for lk in catalog.links}
    ends, spare = 0, 0
    for ln in (ln for ln in lines if ln.category in ("cable", "transceiver")):
        ports = parts[ln.sku].module_ports
        per_end = 2 if ln.category == "cable" else 1  # a cable's port is a whole link
        ends += ln.quantity * ports * per_end
        spare += (ports - 1) * per_end
    return ends // 2, spare


@SETTINGS
@given(designs())
def test_no_switch_uses_more_ports_than_it_has(case):
    design, stock = case
    for tier in physical_plan(design, CATALOGS[stock]).switches:
        assert tier.busiest_ports_used <= tier.ports_per_switch
        assert tier.ports_used <= tier.quantity * tier.ports_per_switch


@SETTINGS
@given(designs())
def test_every_link_part_reaches_its_length_and_fits_the_fabric(case):
    design, stock = case
    catalog = CATALOGS[stock]
    links = {lk.sku: lk for lk in catalog.links}
    nic = next(n for n in catalog.nics if n.sku == design.nic_sku)
    for line in build_bom(design, catalog).lines:
        if line.sku in links:
            assert links[line.sku].reach_m >= line.length_m
            assert link_fits(links[line.sku], nic.speed_gbps, design.fabric)


@SETTINGS
@given(designs())
def test_protocol_rules_hold_for_nics_and_switches(case):
    design, stock = case
    catalog = CATALOGS[stock]
    switches = {s.sku: s for s in catalog.switches}
    nic = next(n for n in catalog.nics if n.sku == design.nic_sku)
    assert nic_fits_fabric(nic, design.fabric)
    for line in build_bom(design, catalog).lines:
        if line.category == "switch":
            assert switch_fits_fabric(switches[line.sku], design.fabric)


@SETTINGS
@given(designs())
def test_capex_is_the_sum_of_the_lines_to_the_cent(case):
    design, stock = case
    bom = build_bom(design, CATALOGS[stock])
    assert bom.capex_cents == sum(ln.unit_price_cents * ln.quantity for ln in bom.lines)
    assert bom.capex_cents == sum(ln.extended_price_cents for ln in bom.lines)


@SETTINGS
@given(designs())
def test_volume_breaks_apply_to_a_skus_total_quantity(case):
    design, stock = case
    catalog = CATALOGS[stock]
    bom = build_bom(design, catalog)
    totals = Counter[str]()
    for ln in bom.lines:
        totals[ln.sku] += ln.quantity
    list_prices = {
        row.sku: row.price_cents
        for row in (*catalog.servers, *catalog.nics, *catalog.switches, *catalog.links)
    }
    for ln in bom.lines:
        assert ln.unit_price_cents == catalog.unit_price_cents(
            ln.sku, totals[ln.sku], list_prices[ln.sku]
        )


@SETTINGS
@given(designs())
def test_every_line_orders_something(case):
    design, stock = case
    assert all(ln.quantity > 0 for ln in build_bom(design, CATALOGS[stock]).lines)


# 255 single-NIC nodes on SN5600 leaves at 2:1: 85 down and 43 up 400G lanes need 43 + 22 of
# the switch's 64 800G cages; the split is in whole cages now (84:44).
BROKEN_OUT_LEAF = Design(
    server_sku="SRV-H100",
    nodes=255,
    nic_sku="CX7-400",
    nics_per_node=1,
    fabric="roce",
    topology="fat_tree",
    oversubscription=2.0,
    switch_skus=("SN5600",),
)


@SETTINGS
@given(designs())
@example((BROKEN_OUT_LEAF, None))
def test_check_bom_accepts_every_bom_the_builder_produces(case):
    design, stock = case
    catalog = CATALOGS[stock]
    assert check_bom(design, build_bom(design, catalog), catalog) == []
