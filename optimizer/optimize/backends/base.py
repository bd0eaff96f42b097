"""The backend contract: translate a MipModel, solve within limits, map the native status."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import StrEnum

from optimizer.optimize.mip import MipModel


class SolveStatus(StrEnum):
    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"  # a solution, optimality not proven
    INFEASIBLE = "INFEASIBLE"
    TIME_LIMIT = "TIME_LIMIT"  # stopped by the limit without any solution
    MODEL_INVALID = "MODEL_INVALID"
    ERROR = "ERROR"


@dataclass(frozen=True)
class Limits:
    time_limit_s: float = 10.0
    seed: int = 0
    threads: int = 1  # one thread: deterministic, and P parallel jobs never oversubscribe
    stop: threading.Event | None = field(default=None, compare=False)  # set to cancel


@dataclass(frozen=True)
class SolveResult:
    status: SolveStatus
    values: list[int] | None
    objective: int | None
    bound: float | None
    solve_time_s: float
    backend: str

    @property
    def has_solution(self) -> bool:
        return self.values is not None

    @property
    def gap(self) -> float:
        """Relative gap between the solution and the proven bound (0 when optimal)."""
        if self.status is SolveStatus.OPTIMAL or self.objective is None or self.bound is None:
            return 0.0
        return abs(self.objective - self.bound) / max(1.0, abs(self.objective))


class Backend(ABC):
    name: str

    @abstractmethod
    def is_available(self) -> bool:
        """Whether the solver can run here (checked without solving)."""

    @abstractmethod
    def solve(self, model: MipModel, limits: Limits) -> SolveResult:
        """Solve ``model``; never raise for infeasibility, only report it."""
