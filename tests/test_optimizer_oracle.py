"""The MIP's optimum equals brute force's on random small catalogs, for every backend.

Brute force (optimizer.optimize.exhaustive) enumerates every design up to four nodes and every
way to buy its links; it shares the physics with the optimizer but none of its search, bounds
or solver.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from optimizer_fixtures import random_catalogs, small_workload, spec_for

from optimizer.optimize.backends import available_backends
from optimizer.optimize.exhaustive import exhaustive
from optimizer.optimize.request import Objective
from optimizer.optimize.solve import optimize

MAX_NODES = 4


def _summary(designs: list) -> list[tuple]:
    return [(d.design, d.bom.capex_cents) for d in designs]


def _brute_summary(designs: list) -> list[tuple]:
    return [(b.design, b.capex_cents) for b in designs]


@pytest.mark.parametrize("backend", available_backends())
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    catalog=random_catalogs(),
    target=st.sampled_from([3.0, 6.0, 12.0, 40.0]),
    top_k=st.integers(1, 3),
)
def test_min_cost_equals_brute_force(backend: str, catalog, target: float, top_k: int) -> None:
    spec = spec_for(
        target_hours=target,
        top_k=top_k,
        backend=backend,
        max_nodes=MAX_NODES,
        workload=small_workload(),
    )
    got = optimize(catalog, spec, explain=False)  # the optimum against brute force
    want = exhaustive(catalog, spec, max_nodes=MAX_NODES)
    assert _summary(got.designs) == _brute_summary(want)
    assert (got.status == "INFEASIBLE") == (not want)


@pytest.mark.slow
@pytest.mark.parametrize("backend", available_backends())
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    catalog=random_catalogs(), budget_usd=st.integers(150_000, 2_000_000), top_k=st.integers(1, 3)
)
def test_min_time_equals_brute_force(backend: str, catalog, budget_usd: int, top_k: int) -> None:
    spec = spec_for(
        budget_usd=budget_usd,
        objective=Objective.MIN_TIME,
        top_k=top_k,
        backend=backend,
        max_nodes=MAX_NODES,
    )
    got = optimize(catalog, spec, explain=False)  # the optimum against brute force
    want = exhaustive(catalog, spec, max_nodes=MAX_NODES)
    assert _summary(got.designs) == _brute_summary(want)
