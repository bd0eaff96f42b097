"""Min-time's cost stage is settled row by row (optimizer.optimize.problem._settle_by_rows).

After the time stage, the whole model's cost stage (one pick among the rows tied on time,
each with its link mix, volume tiers and whole twin-port modules) took CP-SAT up to 35 s to
prove on the medium service request; each row's own purchase is a small MIP. These tests
pin the two things that matter: the answers are those of the whole-model stages, and the
whole model is never asked to minimise cost with the row left free.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog
from optimizer.optimize import problem
from optimizer.optimize.backends.base import Limits, SolveResult
from optimizer.optimize.backends.cpsat import CpSatBackend
from optimizer.optimize.mip import MipModel
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"

SCENARIOS = {
    "roce-70b-300M": (
        "roce-spectrum",
        OptimizeSpec(
            workload=preset("llama3-70b"),
            constraints=Constraints(budget_cents=300_000_000_00),
            objective=Objective.MIN_TIME,
            # Ranks 4 and 5 tie on time (760 h) at different capex; past rank 4 the whole model
            # no longer proves its ranking within the limit (rank 5 took 120 s, top 8 timed
            # out), while the rows settle it in seconds.
            top_k=4,
            time_limit_s=120.0,
        ),
    ),
    "ib-7b-power-cap": (
        "infiniband-ndr",
        OptimizeSpec(
            workload=preset("mpt-7b"),
            constraints=Constraints(budget_cents=8_000_000_00, max_power_kw=150.0),
            objective=Objective.MIN_TIME,
            top_k=5,
            time_limit_s=120.0,
        ),
    ),
    "ethernet-8b": (
        "ethernet-budget",
        OptimizeSpec(
            workload=preset("llama3-8b"),
            constraints=Constraints(budget_cents=20_000_000_00),
            objective=Objective.MIN_TIME,
            top_k=5,
            time_limit_s=120.0,
        ),
    ),
}


def _answer(result: OptimizeResult) -> list[tuple[object, ...]]:
    return [
        (
            d.design,
            d.time_hours,
            d.bom.capex_cents,
            sorted((ln.sku, ln.quantity) for ln in d.bom.lines),
        )
        for d in result.designs
    ]


@pytest.fixture
def whole_model_stages(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The ranking as it was: every stage on the whole model."""

    def never(*_: object, **__: object) -> tuple[None, float]:
        return None, 0.0

    monkeypatch.setattr(problem, "_settle_by_rows", never)
    yield


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_rows_settle_the_same_ranking_as_the_whole_model(
    name: str, request: pytest.FixtureRequest
) -> None:
    catalog_name, spec = SCENARIOS[name]
    catalog = load_catalog(CATALOGS / catalog_name)
    fast = optimize(catalog, spec, explain=False)
    request.getfixturevalue("whole_model_stages")
    slow = optimize(catalog, spec, explain=False)
    assert fast.status == slow.status == "OPTIMAL"
    assert _answer(fast) == _answer(slow)


def test_the_whole_model_never_minimises_cost_with_the_row_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    free_cost_stages: list[int] = []
    solve = CpSatBackend.solve

    def watched(self: CpSatBackend, model: MipModel, limits: Limits) -> SolveResult:
        whole = sum(v.name.startswith("pick[") for v in model.variables) > 1
        settled = any(c.name == "settled_row" for c in model.constraints)
        costs = any(
            v.name.startswith("qty[") or v.name.startswith("links[") for v in model.variables
        )
        if whole and not settled and costs and set(model.objective) - _pick_vars(model):
            free_cost_stages.append(len(model.variables))
        return solve(self, model, limits)

    monkeypatch.setattr(CpSatBackend, "solve", watched)
    catalog_name, spec = SCENARIOS["roce-70b-300M"]
    result = optimize(load_catalog(CATALOGS / catalog_name), replace(spec, top_k=3), explain=False)
    assert len(result.designs) == 3
    assert free_cost_stages == []


def _pick_vars(model: MipModel) -> set[int]:
    return {v.index for v in model.variables if v.name.startswith("pick[")}
