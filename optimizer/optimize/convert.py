"""OptimizeRequest <-> OptimizeSpec and OptimizeResult -> OptimizeResponse (the one place)."""

from __future__ import annotations

import math

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.optimize.backends import BACKENDS
from optimizer.optimize.request import Confidence, Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult, RankedDesign
from optimizer.performance.convert import plan_from_proto, response_to_proto, workload_from_proto
from optimizer.performance.plan import PartialPlan
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.objectives import MIN_COST, OBJECTIVES
from optimizer.registry.topologies import TOPOLOGIES

# Limits checked before any work (docs/optimizer.md, "Limits").
MAX_TOP_K = 20
MAX_TIME_LIMIT_S = 600.0
DEFAULT_TIME_LIMIT_S = 30.0
# A budget above this cannot be priced exactly by every backend (docs/optimizer.md).
MAX_BUDGET_CENTS = 10**14


def _choice(value: str, allowed: tuple[str, ...], field: str, default: str) -> str:
    if not value:
        return default
    low = value.lower()
    if low not in allowed:
        msg = f"got {value!r}, expected one of {', '.join(allowed)}"
        raise InvalidInput(msg, field=field)
    return low


def _positive(msg_field: str, value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        msg = f"got {value}, expected a positive number"
        raise InvalidInput(msg, field=msg_field)
    return value


def spec_from_proto(req: optimize_pb2.OptimizeRequest) -> OptimizeSpec:
    """Validate every field of ``req`` and build the typed spec (field-named errors)."""
    c = req.constraints
    budget = None
    if c.HasField("budget_usd"):
        cents = round(_positive("constraints.budget_usd", c.budget_usd) * 100)
        if cents > MAX_BUDGET_CENTS:
            msg = f"got {c.budget_usd:,.0f}, expected at most {MAX_BUDGET_CENTS / 100:,.0f}"
            raise InvalidInput(msg, field="constraints.budget_usd")
        budget = cents
    target = (
        _positive("constraints.target_training_hours", c.target_training_hours)
        if c.HasField("target_training_hours")
        else None
    )
    kind = OBJECTIVES.resolve(req.objective, 0, "objective", "objective_kind") or MIN_COST
    objective = Objective(kind.name)
    kind.check_constraints(
        {name for name, v in (("budget_usd", budget), ("target_training_hours", target)) if v}
    )
    top_k = req.top_k or 3
    if not 1 <= top_k <= MAX_TOP_K:
        raise InvalidInput(f"got {req.top_k}, expected 1 to {MAX_TOP_K}", field="top_k")
    time_limit = (
        _positive("solver.time_limit_s", req.solver.time_limit_s)
        if req.solver.HasField("time_limit_s")
        else DEFAULT_TIME_LIMIT_S
    )
    if time_limit > MAX_TIME_LIMIT_S:
        raise InvalidInput(
            f"got {time_limit}, expected at most {MAX_TIME_LIMIT_S}", field="solver.time_limit_s"
        )
    for name in ("max_power_kw", "rack_power_kw", "max_lead_time_days"):
        if c.HasField(name):
            _positive(f"constraints.{name}", getattr(c, name))
    for name in ("max_racks", "min_gpus", "max_gpus"):
        if c.HasField(name) and getattr(c, name) < 1:
            raise InvalidInput(
                f"got {getattr(c, name)}, expected a positive integer", field=f"constraints.{name}"
            )
    if c.HasField("min_gpus") and c.HasField("max_gpus") and c.min_gpus > c.max_gpus:
        raise InvalidInput(
            f"min_gpus {c.min_gpus} exceeds max_gpus {c.max_gpus}", field="constraints.min_gpus"
        )
    if not req.HasField("workload"):
        raise InvalidInput(
            "missing; expected a workload (a preset model name or an architecture)",
            field="workload",
        )
    return OptimizeSpec(
        workload=workload_from_proto(req.workload),
        constraints=Constraints(
            budget_cents=budget,
            target_training_hours=target,
            max_power_kw=c.max_power_kw if c.HasField("max_power_kw") else None,
            max_racks=c.max_racks if c.HasField("max_racks") else None,
            min_gpus=c.min_gpus if c.HasField("min_gpus") else None,
            max_gpus=c.max_gpus if c.HasField("max_gpus") else None,
            max_lead_time_days=(c.max_lead_time_days if c.HasField("max_lead_time_days") else None),
        ),
        objective=objective,
        top_k=top_k,
        allowed_fabrics=FABRICS.normalize_all(req.allowed_fabrics, "allowed_fabrics"),
        allowed_topologies=TOPOLOGIES.normalize_all(req.allowed_topologies, "allowed_topologies"),
        allowed_vendors=tuple(req.allowed_vendors),
        excluded_vendors=tuple(req.excluded_vendors),
        backend=_choice(req.solver.backend, BACKENDS, "solver.backend", "cpsat"),
        time_limit_s=time_limit,
        seed=req.solver.seed if req.solver.HasField("seed") else 0,
        confidence=Confidence(
            _choice(
                req.confidence,
                tuple(x.value for x in Confidence),
                "confidence",
                Confidence.EXPECTED.value,
            )
        ),
        rack_power_kw=c.rack_power_kw if c.HasField("rack_power_kw") else None,
    )


def fixed_plan_from_proto(req: optimize_pb2.OptimizeRequest) -> PartialPlan | None:
    """The parallel degrees the request fixes (the planner chooses the rest), if any."""
    if not req.HasField("parallelism"):
        return None
    return plan_from_proto(req.parallelism, req.workload)


def _usd(cents: int) -> float:
    return cents / 100


def _design_to_proto(d: RankedDesign) -> optimize_pb2.Design:
    design = d.design
    out = optimize_pb2.Design(
        rank=d.rank,
        gpus=d.gpus,
        nodes=design.nodes,
        server_sku=design.server_sku,
        fabric=design.fabric,
        topology=design.topology,
        oversubscription=design.oversubscription,
        capex_usd=_usd(d.bom.capex_cents),
        power_kw=d.bom.power_kw,
        training_time_hours=d.time_hours,
        training_time_hours_low=d.estimate.training_time_hours_low,
        training_time_hours_high=d.estimate.training_time_hours_high,
        estimate=response_to_proto(d.estimate),
        binding=list(d.binding),
        explanation=d.explanation,
        racks=d.bom.racks,
        nic_sku=design.nic_sku,
        cost=optimize_pb2.CostBreakdown(
            servers_usd=_usd(d.cost.servers_cents),
            nics_usd=_usd(d.cost.nics_cents),
            switches_usd=_usd(d.cost.switches_cents),
            cables_usd=_usd(d.cost.cables_cents),
            optics_usd=_usd(d.cost.optics_cents),
            network_share=d.cost.network_share,
        ),
    )
    if d.budget_slack_cents is not None:
        out.budget_slack_usd = _usd(d.budget_slack_cents)
    if d.time_slack_hours is not None:
        out.time_slack_hours = d.time_slack_hours
    for line in d.bom.lines:
        out.bom.add(
            category=line.category,
            sku=line.sku,
            vendor=line.vendor,
            quantity=line.quantity,
            unit_price_usd=_usd(line.unit_price_cents),
            extended_price_usd=_usd(line.extended_price_cents),
            tier=line.tier,
            power_kw=line.power_kw,
            rack_units=line.rack_units,
            source=line.source,
            length_m=line.length_m or 0.0,
        )
    return out


def response_from_result(
    result: OptimizeResult, catalog_id: str = ""
) -> optimize_pb2.OptimizeResponse:
    out = optimize_pb2.OptimizeResponse(
        status=result.status,
        designs=[_design_to_proto(d) for d in result.designs],
        diagnosis=result.diagnosis,
        solve_time_s=result.solve_time_s,
        gap=result.gap,
        backend=result.backend,
        catalog_id=catalog_id,
        candidates_evaluated=result.candidates_evaluated,
        warnings=list(result.warnings),
        sensitivity=result.sensitivity,
        bound_usd=_usd(result.bound_cents) if result.bound_cents is not None else 0.0,
    )
    for p in result.pareto:
        out.pareto.add(
            capex_usd=_usd(p.capex_cents),
            training_time_hours=p.training_time_hours,
            gpus=p.gpus,
            server_sku=p.design.server_sku,
            fabric=p.design.fabric,
            topology=p.design.topology,
            oversubscription=p.design.oversubscription,
        )
    return out
