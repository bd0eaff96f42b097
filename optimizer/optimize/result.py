"""What the optimizer returns: ranked, verified designs with their explanation."""

from __future__ import annotations

from dataclasses import dataclass, field

from optimizer.cost.rent import BreakEven, RentQuote
from optimizer.cost.tco import CostModel, TcoBreakdown
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
    # The down:up ratio as built (PhysicalPlan.oversubscription): 1:1 where the network is
    # too small for its design's oversubscribed tier; what the label and the response say.
    oversubscription: float
    # issue 17 (tco): lifetime cost of this BOM under the request's cost model
    tco: TcoBreakdown | None = None

    @property
    def tco_cents(self) -> int | None:
        return None if self.tco is None else self.tco.tco_cents

    # issue 17 (facility): what the design asks of the hall (optimizer.optimize.facility).
    floor_positions: int = 0  # racks plus in-row CDUs
    cooling: str = ""  # how its servers are installed: air | liquid
    rack_kw: float = 0.0  # draw of its fullest rack
    # issue 17 (portfolio): each workload's time on this design and the two feasibility ratios
    # (0 when the request names one workload; docs/optimizer.md, "Portfolio of workloads").
    workload_times: tuple[WorkloadTime, ...] = ()
    worst_time_over_target: float = 0.0
    year_share: float = 0.0
    # issue 17 (rent): owning this design against the cheapest offer of its GPU, per pricing
    break_evens: tuple[BreakEven, ...] = ()

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
    oversubscription: float  # as built (PhysicalPlan.oversubscription), as RankedDesign's
    tco_cents: int | None = None  # issue 17 (tco): the greedy BOM's lifetime cost


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
    # issue 17 (tco): the cost model the TCO figures use, and (min-tco) why rank 1 is not
    # the cheapest design to buy
    cost_model: CostModel = field(default_factory=CostModel)
    tco_comparison: str = ""
    # issue 17 (portfolio): what a design's training time means for a portfolio ("" otherwise).
    portfolio_measure: str = ""
    # issue 17 (rent): the request's run rented from each cloud offer, and what was assumed
    rent_quotes: tuple[RentQuote, ...] = ()
    rent_note: str = ""


# issue 17 (portfolio)
@dataclass(frozen=True)
class WorkloadTime:
    """One workload's predicted time on a design, beside what the request asked of it."""

    workload: str
    training_time_hours: float  # under the request's confidence level
    target_training_hours: float | None
    runs_per_year: float | None

    @property
    def time_over_target(self) -> float:
        t = self.target_training_hours
        return self.training_time_hours / t if t else 0.0

    @property
    def hours_per_year(self) -> float:
        return (self.runs_per_year or 0.0) * self.training_time_hours
