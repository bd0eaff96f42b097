"""What the optimizer returns: ranked, verified designs with their explanation."""

from __future__ import annotations

from dataclasses import dataclass, field

from optimizer.performance.estimator import Estimate
from optimizer.topology.bom import BillOfMaterials
from optimizer.topology.design import Design


@dataclass(frozen=True)
class CostSplit:
    servers_cents: int
    nics_cents: int
    switches_cents: int
    cables_cents: int
    optics_cents: int  # transceivers and fiber

    @property
    def total_cents(self) -> int:
        return (
            self.servers_cents
            + self.nics_cents
            + self.switches_cents
            + self.cables_cents
            + self.optics_cents
        )

    @property
    def network_share(self) -> float:
        return 1.0 - self.servers_cents / self.total_cents if self.total_cents else 0.0


@dataclass(frozen=True)
class RankedDesign:
    rank: int
    design: Design
    bom: BillOfMaterials
    estimate: Estimate
    time_hours: float  # under the request's confidence level
    cost: CostSplit
    binding: tuple[str, ...]
    explanation: str
    budget_slack_cents: int | None
    time_slack_hours: float | None
    gpus: int

    @property
    def network_time_share(self) -> float:
        """Exposed communication over step time (0..1): the part of each step the GPUs wait
        on collectives that overlap cannot hide, so a starved network shows beside its share
        of capex. Mostly the scale-out network on multi-node designs (tensor parallelism stays
        on NVLink; docs/performance-model.md)."""
        b = self.estimate.breakdown
        return b.exposed_communication_s / b.step_time_s if b.step_time_s > 0 else 0.0


@dataclass(frozen=True)
class ParetoEntry:
    capex_cents: int
    training_time_hours: float
    gpus: int
    design: Design


@dataclass(frozen=True)
class OptimizeResult:
    status: str
    designs: tuple[RankedDesign, ...]
    pareto: tuple[ParetoEntry, ...]
    diagnosis: str
    solve_time_s: float
    gap: float
    backend: str
    candidates_evaluated: int
    bound_cents: int | None = None
    sensitivity: str = ""
    # The seed article's rule-of-thumb design for the same target, and rank 1's saving on it.
    baseline: str = ""
    warnings: tuple[str, ...] = field(default_factory=tuple)
