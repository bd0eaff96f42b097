"""Rank 1 of the optimizer equals the independent enumerator's optimum (issue 13).

The enumerator (tests/enumerator.py) prices every buildable design of each scenario one by
one, without the optimizer's search, bounds, dominance or MIP. Several designs may tie on
the objective, so the objective values are compared (capex to the cent, then whole seconds
for min-cost; seconds, then capex for min-time; TCO to the cent, then seconds for min-tco),
and a failure names both designs.
"""

from __future__ import annotations

import math

import pytest
from realism_scenarios import SCENARIOS, Scenario, describe, enumerated, solved

from optimizer.optimize.request import Objective

pytestmark = pytest.mark.slow


def test_there_are_at_least_thirty_scenarios_over_every_bundled_catalog() -> None:
    assert len(SCENARIOS) >= 30
    assert {s.catalog for s in SCENARIOS} == {"ethernet-budget", "infiniband-ndr", "roce-spectrum"}
    assert {s.objective for s in SCENARIOS} == set(Objective)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
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
