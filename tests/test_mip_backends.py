"""Backend conformance: every installed backend gives the same answer on the same MipModel."""

from __future__ import annotations

import threading
import time

import pytest

from optimizer.errors import InvalidInput, SolverUnavailable
from optimizer.optimize.backends import Limits, SolveStatus, available_backends, get_backend
from optimizer.optimize.mip import MipModel

BACKENDS = available_backends()
# A model of a few variables solves in milliseconds; the limit only guards against a hang.
# 10 s once was not enough: CBC stopped on time with the optimum found but unproven, on a
# loaded 2-core CI box (fresh-clone run of 397b695).
TRIVIAL_LIMIT_S = 60.0


def knapsack(n: int = 6) -> tuple[MipModel, int]:
    """Cover 23 units with packs of 10 ($9.00) and 3 ($2.80): the optimum is 2x10 + 1x3."""
    m = MipModel()
    ten = m.var("ten", 0, n)
    three = m.var("three", 0, n)
    m.add("demand", {ten: 10, three: 3}, lo=23)
    m.minimize({ten: 900, three: 280})
    return m, 2 * 900 + 280


@pytest.mark.parametrize("backend", BACKENDS)
def test_small_integer_program_reaches_known_optimum(backend: str) -> None:
    model, best = knapsack()
    res = get_backend(backend).solve(model, Limits(time_limit_s=TRIVIAL_LIMIT_S))
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == best
    assert not model.violated(res.values)


@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible_model_is_a_status_not_an_exception(backend: str) -> None:
    m = MipModel()
    x = m.var("x", 0, 5)
    m.add("too_much", {x: 1}, lo=6)
    m.minimize({x: 1})
    res = get_backend(backend).solve(m, Limits(time_limit_s=TRIVIAL_LIMIT_S))
    assert res.status is SolveStatus.INFEASIBLE
    assert res.values is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_equality_and_range_constraints_hold(backend: str) -> None:
    m = MipModel()
    a, b, c = (m.var(n, 0, 10) for n in "abc")
    m.add("sum", {a: 1, b: 1, c: 1}, lo=7, hi=7)
    m.add("range", {a: 2, b: -1}, lo=1, hi=3)
    m.minimize({a: 3, b: 2, c: 5})
    res = get_backend(backend).solve(m, Limits(time_limit_s=TRIVIAL_LIMIT_S))
    assert res.status is SolveStatus.OPTIMAL
    assert not m.violated(res.values)
    assert res.objective == 3 * 3 + 2 * 4 + 5 * 0


def test_unknown_backend_names_the_field() -> None:
    with pytest.raises(InvalidInput, match=r"solver.backend"):
        get_backend("gurobi")


def test_overflowing_coefficients_are_refused_before_solving() -> None:
    m = MipModel()
    x = m.var("x", 0, 10**9)
    with pytest.raises(OverflowError):
        m.minimize({x: 10**8})


def hard_model() -> MipModel:
    """A market-split style equality knapsack: easy to state, slow to prove."""
    import random

    rng = random.Random(7)
    m = MipModel()
    xs = [m.binary(f"x{i}") for i in range(60)]
    for r in range(4):
        coefs = {x: rng.randint(1, 99) for x in xs}
        m.add(f"split{r}", coefs, lo=sum(coefs.values()) // 2, hi=sum(coefs.values()) // 2)
    m.minimize({x: rng.randint(1, 50) for x in xs})
    return m


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit_is_honoured_and_reported(backend: str) -> None:
    start = time.perf_counter()
    res = get_backend(backend).solve(hard_model(), Limits(time_limit_s=1.0))
    assert time.perf_counter() - start < 6.0
    assert res.status in (
        SolveStatus.TIME_LIMIT,
        SolveStatus.FEASIBLE,
        SolveStatus.OPTIMAL,
        SolveStatus.INFEASIBLE,
    )
    if res.status is SolveStatus.FEASIBLE:
        assert res.values is not None and not hard_model().violated(res.values)


def test_cpsat_stops_when_the_caller_cancels() -> None:
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    start = time.perf_counter()
    get_backend("cpsat").solve(hard_model(), Limits(time_limit_s=60.0, stop=stop))
    assert time.perf_counter() - start < 3.0


def test_missing_solver_is_unavailable_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    from optimizer.optimize.backends import pulp_backend

    monkeypatch.setattr(pulp_backend.PulpBackend, "is_available", lambda self: False)
    with pytest.raises(SolverUnavailable):
        get_backend("cbc")
