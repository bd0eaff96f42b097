"""OR-Tools CP-SAT backend (default): exact integer arithmetic, deterministic with one worker."""

from __future__ import annotations

import threading
import time

from optimizer.optimize.backends.base import Backend, Limits, SolveResult, SolveStatus
from optimizer.optimize.mip import MipModel

LINEARIZATION_LEVEL = 2
"""What CP-SAT's LP relaxation holds. Presolve rewrites the rows that tie a quantity to its
pick or volume tier (q <= M x pick) as constraints enforced by that 0/1 variable (pick =>
q <= M); the default level 1 leaves enforced constraints out of the LP, level 2 puts them in
(OR-Tools linear_relaxation.cc: a reified linear constraint only at linearization_level >= 2).
Without them the LP bound is weak and an optimum is proved by branching: the gen-2026 main
job's scale-up re-solve (356 variables, OR-Tools 9.15) took 10.4 s and 305,082 branches at
level 1 (0.01 s with presolve off), 0.01 s and 126 at level 2, the same optimum;
benchmarks/cpsat_linearization.py times both levels side by side."""


class CpSatBackend(Backend):
    name = "cpsat"

    def is_available(self) -> bool:
        try:
            from ortools.sat.python import cp_model  # noqa: F401
        except ImportError:
            return False
        return True

    def solve(self, model: MipModel, limits: Limits) -> SolveResult:
        from ortools.sat.python import cp_model

        status_map = {
            cp_model.OPTIMAL: SolveStatus.OPTIMAL,
            cp_model.FEASIBLE: SolveStatus.FEASIBLE,
            cp_model.INFEASIBLE: SolveStatus.INFEASIBLE,
            cp_model.MODEL_INVALID: SolveStatus.MODEL_INVALID,
            cp_model.UNKNOWN: SolveStatus.TIME_LIMIT,
        }
        cp = cp_model.CpModel()
        xs = [cp.new_int_var(v.lb, v.ub, v.name) for v in model.variables]
        for con in model.constraints:
            expr = sum(c * xs[v] for v, c in con.terms)
            lo = con.lo if con.lo is not None else cp_model.INT_MIN
            hi = con.hi if con.hi is not None else cp_model.INT_MAX
            cp.add_linear_constraint(expr, lo, hi).with_name(con.name)
        cp.minimize(sum(c * xs[v] for v, c in model.objective.items()))
        if cp.validate():
            return SolveResult(SolveStatus.MODEL_INVALID, None, None, None, 0.0, self.name)

        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = max(0.01, limits.time_limit_s)
        solver.parameters.num_workers = max(1, limits.threads)
        solver.parameters.random_seed = limits.seed
        # Signals belong to the host process (service/CLI), not to the solver.
        solver.parameters.catch_sigint_signal = False
        # Work-around for or-tools#5293 (a wrong OPTIMAL certificate from one presolve family
        # in 9.15 on all-linear models); every answer is also rechecked independently.
        solver.parameters.presolve_inclusion_work_limit = 0
        solver.parameters.linearization_level = LINEARIZATION_LEVEL
        watcher = None if limits.stop is None else _StopWatcher(limits.stop, solver)
        start = time.perf_counter()
        try:
            code = solver.solve(cp)
        finally:
            if watcher is not None:
                watcher.close()
        elapsed = time.perf_counter() - start
        status = status_map.get(code, SolveStatus.ERROR)
        if status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE):
            values = [int(solver.value(x)) for x in xs]
            return SolveResult(
                status,
                values,
                model.evaluate(values),
                solver.best_objective_bound,
                elapsed,
                self.name,
            )
        return SolveResult(status, None, None, None, elapsed, self.name)


class _StopWatcher:
    """Relays a cancellation event to ``stop_search`` (repeated: a stop before the search
    starts is ignored, or-tools#3621)."""

    def __init__(self, stop: threading.Event, solver: object) -> None:
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(stop, solver), daemon=True)
        self._thread.start()

    def _run(self, stop: threading.Event, solver: object) -> None:
        while not self._done.is_set():
            if stop.wait(0.05):
                while not self._done.wait(0.05):
                    solver.stop_search()  # type: ignore[attr-defined]
                return

    def close(self) -> None:
        """Stop watching; the thread ends by itself within one poll (not joined: no wait)."""
        self._done.set()
