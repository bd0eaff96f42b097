"""The request's time limit, cancellation and progress reports."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from optimizer.catalog import load_catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset

PROGRESS_KEYS = {
    "phase",
    "candidates_evaluated",
    "best_capex_usd",
    "bound_usd",
    "designs_found",
    "elapsed_s",
}


def _big_request(limit_s: float) -> tuple[object, OptimizeSpec]:
    """Many structural choices: a 175B model on the widest catalog, top 20."""
    catalog = load_catalog(next(p for p in bundled_catalogs() if p.name == "ethernet-budget"))
    spec = OptimizeSpec(
        workload=preset("gpt3-175b"),
        constraints=Constraints(target_training_hours=2000.0),
        top_k=20,
        time_limit_s=limit_s,
    )
    return catalog, spec


def test_a_short_time_limit_returns_the_best_found_with_a_warning() -> None:
    catalog, spec = _big_request(0.05)  # well under the search, even with warm caches
    start = time.perf_counter()
    result = optimize(catalog, spec)
    assert time.perf_counter() - start < spec.time_limit_s + 5.0
    assert any("time limit ended the search" in w for w in result.warnings)
    if result.designs:  # what was found before the limit, ranked; fewer than asked says so
        assert result.status in ("OPTIMAL", "FEASIBLE", "TIME_LIMIT")
        if len(result.designs) < spec.top_k:
            assert result.status == "TIME_LIMIT"
        else:
            assert (result.status == "FEASIBLE") == (result.gap > 0.0)
    else:  # the limit came before any design: say so, never "infeasible"
        assert result.status == "TIME_LIMIT"
        assert "time limit ended the search" in result.diagnosis


def test_cancelling_stops_the_search() -> None:
    catalog, spec = _big_request(60.0)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    start = time.perf_counter()
    result = optimize(catalog, spec, stop=stop)
    assert time.perf_counter() - start < 10.0
    assert any("time limit ended the search" in w for w in result.warnings)


def test_progress_reports_carry_the_documented_fields() -> None:
    catalog, spec = _big_request(30.0)
    events: list[dict] = []
    optimize(catalog, replace(spec, top_k=2), progress=events.append)
    assert events
    assert all(set(e) >= PROGRESS_KEYS for e in events)
    assert {e["phase"] for e in events} >= {"solve"}
    assert [e["designs_found"] for e in events if e["phase"] == "solve"] == [1, 2]


def test_the_time_limit_stops_a_plan_search_that_would_outlast_it() -> None:
    """The soak fuzzer's request (tests/test_service_fuzz.py, seed 1): BERT-Large widened to
    65,536 layers (825B parameters) in 24 h, with 1 s to answer. One plan search on it visits
    thousands of cluster sizes and took minutes; the clock is asked between its steps, so
    the answer comes at the limit and says the limit ended the search."""
    catalog, _ = _big_request(1.0)
    w = replace(preset("bert-large"), layers=65_536, training_tokens=1e9)
    spec = OptimizeSpec(
        workload=w, constraints=Constraints(target_training_hours=24.0), time_limit_s=1.0
    )
    start = time.perf_counter()
    result = optimize(catalog, spec)
    assert time.perf_counter() - start < spec.time_limit_s + 5.0  # 60 s and more before
    assert result.status == "TIME_LIMIT"
    assert "time limit ended the search" in result.diagnosis
