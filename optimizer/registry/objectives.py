"""Objectives: what the optimizer minimises first, what it needs, and how it says so.

An objective is lexicographic over measures of a design (capex, training time, then the
deterministic design order). Its record fixes the stage order of the MIP, the ranking value
the search prunes with, which bound it reports, the constraints it requires, and its wording
in explanations and CLI help. A new objective (TCO) is one record here plus, if it measures
something new, that measure in the MIP (optimizer.optimize.problem).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from optimizer.errors import InvalidInput
from optimizer.registry.base import Registry


class Measure(StrEnum):
    """What a stage of the lexicographic objective minimises."""

    COST = "cost"  # capex in cents
    TIME = "time"  # training seconds (rounded up) under the request's confidence
    TCO = "tco"  # capex + operating cost over the years, in cents (optimizer.cost.tco)


@dataclass(frozen=True)
class ObjectiveKind:
    """One objective.

    Attributes
    ----------
    name, label, proto_value:
        Wire name (``min_cost``), CLI/table spelling (``min-cost``), number in the
        ``procurement.v1.Objective`` enum.
    stages:
        Measures minimised in order; each stage keeps the previous optimum. The first is the
        primary measure: the one pruned on, bounded and reported as the gap.
    goal:
        Rank 1's role in the explanation ("the cheapest design that meets the target").
    help:
        One line for ``--objective`` help.
    needs_one_of:
        Constraints (``Constraints`` proto field names) of which at least one must be set.
    needs:
        What is missing, in the error message ("a budget").
    """

    name: str
    label: str
    proto_value: int
    stages: tuple[Measure, ...]
    goal: str
    help: str
    needs_one_of: tuple[str, ...]
    needs: str

    @property
    def primary(self) -> Measure:
        return self.stages[0]

    def ranking_value(
        self, capex_cents: int, training_seconds: int, tco_cents: int | None = None
    ) -> tuple[int, ...]:
        """The lexicographic value designs are ranked and pruned by (smaller is better);
        ``tco_cents`` is needed only by an objective that measures the lifetime cost."""
        if tco_cents is None and Measure.TCO in self.stages:
            raise ValueError(f"{self.name} ranks by TCO: give tco_cents")
        value = {Measure.COST: capex_cents, Measure.TIME: training_seconds, Measure.TCO: tco_cents}
        return tuple(int(value[m] or 0) for m in self.stages)

    def check_constraints(self, given: set[str]) -> None:
        """Refuse a request that lacks every constraint this objective needs."""
        if self.needs_one_of and not given & set(self.needs_one_of):
            msg = f"{self.name} needs {self.needs}; expected a positive number"
            raise InvalidInput(msg, field=f"constraints.{self.needs_one_of[0]}")


OBJECTIVES: Registry[ObjectiveKind] = Registry("objective", "objective")

MIN_COST = OBJECTIVES.register(
    ObjectiveKind(
        "min_cost",
        "min-cost",
        1,
        (Measure.COST, Measure.TIME),
        goal="cheapest design that meets the target",
        help="cheapest meeting the target",
        needs_one_of=("target_training_hours", "budget_usd"),
        needs="a target (or at least a budget)",
    )
)
MIN_TIME = OBJECTIVES.register(
    ObjectiveKind(
        "min_time",
        "min-time",
        2,
        (Measure.TIME, Measure.COST),
        goal="fastest design within the budget",
        help="fastest within the budget",
        needs_one_of=("budget_usd",),
        needs="a budget",
    )
)

# issue 17 (tco)
MIN_TCO = OBJECTIVES.register(
    ObjectiveKind(
        "min_tco",
        "min-tco",
        3,
        (Measure.TCO, Measure.TIME),
        goal="design with the lowest lifetime cost (capex + energy, support and space) that "
        "meets the target",
        help="lowest lifetime cost (TCO) meeting the target",
        needs_one_of=("target_training_hours", "budget_usd"),
        needs="a target (or at least a budget)",
    )
)


def objective(name: str, field: str = "objective") -> ObjectiveKind:
    """The objective ``name`` (``min-cost``, ``MIN_COST``...), or InvalidInput naming ``field``."""
    return OBJECTIVES.get(name, field)
