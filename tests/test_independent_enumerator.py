"""Rank 1 of the optimizer equals the independent enumerator's optimum (issue 13).

The enumerator (benchmarks/enumerator.py) prices every buildable design of each scenario one by
one, without the optimizer's search, bounds, dominance or MIP. Several designs may tie on
the objective, so the objective values are compared (capex to the cent, then whole seconds
for min-cost; seconds, then capex for min-time; TCO to the cent, then seconds for min-tco),
and a failure names both designs.
"""

from __future__ import annotations

import math

import pytest
from test_min_time_tier_mix import CATALOG as TIER_MIX_CATALOG
from test_min_time_tier_mix import MANAGED, UNMANAGED, WORKLOAD, _design

from benchmarks.enumerator import Enumerator
from benchmarks.realism_scenarios import (
    FACILITY_SCENARIOS,
    REPRESENTATIVE,
    SCENARIOS,
    Scenario,
    catalog,
    describe,
    enumerated,
    solved,
)
from optimizer.optimize.backends import Limits, get_backend
from optimizer.optimize.formulation import Bounds
from optimizer.optimize.problem import RowBuilder
from optimizer.optimize.request import Objective, OptimizeSpec
from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan
from optimizer.workload.presets import preset

pytestmark = pytest.mark.slow


def test_there_are_at_least_thirty_scenarios_over_every_bundled_catalog() -> None:
    assert len(SCENARIOS) >= 30
    assert {s.catalog for s in SCENARIOS} == {"ethernet-budget", "infiniband-ndr", "roce-spectrum"}
    assert {s.objective for s in SCENARIOS} == set(Objective)


def test_three_scenarios_hold_designs_to_facility_limits() -> None:
    assert len(FACILITY_SCENARIOS) == 3 and set(FACILITY_SCENARIOS) <= set(SCENARIOS)
    for s in FACILITY_SCENARIOS:
        assert s.max_floor_positions or s.rack_kw or s.cooling, s.name


def _mip_cents(design: Design, spec: OptimizeSpec, catalog_: object) -> int | None:
    """The optimizer's exact price of one design (its MIP over the link mix)."""
    builder = RowBuilder(catalog_, spec)  # type: ignore[arg-type]
    plan = physical_plan(design, catalog_)  # type: ignore[arg-type]
    return builder.exact_cost(plan, get_backend("cpsat"), Limits(time_limit_s=30.0), Bounds())


def _enumerated_cents(design: Design, spec: OptimizeSpec, catalog_: object) -> int | None:
    e = Enumerator(catalog_, spec, max_nodes=design.nodes)  # type: ignore[arg-type]
    pre = e._pre(design)
    assert pre is not None, design
    found = e._exact(pre)
    return None if found is None else found.capex_cents


def test_the_enumerator_prices_a_per_tier_switch_mix_to_the_cent_of_the_mip() -> None:
    """tests/test_min_time_tier_mix.py's 64-node mix: its one- and two-option link splits
    cost $4,840 more than the MIP's exact mix."""
    spec = OptimizeSpec(workload=WORKLOAD, objective=Objective.MIN_TIME)
    design = _design((MANAGED, UNMANAGED))
    want = _mip_cents(design, spec, TIER_MIX_CATALOG)
    assert want is not None
    assert _enumerated_cents(design, spec, TIER_MIX_CATALOG) == want


def test_host_to_switch_links_are_priced_with_host_side_parts() -> None:
    """64 DGX H100 rail-optimized: the 30 m host links were priced as switch-to-switch
    optics, which check_bom refuses, so the enumerator dropped a buildable design."""
    ndr = catalog("infiniband-ndr")
    spec = OptimizeSpec(workload=preset("bert-large", training_tokens=4e10))
    layout = Enumerator(ndr, spec, max_nodes=1).layout
    design = Design(
        "DGX-H100",
        64,
        "MCX75310AAS-NEAT",
        8,
        "infiniband",
        "rail_optimized",
        1.0,
        ("MQM9700-NS2F",),
        layout,
    )
    want = _mip_cents(design, spec, ndr)
    assert want is not None
    assert _enumerated_cents(design, spec, ndr) == want


def _restrictions(s: Scenario) -> set[str]:
    """The kinds of constraint a scenario states (what the default subset must cover)."""
    stated = {
        "target": s.target_hours is not None,
        "budget": s.budget_usd is not None,
        "power": s.max_power_kw is not None,
        "fabric": bool(s.fabrics),
        "nic bandwidth": s.min_nic_gbps_per_gpu is not None,
        "cost model": s.cost_model != Scenario(s.catalog).cost_model,
        "floor": s.max_floor_positions is not None,
        "rack power": s.rack_kw is not None,
        "cooling": s.cooling is not None,
    }
    return {kind for kind, on in stated.items() if on} | {f"topology {t}" for t in s.topologies}


def test_the_default_subset_covers_every_catalog_objective_and_constraint_kind() -> None:
    """CI runs REPRESENTATIVE; the rest run under ``pytest -m soak``. Nothing may be covered
    only by the soak runs."""
    for name, key in (
        ("catalog", lambda s: {s.catalog}),
        ("objective", lambda s: {s.objective}),
        ("workload", lambda s: {s.workload}),
        ("constraint kind", _restrictions),
    ):
        everywhere = set().union(*(key(s) for s in SCENARIOS))
        by_default = set().union(*(key(s) for s in REPRESENTATIVE))
        assert by_default == everywhere, f"{name} only under soak: {everywhere - by_default}"
    assert set(REPRESENTATIVE) <= set(SCENARIOS)


@pytest.mark.parametrize(
    "scenario",
    [pytest.param(s, marks=() if s in REPRESENTATIVE else pytest.mark.soak) for s in SCENARIOS],
    ids=lambda s: s.name,
)
def test_rank_one_is_the_enumerators_optimum(scenario: Scenario) -> None:
    want = enumerated(scenario)
    got = solved(scenario)
    if want is None:
        assert not got.designs, (
            f"the enumerator finds no design; optimizer: {describe(got.designs[0])}"
        )
        return
    assert got.designs, f"optimizer {got.status} ({got.diagnosis}); enumerator: {want.describe()}"
    top = got.designs[0]
    seconds = math.ceil(top.time_hours * 3600)
    got_value = (top.bom.capex_cents, seconds)
    want_value = (want.capex_cents, want.seconds)
    if scenario.objective is Objective.MIN_TCO:  # issue 17: lifetime cost, then seconds
        got_value, want_value = (top.tco_cents or 0, seconds), (want.tco_cents, want.seconds)
    if scenario.objective is Objective.MIN_TIME:
        got_value, want_value = got_value[::-1], want_value[::-1]
    assert got_value == want_value, (
        f"optimizer rank 1: {describe(top)}; enumerator optimum: {want.describe()}"
    )
