"""Issue 13's acceptance: every answer is a design an architect would sign.

On every bundled catalog and the scenarios of tests/realism_scenarios.py: no design of more
than two nodes without switches unless its hardware forwards (two nodes may be cabled back
to back); every NIC bought is cabled; the top-K BOMs are pairwise distinct; one-node answers
include the switchless design (unless a fabric is required); restricting the fabric or the
topology never gives a cheaper optimum; more budget is never slower under a power cap; a top-K
the clock cut short says so.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import pytest
from enumerator import forwards, nics_cabled
from realism_scenarios import (
    CATALOGS,
    SCENARIOS,
    Scenario,
    bom_multiset,
    catalog,
    describe,
    nic_count,
    solved,
    switch_count,
)

from optimizer.catalog.model import Catalog
from optimizer.errors import InvalidInput
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import RankedDesign
from optimizer.optimize.solve import optimize
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.plan import physical_plan
from optimizer.workload.presets import preset

pytestmark = pytest.mark.slow

# bert-large on 4e10 tokens in 30 h: one node of every catalog meets it (ethernet-budget's L40S
# node takes 24.6 h since issue 14 fitted the element-wise passes; it took under a day before);
# the 15 kW cap is issue 13 defect 5's reproduction (INFEASIBLE then although one server fits).
ONE_NODE = tuple(
    Scenario(c, target_hours=30.0, max_power_kw=cap) for c in CATALOGS for cap in (None, 15.0)
)
ALL = tuple(dict.fromkeys(SCENARIOS + ONE_NODE))


def _hardware_forwards(ranked: RankedDesign, cat: Catalog) -> bool:
    d = ranked.design
    nic = next((n for n in cat.nics if n.sku == d.nic_sku), None)
    server = next((s for s in cat.servers if s.sku == d.server_sku), None)
    return forwards(nic) or forwards(server)


def _switchless(ranked: RankedDesign) -> bool:
    return switch_count(ranked.bom) == 0


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_no_design_of_more_than_two_nodes_without_switches_unless_its_hardware_forwards(
    scenario: Scenario,
) -> None:
    cat = catalog(scenario.catalog)
    for ranked in solved(scenario).designs:
        if ranked.design.nodes > 2 and _switchless(ranked):
            assert _hardware_forwards(ranked, cat), (
                f"rank {ranked.rank} relays traffic through NICs that do not forward: "
                f"{describe(ranked)}"
            )


def _cabled_nic_ends(ranked: RankedDesign, cat: Catalog) -> int:
    """NIC ends of the design's endpoint links (check_bom verifies the BOM builds them)."""
    try:
        plan = physical_plan(ranked.design, cat)
    except InvalidInput:  # a design without a NIC (one server alone) has no endpoint link
        return 0
    return nics_cabled(plan)


_ONE_NODE_SPARE = "spare: a one-node cluster has no scale-out fabric"


def _declared_spare_nics(ranked: RankedDesign) -> int:
    """Built-in NICs of a one-node design: listed at $0, spare by necessity (the line says why)."""
    if ranked.design.nodes != 1:
        return 0
    return sum(
        line.quantity
        for line in ranked.bom.lines
        if line.category == "nic"
        and line.extended_price_cents == 0
        and _ONE_NODE_SPARE in line.source
    )


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_every_nic_bought_is_cabled(scenario: Scenario) -> None:
    cat = catalog(scenario.catalog)
    for ranked in solved(scenario).designs:
        bought = nic_count(ranked.bom) - _declared_spare_nics(ranked)
        cabled = _cabled_nic_ends(ranked, cat)
        assert bought == cabled, (
            f"rank {ranked.rank} buys {bought} NICs and cables {cabled}: {describe(ranked)}"
        )


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_top_k_boms_are_pairwise_distinct_multisets(scenario: Scenario) -> None:
    designs = solved(scenario).designs
    for a, b in itertools.combinations(designs, 2):
        assert bom_multiset(a.bom) != bom_multiset(b.bom), (
            f"ranks {a.rank} and {b.rank} order the same parts: {describe(a)} / {describe(b)}"
        )


@pytest.mark.parametrize("scenario", ONE_NODE, ids=lambda s: s.name)
def test_a_one_node_answer_includes_the_switchless_design(scenario: Scenario) -> None:
    result = solved(scenario)
    assert result.designs, f"{result.status}: {result.diagnosis}"
    assert result.designs[0].design.nodes == 1
    alone = [r for r in result.designs if r.design.nodes == 1 and _switchless(r)]
    assert alone, "no switchless one-node design among " + "; ".join(
        describe(r) for r in result.designs
    )


@pytest.mark.parametrize("name", CATALOGS)
def test_require_fabric_gives_every_one_node_design_a_switch(name: str) -> None:
    result = solved(Scenario(name, target_hours=24.0, require_fabric=True))
    assert result.designs, f"{result.status}: {result.diagnosis}"
    # require_fabric concerns one-node designs only: two nodes cabled back to back (no switch)
    # have a fabric, their direct links.
    for ranked in result.designs:
        if ranked.design.nodes == 1:
            assert not _switchless(ranked), f"rank {ranked.rank} has no fabric: {describe(ranked)}"


def _capex(scenario: Scenario) -> int | None:
    designs = solved(scenario).designs
    return designs[0].bom.capex_cents if designs else None


RESTRICTIONS = [
    pytest.param(
        Scenario(c, target_hours=hours), field, value, id=f"{c}/{hours:g}h/{field}={value}"
    )
    for c in CATALOGS
    for hours in (2.0, 1.0)
    for field, values in (("fabrics", FABRICS.names()), ("topologies", TOPOLOGIES.names()))
    for value in values
]


@pytest.mark.parametrize(("free", "field", "value"), RESTRICTIONS)
def test_restricting_the_fabric_or_topology_never_gives_a_cheaper_optimum(
    free: Scenario, field: str, value: str
) -> None:
    if field == "fabrics":
        restricted = replace(free, fabrics=(value,))
    else:
        restricted = replace(free, topologies=(value,))
    narrow = _capex(restricted)
    if narrow is None:
        return
    wide = _capex(free)
    assert wide is not None, f"{restricted.name} finds a design, the free request none"
    assert wide <= narrow, (
        f"free optimum ${wide / 100:,.2f} costs more than the {field}={value} optimum "
        f"${narrow / 100:,.2f}: {describe(solved(free).designs[0])} vs "
        f"{describe(solved(restricted).designs[0])}"
    )


# (catalog, workload, tokens, power cap kW, topologies, budgets in M$, most nodes): issue 13
# defect 6's reproduction first (mpt-7b on InfiniBand at 150 kW, torus only), then grids.
BUDGET_GRIDS = [
    ("infiniband-ndr", "mpt-7b", None, 150.0, ("torus",), (4, 6, 8, 10, 12, 16), 4096),
    ("infiniband-ndr", "mpt-7b", None, 150.0, (), (4, 6, 8, 10, 12, 16), 4096),
    ("infiniband-ndr", "bert-large", 4e10, 50.0, (), (0.5, 1, 1.5, 2, 3, 4), 64),
    ("roce-spectrum", "bert-large", 4e10, 50.0, (), (0.5, 1, 1.5, 2, 3, 4), 64),
    ("ethernet-budget", "bert-large", 4e10, 40.0, (), (0.25, 0.5, 1, 1.5), 64),
]


@pytest.mark.parametrize(
    ("name", "workload", "tokens", "cap_kw", "topologies", "budgets_musd", "max_nodes"),
    BUDGET_GRIDS,
    ids=[f"{g[0]}/{g[1]}/{g[3]:g}kW/{'+'.join(g[4]) or 'any'}" for g in BUDGET_GRIDS],
)
def test_more_budget_is_never_slower_under_a_power_cap(
    name: str,
    workload: str,
    tokens: float | None,
    cap_kw: float,
    topologies: tuple[str, ...],
    budgets_musd: tuple[float, ...],
    max_nodes: int,
) -> None:
    previous: tuple[float, float] | None = None  # (budget M$, seconds)
    for budget in budgets_musd:
        scenario = Scenario(
            name,
            workload=workload,
            tokens=tokens if tokens is not None else 0.0,
            objective=Objective.MIN_TIME,
            budget_usd=round(budget * 1_000_000),
            max_power_kw=cap_kw,
            topologies=topologies,
            max_nodes=max_nodes,
            top_k=1,
        )
        if tokens is None:  # the preset's own token count
            scenario = replace(scenario, tokens=_preset_tokens(workload))
        result = solved(scenario)
        if not result.designs:
            assert previous is None, f"${budget}M finds nothing, ${previous[0]}M found a design"
            continue
        seconds = math.ceil(result.designs[0].time_hours * 3600)
        if previous is not None:
            assert seconds <= previous[1], (
                f"${budget}M under {cap_kw:g} kW takes {seconds / 3600:.2f} h, "
                f"${previous[0]}M took {previous[1] / 3600:.2f} h: "
                f"{describe(result.designs[0])}"
            )
        previous = (budget, seconds)


def _preset_tokens(workload: str) -> float:
    return preset(workload).training_tokens


@pytest.mark.parametrize("time_limit_s", [0.5, 1.0, 2.0])
def test_a_top_k_cut_short_by_the_clock_says_so(time_limit_s: float) -> None:
    """Issue 13 defect 7: fewer designs than asked, while more exist, is never OPTIMAL
    without a warning naming how many of K were proven."""
    spec = OptimizeSpec(
        workload=preset("mpt-30b"),
        constraints=Constraints(target_training_hours=84.47),
        top_k=10,
        time_limit_s=30.0,
    )
    cat = catalog("ethernet-budget")
    assert len(optimize(cat, spec).designs) == 10  # ten distinct designs exist
    result = optimize(cat, replace(spec, time_limit_s=time_limit_s))
    if len(result.designs) < 10:
        named = any("of 10" in w for w in result.warnings)
        assert result.status == "TIME_LIMIT" or named, (
            f"{result.status} with {len(result.designs)} of 10 designs; warnings: "
            f"{list(result.warnings)}"
        )
