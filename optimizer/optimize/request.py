"""The typed optimization request the core works on (converted from OptimizeRequest)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from optimizer.cost.tco import CostModel
from optimizer.performance.options import DEFAULT_OPTIONS, ModelOptions
from optimizer.registry.objectives import OBJECTIVES, ObjectiveKind
from optimizer.workload.model import Workload


class Objective(StrEnum):
    """The objective's wire name; everything it means is its registry record (``kind``)."""

    MIN_COST = "min_cost"  # cheapest design meeting the target time (and the budget)
    MIN_TIME = "min_time"  # fastest design within the budget
    MIN_TCO = "min_tco"  # issue 17 (tco): lowest lifetime cost meeting the target

    @property
    def kind(self) -> ObjectiveKind:
        return OBJECTIVES.get(self.value)


class Confidence(StrEnum):
    EXPECTED = "expected"  # meet the target with the expected training time
    PESSIMISTIC = "pessimistic"  # meet it with the estimator's high (slow) bound


@dataclass(frozen=True)
class Constraints:
    budget_cents: int | None = None
    target_training_hours: float | None = None
    max_power_kw: float | None = None
    max_racks: int | None = None
    min_gpus: int | None = None
    max_gpus: int | None = None
    max_lead_time_days: float | None = None
    # Scale-out bandwidth a buyer insists on per GPU (NIC rate x NICs per node / GPUs per node).
    min_nic_gbps_per_gpu: float | None = None
    # issue 17 (tco): cap on the lifetime cost (capex + operating cost over the years)
    max_tco_cents: int | None = None
    # issue 17 (facility): the data hall's floor and cooling (optimizer.optimize.facility).
    max_floor_positions: int | None = None  # racks (server and network) plus in-row CDUs
    cooling: str | None = None  # "air" | "liquid": the facility's cooling; None: not stated


@dataclass(frozen=True)
class OptimizeSpec:
    workload: Workload
    constraints: Constraints = field(default_factory=Constraints)
    objective: Objective = Objective.MIN_COST
    top_k: int = 3
    allowed_fabrics: tuple[str, ...] = ()
    allowed_topologies: tuple[str, ...] = ()
    allowed_vendors: tuple[str, ...] = ()
    excluded_vendors: tuple[str, ...] = ()
    backend: str = "cpsat"
    time_limit_s: float = 30.0
    seed: int = 0
    confidence: Confidence = Confidence.EXPECTED
    rack_power_kw: float | None = None
    # One-node clusters: offer only designs with a scale-out fabric (default: the switchless
    # one-node design is offered too).
    require_fabric: bool = False
    # issue 17 (tco): how the facility charges for a running cluster (the TCO's terms)
    cost_model: CostModel = field(default_factory=CostModel)
    # issue 17 (portfolio): every workload the cluster must serve (the first is ``workload``);
    # empty for one workload with one target, which is today's request exactly.
    portfolio: tuple[WorkloadTarget, ...] = ()
    # issue 19 (batch): rank only, skipping the explanation re-solves (binding, sensitivity,
    # diagnosis, baseline, TCO comparison); the designs, BOMs and times are the same.
    ranking_only: bool = False
    # issue 14: the request's calibration profile and reliability figures (time model)
    model_options: ModelOptions = DEFAULT_OPTIONS


# issue 17 (portfolio)
@dataclass(frozen=True)
class WorkloadTarget:
    """One workload of a portfolio: its own target hours, runs a year sharing the cluster's
    usable hours, or both (docs/optimizer.md, "Portfolio of workloads")."""

    workload: Workload
    target_training_hours: float | None = None
    runs_per_year: float | None = None
