"""A solver-neutral description of a mixed-integer linear program with integer coefficients.

The formulation is written once against this small model; each backend translates it
(CP-SAT requires integer coefficients, so every coefficient here is an ``int``: cents,
watts, counts, or time in integer ticks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# CP-SAT works in int64 and refuses models whose sums could overflow it; CBC/HiGHS work in
# doubles, exact for integers below 2**53. Every linear expression's worst-case magnitude is
# kept below this bound and checked when the model is built.
MAX_ABS_SUM = 2**52


@dataclass(frozen=True)
class Var:
    index: int
    name: str
    lb: int
    ub: int
    integer: bool = True


@dataclass(frozen=True)
class Constraint:
    name: str
    terms: tuple[tuple[int, int], ...]  # (var index, coefficient)
    lo: int | None
    hi: int | None


@dataclass
class MipModel:
    """Variables, linear constraints and a linear objective to minimise."""

    variables: list[Var] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    objective: dict[int, int] = field(default_factory=dict)

    def var(self, name: str, lb: int, ub: int, *, integer: bool = True) -> int:
        if lb > ub:
            msg = f"variable {name}: lower bound {lb} above upper bound {ub}"
            raise ValueError(msg)
        index = len(self.variables)
        self.variables.append(Var(index, name, lb, ub, integer))
        return index

    def binary(self, name: str) -> int:
        return self.var(name, 0, 1)

    def add(
        self, name: str, terms: dict[int, int], *, lo: int | None = None, hi: int | None = None
    ) -> None:
        """Add ``lo <= sum(coef * var) <= hi`` after checking it cannot overflow a backend."""
        clean = tuple(sorted((v, c) for v, c in terms.items() if c != 0))
        self._check_magnitude(name, clean)
        self.constraints.append(Constraint(name, clean, lo, hi))

    def minimize(self, terms: dict[int, int]) -> None:
        clean = {v: c for v, c in terms.items() if c != 0}
        self._check_magnitude("objective", tuple(clean.items()))
        self.objective = clean

    def _check_magnitude(self, name: str, terms: tuple[tuple[int, int], ...]) -> None:
        worst = sum(
            abs(c) * max(abs(self.variables[v].lb), abs(self.variables[v].ub)) for v, c in terms
        )
        if worst >= MAX_ABS_SUM:
            msg = f"{name}: coefficients x bounds reach {worst:.3g}, beyond exact solver range"
            raise OverflowError(msg)

    def evaluate(self, values: list[int]) -> int:
        return sum(c * values[v] for v, c in self.objective.items())

    def violated(self, values: list[int]) -> list[str]:
        """Names of constraints and bounds that ``values`` breaks (the independent recheck)."""
        bad = [v.name for v in self.variables if not v.lb <= values[v.index] <= v.ub]
        for con in self.constraints:
            total = sum(c * values[v] for v, c in con.terms)
            if (con.lo is not None and total < con.lo) or (con.hi is not None and total > con.hi):
                bad.append(con.name)
        return bad
