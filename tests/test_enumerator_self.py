"""The independent enumerator checks itself: its shortcuts are exact and its optima sound."""

from __future__ import annotations

import pytest
from enumerator import Enumerator, objective, single_node_hours
from realism_scenarios import CATALOGS, Scenario, catalog

from optimizer.optimize.request import Confidence, Objective
from optimizer.registry.fabrics import FABRICS
from optimizer.topology.check import check_bom
from optimizer.topology.plan import physical_plan

# 4.75 h: the fastest design of at most four nodes takes 3.0 h on the InfiniBand and RoCE
# catalogs and 4.53 h on ethernet-budget (issue-14 model), so every catalog has an optimum.
SMALL = [
    Scenario(c, target_hours=hours, max_nodes=4, top_k=1) for c in CATALOGS for hours in (6.0, 4.75)
] + [
    Scenario(c, objective=Objective.MIN_TIME, budget_usd=1_200_000, max_nodes=4, top_k=1)
    for c in CATALOGS
]


@pytest.mark.parametrize("name", CATALOGS)
def test_one_node_time_does_not_depend_on_the_fabric(name: str) -> None:
    """The switchless one-node design is timed on one profile: any fabric times it the same."""
    cat = catalog(name)
    servers = {s.sku: s for s in cat.servers}
    timed = 0
    for fabric in FABRICS.names():
        spec = Scenario(name, fabrics=(fabric,), max_nodes=1).spec()
        enum = Enumerator(cat, spec, max_nodes=1)
        for _cents, base, fitting in enum.bases():
            for design in enum.expand(base, fitting):
                pre = enum._pre(design)
                if pre is None:
                    continue
                server = servers[design.server_sku]
                alone = single_node_hours(spec.workload, server, Confidence.EXPECTED)
                assert pre.hours == pytest.approx(alone, rel=1e-12), design
                timed += 1
    assert timed


@pytest.mark.slow
@pytest.mark.parametrize(
    "scenario",
    # Every design priced exactly: three by default (each catalog, both objectives), the other
    # six under ``pytest -m soak`` (CI's time budget).
    [
        pytest.param(s, marks=() if i in (0, 5, 7) else pytest.mark.soak)
        for i, s in enumerate(SMALL)
    ],
    ids=lambda s: s.name,
)
def test_the_optimum_is_the_best_of_every_design_priced_without_the_bound(
    scenario: Scenario,
) -> None:
    """The lower-bound cut-off in ``Enumerator.optimum`` loses nothing: pricing every design
    exactly gives the same objective value."""
    enum = Enumerator(catalog(scenario.catalog), scenario.spec(), max_nodes=scenario.max_nodes)
    best = enum.optimum()
    everything = [*enum.standalone()]
    for _, base, fitting in enum.bases():
        for design in enum.expand(base, fitting):
            pre = enum._pre(design)
            found = None if pre is None else enum._exact(pre)
            if found is not None:
                everything.append(found)
    if best is None:
        assert not everything
        return
    assert objective(best, enum.spec) == min(objective(f, enum.spec) for f in everything)


@pytest.mark.parametrize("scenario", SMALL, ids=lambda s: s.name)
def test_the_optimum_is_a_verified_bom_within_every_limit(scenario: Scenario) -> None:
    cat = catalog(scenario.catalog)
    spec = scenario.spec()
    best = Enumerator(cat, spec, max_nodes=scenario.max_nodes).optimum()
    assert best is not None
    c = spec.constraints
    if best.design is not None:
        assert best.bom is not None
        assert check_bom(best.design, best.bom, cat) == []
        assert best.bom.capex_cents == best.capex_cents
        plan = physical_plan(best.design, cat)
        built_in = plan.builtin_nics.quantity if plan.builtin_nics is not None else 0
        assert plan.nics.quantity + built_in == sum(
            line.quantity for line in best.bom.lines if line.category == "nic"
        )
    if c.budget_cents is not None:
        assert best.capex_cents <= c.budget_cents
    if c.target_training_hours is not None:
        assert best.time_hours <= c.target_training_hours
    assert best.nodes <= scenario.max_nodes
