"""Multi-plane fabrics: a NIC whose ports feed independent networks (issue 16, fabric800).

Sources: a ConnectX-8 runs Ethernet as 2 x 400GbE (single-port 800GbE is not supported per its
firmware release notes; reference nics.csv, hardware.md section 2); the DGX B300 MGX /
Spectrum-X reference design runs twin planes of 2 x 400G per GPU, one scalable unit of 64
nodes taking 16 leaves and 8 spines (hardware.md section 5). The catalog says it with
``nics.planes`` (tests/data/fabric_800g: CX8-ETH-2x400 has 2).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from enumerator import assert_rank_one_is_the_optimum
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.catalog import load_catalog, load_catalog_report
from optimizer.catalog.model import Catalog
from optimizer.optimize.backends import Limits, get_backend
from optimizer.optimize.baseline import nics_in_rule_order
from optimizer.optimize.candidates import EstimateCache, SearchSpace
from optimizer.optimize.convert import design_gbps_per_gpu
from optimizer.optimize.dominance import prune_dominated
from optimizer.optimize.problem import RowBuilder
from optimizer.optimize.request import Confidence, Constraints, Objective, OptimizeSpec
from optimizer.performance.cluster import server_cluster
from optimizer.performance.planner import plan_and_estimate
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan
from optimizer.workload.presets import preset

DATA = Path(__file__).parent / "data" / "fabric_800g"
CATALOG = load_catalog(DATA)
TWO_PLANES = "CX8-ETH-2x400"
EXPECTED = Confidence.EXPECTED


def _one_plane(catalog: Catalog) -> Catalog:
    """The same catalog with the two-port NIC cabling one port (no planes column)."""
    nics = tuple(
        dataclasses.replace(n, planes=None) if n.sku == TWO_PLANES else n for n in catalog.nics
    )
    return dataclasses.replace(catalog, nics=nics)


def _spectrum_x(nodes: int, topology: str = "rail_optimized") -> Design:
    return Design(
        server_sku="HGX-B300-8GPU",
        nodes=nodes,
        nic_sku=TWO_PLANES,
        nics_per_node=8,
        fabric="roce",
        topology=topology,
        switch_skus=("SN5600",),
    )


def _codes(design: Design, bom: BillOfMaterials) -> set[str]:
    return {v.code for v in check_bom(design, bom, CATALOG)}


def _scaled(bom: BillOfMaterials, category: str, tier: str, factor: float) -> BillOfMaterials:
    lines = tuple(
        dataclasses.replace(ln, quantity=int(ln.quantity * factor))
        if ln.category == category and ln.tier == tier
        else ln
        for ln in bom.lines
    )
    return dataclasses.replace(bom, lines=lines)


def test_a_two_plane_scalable_unit_reproduces_the_b300_spectrum_x_switch_counts() -> None:
    plan = physical_plan(_spectrum_x(64), CATALOG)
    assert {d.tier: d.quantity for d in plan.switches} == {"leaf": 16, "spine": 8}


def test_each_plane_is_sized_as_its_own_network_of_one_port_per_nic() -> None:
    two = physical_plan(_spectrum_x(64), CATALOG)
    one = physical_plan(_spectrum_x(64), _one_plane(CATALOG))
    assert {d.tier: d.quantity for d in one.switches} == {"leaf": 8, "spine": 4}
    assert {d.group: d.count for d in two.links} == {d.group: 2 * d.count for d in one.links}
    assert two.sizing.planes == 2 and one.sizing.planes == 1


def test_the_profile_is_one_planes_so_hops_do_not_grow_with_the_planes() -> None:
    two = physical_plan(_spectrum_x(64), CATALOG).sizing.profile
    one = physical_plan(_spectrum_x(64), _one_plane(CATALOG)).sizing.profile
    assert two == one
    assert two.endpoints == 512 and two.max_switch_hops == 3


def test_uplinks_still_bundle_at_800g_within_each_plane() -> None:
    plan = physical_plan(_spectrum_x(64), CATALOG)
    assert {(d.group, d.count, d.speed_gbps) for d in plan.links} == {
        ("node-leaf", 1024, 400),
        ("leaf-spine", 512, 800),
    }


def test_a_two_plane_bom_cables_both_ports_of_every_nic_and_verifies() -> None:
    design = _spectrum_x(64)
    bom = build_bom(design, CATALOG)
    nic = next(ln for ln in bom.lines if ln.category == "nic")
    assert nic.quantity == 512
    assert "spare" not in nic.source and "one per fabric plane" in nic.source
    assert check_bom(design, bom, CATALOG) == []


def test_without_planes_the_second_port_is_spare_and_said_so() -> None:
    bom = build_bom(_spectrum_x(64), _one_plane(CATALOG))
    nic = next(ln for ln in bom.lines if ln.category == "nic")
    assert "1 of 2 ports cabled per NIC, 1 spare" in nic.source


def test_check_bom_rejects_a_bom_that_builds_only_one_plane() -> None:
    design = _spectrum_x(64)
    bom = build_bom(design, CATALOG)
    # Half of every tier and of the node-leaf optics: one plane's network, as if unplaned.
    for category, tier in [
        ("switch", "leaf"),
        ("switch", "spine"),
        ("transceiver", "node-leaf"),
        ("fiber", "node-leaf"),
    ]:
        bom = _scaled(bom, category, tier, 0.5)
    codes = _codes(design, bom)
    assert {"switch-count", "endpoint-unlinked", "nic-uncabled"} <= codes


def test_check_bom_rejects_a_tier_that_does_not_split_into_identical_planes() -> None:
    design = _spectrum_x(64)
    bom = build_bom(design, CATALOG)
    odd = tuple(
        dataclasses.replace(ln, quantity=ln.quantity + 1)
        if ln.category == "switch" and ln.tier == "spine"
        else ln
        for ln in bom.lines
    )
    assert "plane-split" in _codes(design, dataclasses.replace(bom, lines=odd))


def test_a_nic_cannot_feed_more_planes_than_it_has_ports(tmp_path: Path) -> None:
    shutil.copytree(DATA, tmp_path / "cat")
    nics = tmp_path / "cat" / "nics.csv"
    nics.write_text(nics.read_text().replace(",false,2\n", ",false,3\n"))
    report = load_catalog_report(tmp_path / "cat")
    assert [(p.table, p.column) for p in report.errors] == [("nics", "planes")]


def test_a_catalog_without_the_planes_column_loads_with_one_plane() -> None:
    ndr = load_catalog(Path(__file__).resolve().parents[1] / "catalogs" / "infiniband-ndr")
    assert all(n.planes is None and n.plane_count == 1 for n in ndr.nics)


def test_the_mip_prices_both_planes_as_the_bom_does() -> None:
    design = _spectrum_x(5, topology="fat_tree")  # 40 ports per plane: one leaf each
    plan = physical_plan(design, CATALOG)
    builder = RowBuilder(CATALOG, OptimizeSpec(workload=preset("llama3-8b")))
    cents = builder.exact_cost(plan, get_backend("cpsat"), Limits(time_limit_s=10.0))
    assert {d.tier: d.quantity for d in plan.switches} == {"leaf": 2}
    assert cents == build_bom(design, CATALOG).capex_cents


def _reestimate(design: Design, catalog: Catalog) -> float:
    """Training hours of a built design of ``catalog`` as the optimizer times its answers."""
    timer = EstimateCache(preset("llama3-70b"), {s.sku: s for s in catalog.servers}, EXPECTED)
    est = timer.reestimate(design, physical_plan(design, catalog))
    assert est is not None
    return est.training_time_hours


def _at_line_rate(design: Design, nic_gbps: int) -> float:
    """Training hours of ``design``'s servers on one plane's network with NICs of
    ``nic_gbps``: what two identical planes, each carrying half of every transfer, amount to."""
    server = next(s for s in CATALOG.servers if s.sku == design.server_sku)
    cluster = server_cluster(
        server,
        nodes=design.nodes,
        fabric=design.fabric,
        nic_gbps=nic_gbps,
        nics_per_node=design.nics_per_node,
        topology=physical_plan(design, CATALOG).sizing.profile,
    )
    return plan_and_estimate(preset("llama3-70b"), cluster).training_time_hours


def test_a_two_plane_nic_is_timed_at_both_planes_line_rate() -> None:
    """2 x 400G planes move 800 Gb/s per NIC: the design trains as one plane would at 800G,
    faster than the same NICs cabling one port (found: both were timed at 400G)."""
    design = _spectrum_x(64)
    two = _reestimate(design, CATALOG)
    assert two == _at_line_rate(design, 800)
    assert two < _reestimate(design, _one_plane(CATALOG)) == _at_line_rate(design, 400)


def test_the_bandwidth_per_gpu_an_answer_prints_counts_every_plane() -> None:
    assert design_gbps_per_gpu(_spectrum_x(64), CATALOG) == 8 * 800 / 8
    assert design_gbps_per_gpu(_spectrum_x(64), _one_plane(CATALOG)) == 8 * 400 / 8


def test_two_plane_nics_make_time_keys_apart_from_one_plane_nics_of_their_port_speed() -> None:
    spec = OptimizeSpec(workload=preset("llama3-70b"), allowed_fabrics=("roce",))
    keyed = {
        (nic.sku, key.planes, key.nic_gbps)
        for key, parts in SearchSpace(CATALOG, spec).keys()  # noqa: SIM118 - not a mapping
        for nic, _ in parts
        if nic.speed_gbps == 400
    }
    assert keyed == {
        ("CX8-ETH-2x400", 2, 800),
        ("CX7-1x400", 1, 400),
    }


def test_rank_one_with_two_plane_nics_on_offer_is_the_enumerators_optimum() -> None:
    """Two-plane and one-plane 400G NICs: the search's keys, bounds and times read the planes
    as the independent enumerator does."""
    four_hundred = dataclasses.replace(
        CATALOG, nics=tuple(n for n in CATALOG.nics if n.speed_gbps == 400)
    )
    spec = OptimizeSpec(
        workload=preset("llama3-70b", training_tokens=2e9),
        constraints=Constraints(max_gpus=6 * 8, budget_cents=300_000_000),
        objective=Objective.MIN_TIME,
        allowed_fabrics=("roce",),
        time_limit_s=60.0,
    )
    assert_rank_one_is_the_optimum(four_hundred, spec, max_nodes=6)


def test_a_cheaper_one_plane_nic_does_not_prune_a_two_plane_nic() -> None:
    """The same card cabling one port is cheaper to build around but moves half: no
    dominance (found: NICs were grouped by port speed, ports and protocols alone)."""
    two = next(n for n in CATALOG.nics if n.sku == TWO_PLANES)
    one = dataclasses.replace(two, sku="CX8-ETH-1x400", planes=None, price_cents=1)
    pruned = prune_dominated(dataclasses.replace(CATALOG, nics=(*CATALOG.nics, one)))
    assert {TWO_PLANES, "CX8-ETH-1x400"} <= {n.sku for n in pruned.nics}


def test_a_two_plane_nic_moves_no_more_than_its_servers_slot_carries() -> None:
    """2 x 400G planes in a PCIe Gen5 x16 slot (400 Gb/s, issue 14 host link): the NIC's
    800G over both planes is capped at the slot, as a one-port 800G NIC would be, and the
    estimate says so."""
    design = _spectrum_x(64)
    gen5 = dataclasses.replace(
        CATALOG,
        servers=tuple(dataclasses.replace(s, nic_slot_gbps=400) for s in CATALOG.servers),
    )
    timer = EstimateCache(preset("llama3-70b"), {s.sku: s for s in gen5.servers}, EXPECTED)
    est = timer.reestimate(design, physical_plan(design, gen5))
    assert est is not None
    assert est.training_time_hours == _at_line_rate(design, 400)
    assert any("each 800G NIC moves 400 Gb/s" in note for note in est.notes)
    assert design_gbps_per_gpu(design, gen5) == 8 * 400 / 8


@settings(max_examples=20, deadline=None)
@given(
    model=st.sampled_from(["llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b"]),
    nodes=st.integers(min_value=2, max_value=96),
    nics=st.sampled_from([1, 2, 4, 8]),
    topology=st.sampled_from(["fat_tree", "rail_optimized"]),
)
def test_a_second_plane_never_makes_a_job_slower(
    model: str, nodes: int, nics: int, topology: str
) -> None:
    design = dataclasses.replace(_spectrum_x(nodes, topology), nics_per_node=nics)
    two, one = (
        EstimateCache(preset(model), {s.sku: s for s in c.servers}, EXPECTED).reestimate(
            design, physical_plan(design, c)
        )
        for c in (CATALOG, _one_plane(CATALOG))
    )
    assert two is not None and one is not None
    assert two.training_time_hours <= one.training_time_hours


def test_the_rule_of_thumb_reads_a_twin_plane_nic_as_the_800g_class() -> None:
    """The seed article's rule buys the 400G class per GPU: a cheaper 2 x 400G twin-plane NIC
    moves 800G and buys two networks, so a one-plane 400G NIC comes first."""
    cheap = tuple(
        dataclasses.replace(n, price_cents=100_000) if n.sku == TWO_PLANES else n
        for n in CATALOG.nics
    )
    order = nics_in_rule_order(dataclasses.replace(CATALOG, nics=cheap), "roce")
    assert [n.sku for n in order][:2] == ["CX7-1x400", TWO_PLANES]
