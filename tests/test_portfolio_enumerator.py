"""Rank 1 of a portfolio request equals the independent enumerator's optimum (issue 17).

The enumerator (tests/enumerator.py) times each design of a portfolio from the definition in
docs/optimizer.md ("Portfolio of workloads"), workload by workload with the public estimator,
and prices every design one by one; the objective values are compared as in
tests/test_independent_enumerator.py (capex to the cent, then whole seconds for min-cost;
seconds, then capex for min-time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pytest
from enumerator import enumerate_optimum
from realism_scenarios import Scenario, catalog, describe

from optimizer.optimize.portfolio import YEAR_HOURS
from optimizer.optimize.request import Objective, OptimizeSpec, WorkloadTarget
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Portfolio:
    catalog: str
    # (preset, training tokens, target hours or None, runs a year or None)
    workloads: tuple[tuple[str, float, float | None, float | None], ...]
    objective: Objective = Objective.MIN_COST
    budget_usd: int | None = None

    @property
    def name(self) -> str:
        parts = [f"{n}:{h or '-'}@{r or '-'}/yr" for n, _, h, r in self.workloads]
        return "/".join([self.catalog, self.objective.value, *parts])

    def spec(self) -> OptimizeSpec:
        targets = tuple(
            WorkloadTarget(preset(n, training_tokens=t), h, r) for n, t, h, r in self.workloads
        )
        first = targets[0].target_training_hours
        base = Scenario(
            self.catalog,
            workload=self.workloads[0][0],
            tokens=self.workloads[0][1],
            objective=self.objective,
            target_hours=None
            if self.objective is Objective.MIN_TIME
            else (first if first is not None else YEAR_HOURS),
            budget_usd=self.budget_usd,
        ).spec()
        return replace(base, portfolio=targets)


PORTFOLIOS = (
    Portfolio("infiniband-ndr", (("bert-large", 4e10, 2.0, None), ("mpt-1b", 2e10, 4.0, None))),
    Portfolio("roce-spectrum", (("mpt-1b", 2e10, 6.0, None), ("bert-large", 4e10, 1.0, None))),
    Portfolio("ethernet-budget", (("bert-large", 4e10, 6.0, None), ("mpt-1b", 2e10, None, 1500.0))),
    Portfolio(
        "infiniband-ndr", (("bert-large", 4e10, None, 2000.0), ("mpt-1b", 2e10, None, 1000.0))
    ),
    Portfolio(
        "roce-spectrum",
        (("bert-large", 4e10, 2.0, None), ("mpt-1b", 2e10, 4.0, None)),
        Objective.MIN_TIME,
        1_500_000,
    ),
)


@pytest.mark.parametrize("portfolio", PORTFOLIOS, ids=lambda p: p.name)
def test_rank_one_of_a_portfolio_is_the_enumerators_optimum(portfolio: Portfolio) -> None:
    spec = portfolio.spec()
    want = enumerate_optimum(catalog(portfolio.catalog), spec, max_nodes=16)
    got = optimize(catalog(portfolio.catalog), spec)
    if want is None:
        assert not got.designs, f"the enumerator finds none; optimizer: {describe(got.designs[0])}"
        return
    assert got.designs, f"optimizer {got.status} ({got.diagnosis}); enumerator: {want.describe()}"
    top = got.designs[0]
    got_value = (top.bom.capex_cents, math.ceil(top.time_hours * 3600))
    want_value = (want.capex_cents, want.seconds)
    if portfolio.objective is Objective.MIN_TIME:
        got_value, want_value = got_value[::-1], want_value[::-1]
    assert got_value == want_value, (
        f"optimizer rank 1: {describe(top)}; enumerator optimum: {want.describe()}"
    )
