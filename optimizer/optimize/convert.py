"""OptimizeRequest <-> OptimizeSpec and OptimizeResult -> OptimizeResponse (the one place)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.catalog.model import Catalog
from optimizer.cost.tco import CostModel, TcoBreakdown, checked_cost_model
from optimizer.errors import InvalidInput
from optimizer.optimize.backends import BACKENDS
from optimizer.optimize.candidates import scale_out_gbps_per_gpu
from optimizer.optimize.portfolio import (  # issue 17 (portfolio)
    portfolio_from_proto,
    usable_hours_per_year,
)
from optimizer.optimize.request import Confidence, Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult, RankedDesign
from optimizer.performance.convert import (
    options_from_proto,
    plan_from_proto,
    response_to_proto,
    with_stage_layers,
)
from optimizer.performance.plan import PartialPlan
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.objectives import MIN_COST, OBJECTIVES
from optimizer.registry.schema import message_values, record_values
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.design import Design

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
    # issue 17 (portfolio): `workload` and `workloads` together; the target of a portfolio
    # the portfolio's usable year is the cost model's utilisation of it (one source of truth)
    cost_model = cost_model_from_proto(req.cost_model)  # issue 17 (tco)
    primary, target, portfolio = portfolio_from_proto(
        req, target, usable_hours_per_year(cost_model)
    )
    # issue 14 (pipeline layout): a stated layout is every workload's, as the fixed degrees are
    if primary is not None:
        primary = with_stage_layers(primary, req.parallelism)
    portfolio = tuple(
        dataclasses.replace(t, workload=with_stage_layers(t.workload, req.parallelism))
        for t in portfolio
    )
    kind = (
        OBJECTIVES.resolve(req.objective, req.objective_kind, "objective", "objective_kind")
        or MIN_COST
    )
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
    for name in (
        "max_power_kw",
        "rack_power_kw",
        "max_lead_time_days",
        "min_nic_gbps_per_gpu",
        "max_tco_usd",  # issue 17 (tco)
    ):
        if c.HasField(name):
            _positive(f"constraints.{name}", getattr(c, name))
    for name in ("max_racks", "min_gpus", "max_gpus"):
        if c.HasField(name) and getattr(c, name) < 1:
            raise InvalidInput(
                f"got {getattr(c, name)}, expected a positive integer", field=f"constraints.{name}"
            )
    # issue 17 (facility)
    rack_kw = _facility(c)
    if c.cooling and c.cooling not in ("air", "liquid"):
        raise InvalidInput(
            f"got {c.cooling!r}, expected air or liquid", field="constraints.cooling"
        )
    if c.HasField("min_gpus") and c.HasField("max_gpus") and c.min_gpus > c.max_gpus:
        raise InvalidInput(
            f"min_gpus {c.min_gpus} exceeds max_gpus {c.max_gpus}", field="constraints.min_gpus"
        )
    if primary is None:
        raise InvalidInput(
            "missing; expected a workload (a preset model name or an architecture)",
            field="workload",
        )
    return OptimizeSpec(
        workload=primary,
        # The mirrored fields by name (checked above); budget and target as validated.
        constraints=Constraints(
            **{
                **record_values(c, Constraints),
                "budget_cents": budget,
                "target_training_hours": target,
            }
        ),
        objective=objective,
        top_k=top_k,
        allowed_fabrics=FABRICS.resolve_all(
            req.allowed_fabrics, req.allowed_fabric_kinds, "allowed_fabrics", "allowed_fabric_kinds"
        ),
        allowed_topologies=TOPOLOGIES.resolve_all(
            req.allowed_topologies,
            req.allowed_topology_families,
            "allowed_topologies",
            "allowed_topology_families",
        ),
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
        rack_power_kw=rack_kw,
        require_fabric=req.require_fabric,
        cost_model=cost_model,  # issue 17 (tco)
        portfolio=portfolio,  # issue 17 (portfolio)
        model_options=options_from_proto(req),  # issue 14
        ranking_only=req.ranking_only,  # issue 19 (batch)
    )


# issue 17 (tco)
def cost_model_from_proto(msg: optimize_pb2.CostModel) -> CostModel:
    """The request's cost model: the fields it sets over the defaults, range-checked."""
    given = {
        f.name: float(getattr(msg, f.name)) for f in msg.DESCRIPTOR.fields if msg.HasField(f.name)
    }
    return checked_cost_model(given)


def cost_model_to_proto(model: CostModel) -> optimize_pb2.CostModel:
    return optimize_pb2.CostModel(**dataclasses.asdict(model))


def tco_to_proto(t: TcoBreakdown) -> optimize_pb2.TcoBreakdown:
    return optimize_pb2.TcoBreakdown(
        capex_usd=t.capex_cents / 100,
        energy_usd=t.energy_cents / 100,
        support_usd=t.support_cents / 100,
        space_usd=t.space_cents / 100,
        depreciation_usd_per_year=t.depreciation_cents_per_year / 100,
        opex_usd=t.opex_cents / 100,
    )


def _facility(c: optimize_pb2.Constraints) -> float | None:
    """Checks the facility fields; returns the power cap per rack: ``max_rack_kw`` (issue
    17's spelling) or the older ``rack_power_kw`` (both may be given when they agree)."""
    if c.HasField("max_rack_kw"):
        _positive("constraints.max_rack_kw", c.max_rack_kw)
    if c.HasField("max_floor_positions") and c.max_floor_positions < 1:
        raise InvalidInput(
            f"got {c.max_floor_positions}, expected a positive integer",
            field="constraints.max_floor_positions",
        )
    given = [getattr(c, f) for f in ("max_rack_kw", "rack_power_kw") if c.HasField(f)]
    if len(given) == 2 and given[0] != given[1]:
        raise InvalidInput(
            f"got {given[0]:g}, but rack_power_kw (its older name) says {given[1]:g}",
            field="constraints.max_rack_kw",
        )
    return given[0] if given else None


def fixed_plan_from_proto(req: optimize_pb2.OptimizeRequest) -> PartialPlan | None:
    """The parallel degrees the request fixes (the planner chooses the rest), if any."""
    if not req.HasField("parallelism"):
        return None
    return plan_from_proto(req.parallelism, req.workload)


def _kinds(design: Design) -> dict[str, Any]:
    """The design's fabric and family as proto enum values, beside their strings."""
    return {
        "fabric_kind": FABRICS.get(design.fabric).proto_value,
        "topology_family": TOPOLOGIES.get(design.topology).proto_value,
    }


def design_gbps_per_gpu(design: Design, catalog: Catalog | None) -> float:
    """candidates.scale_out_gbps_per_gpu of the design's parts (0 when the catalog does not
    name them: a design without scale-out NICs, or no catalog given)."""
    if catalog is None:
        return 0.0
    servers = {s.sku: s for s in catalog.servers}
    nics = {n.sku: n for n in catalog.nics}
    server, nic = servers.get(design.server_sku), nics.get(design.nic_sku)
    if server is None or nic is None or not design.nics_per_node:
        return 0.0
    return scale_out_gbps_per_gpu(server, nic.line_gbps, design.nics_per_node)


def _design_to_proto(d: RankedDesign, catalog: Catalog | None = None) -> optimize_pb2.Design:
    """Mirrored fields of the ranked design, its design and its BOM lines by name; the rest
    (totals of the BOM, the estimate's range, the network's shares) named here."""
    return optimize_pb2.Design(
        # the ratio as built is the ranked design's, not the one its sizing was asked for
        **message_values(d.design, optimize_pb2.Design, exclude=("oversubscription",)),
        **message_values(d, optimize_pb2.Design),
        **_kinds(d.design),
        capex_usd=d.bom.capex_cents / 100,
        power_kw=d.bom.power_kw,
        racks=d.bom.racks,
        training_time_hours=d.time_hours,
        training_time_hours_low=d.estimate.training_time_hours_low,
        training_time_hours_high=d.estimate.training_time_hours_high,
        scale_out_gbps_per_gpu=design_gbps_per_gpu(d.design, catalog),
        scale_up_gpus=d.estimate.scale_up_gpus,  # issue 16: GPUs per NVLink domain
        network_time_share=d.network_time_share,
        # issue 17 (tco)
        tco_usd=0.0 if d.tco is None else d.tco.tco_cents / 100,
        tco=None if d.tco is None else tco_to_proto(d.tco),
        estimate=response_to_proto(d.estimate),
        cost=optimize_pb2.CostBreakdown(
            **message_values(d.cost, optimize_pb2.CostBreakdown),
            network_share=d.cost.network_share,
        ),
        bom=[
            optimize_pb2.BomLine(**message_values(ln, optimize_pb2.BomLine)) for ln in d.bom.lines
        ],
        # issue 17 (portfolio)
        workload_times=[
            optimize_pb2.WorkloadTime(
                **message_values(t, optimize_pb2.WorkloadTime),
                time_over_target=t.time_over_target,
                hours_per_year=t.hours_per_year,
            )
            for t in d.workload_times
        ],
        # issue 17 (rent)
        break_evens=[
            optimize_pb2.BreakEven(**message_values(b, optimize_pb2.BreakEven))
            for b in d.break_evens
        ],
    )


def response_from_result(
    result: OptimizeResult, catalog_id: str = "", catalog: Catalog | None = None
) -> optimize_pb2.OptimizeResponse:
    """The response message; ``catalog`` (the one optimised over) gives each design's NIC
    speed and GPUs per node for its scale-out Gb/s per GPU."""
    return optimize_pb2.OptimizeResponse(
        **message_values(result, optimize_pb2.OptimizeResponse),
        designs=[_design_to_proto(d, catalog) for d in result.designs],
        pareto=[
            optimize_pb2.ParetoPoint(
                **message_values(p, optimize_pb2.ParetoPoint),
                **message_values(p.design, optimize_pb2.ParetoPoint, exclude=("oversubscription",)),
                **_kinds(p.design),
            )
            for p in result.pareto
        ],
        catalog_id=catalog_id,
        cost_model=cost_model_to_proto(result.cost_model),  # issue 17 (tco)
        # issue 17 (rent)
        rent_quotes=[
            optimize_pb2.RentQuote(**message_values(q, optimize_pb2.RentQuote))
            for q in result.rent_quotes
        ],
    )
