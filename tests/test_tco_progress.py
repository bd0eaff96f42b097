"""Min-tco reports its own bound and progress (issue 17, fixB): ``bound_usd`` is a lower bound
on the TCO (not empty), and progress events carry ``best_tco_usd`` beside a real
``best_capex_usd`` (not 0) during a min-tco search."""

from __future__ import annotations

import functools

import pytest
from catalog_files import SMALL

from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.optimize.convert import response_from_result
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset


@functools.cache
def small() -> Catalog:
    return load_catalog(SMALL)


def _spec(objective: Objective) -> OptimizeSpec:
    return OptimizeSpec(
        workload=preset("bert-large", training_tokens=2e10),
        constraints=Constraints(target_training_hours=8.0),
        objective=objective,
        top_k=2,
        time_limit_s=20.0,
    )


def _run(objective: Objective) -> tuple[list[dict[str, object]], OptimizeResult]:
    events: list[dict[str, object]] = []
    result = optimize(small(), _spec(objective), progress=events.append)
    return events, result


def test_min_tco_bound_usd_is_a_lower_bound_on_rank_ones_tco() -> None:
    _, result = _run(Objective.MIN_TCO)
    resp = response_from_result(result)
    assert resp.designs, resp.diagnosis
    top = resp.designs[0]
    assert 0 < resp.bound_usd <= top.tco_usd + 0.01
    assert resp.bound_usd >= top.capex_usd  # a TCO bound, not a capex one


def test_min_tco_progress_reports_best_tco_and_a_real_capex() -> None:
    events, result = _run(Objective.MIN_TCO)
    with_best = [e for e in events if e.get("best_tco_usd")]
    assert with_best, events
    for e in events:
        if e["phase"] in ("search", "solve") and e.get("best_tco_usd"):
            capex, tco = e["best_capex_usd"], e["best_tco_usd"]
            assert isinstance(capex, float) and isinstance(tco, float)
            assert 0 < capex < tco
    solve = [e for e in events if e["phase"] == "solve"]
    top = result.designs[0]
    assert top.tco is not None
    assert solve[0]["best_tco_usd"] == pytest.approx(top.tco.tco_cents / 100)
    assert solve[0]["best_capex_usd"] == pytest.approx(top.bom.capex_cents / 100)


def test_min_cost_progress_keeps_its_keys() -> None:
    events, _ = _run(Objective.MIN_COST)
    solve = [e for e in events if e["phase"] == "solve"]
    assert solve and {"best_capex_usd", "bound_usd", "designs_found"} <= set(solve[0])
