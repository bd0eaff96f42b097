"""PuLP backend: CBC (bundled with PuLP 3.x on Python 3.11) or HiGHS (highspy).

PuLP's own status is not trusted alone (coin-or/pulp#649: time-limit stops reported as
Optimal): ``sol_status`` decides between OPTIMAL and FEASIBLE, and every solution is rechecked
against the model before it is returned.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
import time
import warnings
from typing import Any

from optimizer.optimize.backends.base import Backend, Limits, SolveResult, SolveStatus
from optimizer.optimize.mip import MipModel


class PulpBackend(Backend):
    def __init__(self, solver: str) -> None:
        self.name = solver  # "cbc" | "highs"

    def _make_solver(self, limits: Limits, tmp_dir: str) -> Any:
        import pulp

        common = {
            "msg": False,
            "timeLimit": max(0.01, limits.time_limit_s),
            "threads": max(1, limits.threads),
            "gapRel": 0.0,
        }
        if self.name == "cbc":
            solver = _cbc_class()(
                timeMode="elapsed",
                keepFiles=False,
                options=[f"randomSeed {limits.seed + 1}", f"randomCbcSeed {limits.seed + 1}"],
                **common,
            )
            solver.tmpDir = tmp_dir  # per-solve files, removed afterwards (coin-or/pulp#657)
            return solver
        _silence_highs_banner()
        return pulp.HiGHS(**common)

    def is_available(self) -> bool:
        try:
            import pulp
        except ImportError:
            return False
        if self.name == "cbc":
            return bool(_cbc_class()(msg=False).available())
        return "HiGHS" in pulp.listSolvers(onlyAvailable=True)

    def solve(self, model: MipModel, limits: Limits) -> SolveResult:
        import pulp

        prob = pulp.LpProblem("procurement", pulp.LpMinimize)
        xs = [
            prob.add_variable(
                f"v{v.index}",
                lowBound=v.lb,
                upBound=v.ub,
                cat=pulp.LpInteger if v.integer else pulp.LpContinuous,
            )
            for v in model.variables
        ]
        prob += pulp.lpSum(c * xs[v] for v, c in model.objective.items())
        for i, con in enumerate(model.constraints):
            expr = pulp.lpSum(c * xs[v] for v, c in con.terms)
            if con.lo is not None and con.lo == con.hi:
                prob += expr == con.lo, f"c{i}"
                continue
            if con.lo is not None:
                prob += expr >= con.lo, f"c{i}_lo"
            if con.hi is not None:
                prob += expr <= con.hi, f"c{i}_hi"
        tmp_dir = tempfile.mkdtemp(prefix="procure-pulp-")
        start = time.perf_counter()
        try:
            code = prob.solve(self._make_solver(limits, tmp_dir))
        except pulp.PulpSolverError:
            return SolveResult(
                SolveStatus.ERROR, None, None, None, time.perf_counter() - start, self.name
            )
        finally:
            shutil.rmtree(tmp_dir, ignore_errors=True)
        elapsed = time.perf_counter() - start
        sol = getattr(prob, "sol_status", None)
        if code == pulp.LpStatusInfeasible or sol == pulp.LpSolutionInfeasible:
            return SolveResult(SolveStatus.INFEASIBLE, None, None, None, elapsed, self.name)
        if code != pulp.LpStatusOptimal and sol != pulp.LpSolutionIntegerFeasible:
            status = SolveStatus.TIME_LIMIT if elapsed >= limits.time_limit_s else SolveStatus.ERROR
            return SolveResult(status, None, None, None, elapsed, self.name)
        values = [round(x.value() or 0) for x in xs]
        if model.violated(values):
            return SolveResult(SolveStatus.ERROR, None, None, None, elapsed, self.name)
        proven = sol == pulp.LpSolutionOptimal or (sol is None and code == pulp.LpStatusOptimal)
        status = SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE
        objective = model.evaluate(values)
        return SolveResult(
            status, values, objective, float(objective) if proven else None, elapsed, self.name
        )


def _cbc_class() -> Any:
    """CBC through PuLP: the bundled binary on PuLP 3.x, ``COIN_CMD`` with ``pulp[cbc]`` on 4.x."""
    import pulp

    bundled = getattr(pulp, "PULP_CBC_CMD", None)
    if bundled is None:
        return pulp.COIN_CMD
    with warnings.catch_warnings():  # PuLP 3.3 warns that 4.0 drops the bundled binary
        warnings.simplefilter("ignore", DeprecationWarning)
        if bundled(msg=False).available():
            return _quiet(bundled)
    return pulp.COIN_CMD


def _quiet(cls: Any) -> Any:
    """``cls`` constructed with its deprecation warning silenced."""

    def make(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return cls(*args, **kwargs)

    return make


@functools.cache
def _silence_highs_banner() -> None:
    """HiGHS prints a banner on stdout the first time a solver is created in a process, before
    any option can switch output off; it would corrupt `--format json` output, so the first
    creation happens here with stdout pointed at /dev/null."""
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        highspy.Highs()  # type: ignore[no-untyped-call]
    finally:
        os.dup2(saved, 1)
        os.close(devnull)
        os.close(saved)
