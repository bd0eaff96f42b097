"""Why a design ranks where it does, what binds, and why nothing fits when nothing does."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from optimizer.catalog.model import Catalog
from optimizer.optimize.backends import Backend, Limits
from optimizer.optimize.problem import MipInstance, bounds_of, chosen_row, cost_of, solve_problem
from optimizer.optimize.request import OptimizeSpec
from optimizer.optimize.result import ParetoEntry, RankedDesign
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.objectives import Measure
from optimizer.registry.topologies import TOPOLOGIES

if TYPE_CHECKING:
    from optimizer.optimize.candidates import Costed

# A constraint counts as binding when the design uses all but this fraction of it.
BINDING_SLACK = 0.02


def fabric_label(fabric: str) -> str:
    return FABRICS.get(fabric).label


def topology_label(topology: str) -> str:
    """The family's name in prose ("rail-optimized fat-tree")."""
    return TOPOLOGIES.get(topology).label


def usd(cents: int | float) -> str:
    return f"${cents / 100:,.0f}"


def describe(d: RankedDesign) -> str:
    design = d.design
    topology = TOPOLOGIES.get(design.topology).display(design.oversubscription, short=False)
    if not TOPOLOGIES.get(design.topology).scale_out:  # no fabric, no NIC bought
        return f"{design.nodes:,} x {design.server_sku} ({d.gpus:,} GPUs), {topology}"
    return (
        f"{design.nodes:,} x {design.server_sku} ({d.gpus:,} GPUs), "
        f"{fabric_label(design.fabric)} {topology}, "
        f"{design.nics_per_node} x {design.nic_sku} per node"
    )


def explain_ranked(
    ranked: list[RankedDesign], spec: OptimizeSpec, stock: dict[str, int]
) -> list[RankedDesign]:
    """Fill in binding constraints, slack and a one-paragraph explanation for each rank."""
    c = spec.constraints
    out = []
    for d in ranked:
        binding: list[str] = []
        budget, target = c.budget_cents, c.target_training_hours
        budget_slack = None if budget is None else budget - d.bom.capex_cents
        time_slack = None if target is None else target - d.time_hours
        if budget is not None and budget - d.bom.capex_cents <= BINDING_SLACK * budget:
            binding.append("budget")
        if target is not None and target - d.time_hours <= BINDING_SLACK * target:
            binding.append("time")
        if c.max_power_kw is not None and d.bom.power_kw >= (1 - BINDING_SLACK) * c.max_power_kw:
            binding.append("power")
        if c.max_racks is not None and d.bom.racks >= c.max_racks:
            binding.append("racks")
        if _at_stock_limit(d, stock):
            binding.append("stock")
        out.append(
            replace(
                d,
                binding=tuple(binding),
                budget_slack_cents=budget_slack,
                time_slack_hours=time_slack,
                explanation=_sentence(d, ranked[0], spec, binding),
            )
        )
    return out


def _at_stock_limit(d: RankedDesign, stock: dict[str, int]) -> bool:
    """Some SKU of the BOM uses its whole stock."""
    used: dict[str, int] = {}
    for line in d.bom.lines:
        used[line.sku] = used.get(line.sku, 0) + line.quantity
    return any(stock.get(sku) == qty for sku, qty in used.items())


def _sentence(d: RankedDesign, best: RankedDesign, spec: OptimizeSpec, binding: list[str]) -> str:
    share = d.cost.network_share
    kind = spec.objective.kind
    goal = kind.goal
    head = f"Rank {d.rank}: {describe(d)}. " + (f"The {goal}. " if d.rank == 1 else "")
    money = (
        f"Capex {usd(d.bom.capex_cents)}: servers {usd(d.cost.servers_cents)}, network "
        f"{usd(d.bom.capex_cents - d.cost.servers_cents)} ({share:.1%}). "
    )
    timing = (
        f"Training takes {d.time_hours:,.0f} h "
        f"(range {d.estimate.training_time_hours_low:,.0f}-"
        f"{d.estimate.training_time_hours_high:,.0f} h, MFU {d.estimate.mfu:.1%}). "
    )
    if d.rank == 1:
        rel = ""
    elif kind.primary is Measure.COST:
        extra = d.bom.capex_cents - best.bom.capex_cents
        rel = f"Costs {usd(extra)} ({extra / best.bom.capex_cents:+.1%}) more than rank 1. "
    else:
        extra = d.bom.capex_cents - best.bom.capex_cents
        slower = d.time_hours - best.time_hours
        rel = (
            f"Trains as fast as rank 1 and costs {usd(extra)} more. "
            if slower < 0.05
            else f"Takes {slower:,.1f} h longer than rank 1. "
        )
    bind = f"At its limit: {', '.join(binding)}." if binding else "No constraint is at its limit."
    return head + money + timing + rel + bind


def pareto_front(costed: list[Costed]) -> tuple[ParetoEntry, ...]:
    """Cost-time non-dominated designs among those evaluated (greedy BOM prices)."""
    points = sorted(
        (
            (c.standalone_cents, c.candidate.time_hours, c.candidate)
            for c in costed
            if c.standalone_cents is not None
        ),
        key=lambda p: (p[0], p[1], repr(p[2].design)),
    )
    front: list[ParetoEntry] = []
    best_time = math.inf
    for cents, hours, cand in points:
        if hours < best_time:
            front.append(ParetoEntry(cents, hours, cand.gpus, cand.design))
            best_time = hours
    return tuple(front)


def sensitivity(
    problem: MipInstance,
    ranked: list[RankedDesign],
    catalog: Catalog,
    spec: OptimizeSpec,
    backend: Backend,
    limits: Limits,
) -> str:
    """How far each competing fabric's switch prices must fall for it to take rank 1."""
    if spec.objective.kind.primary is not Measure.COST:
        return ""
    best = ranked[0]
    lines = []
    fabrics = sorted({g[1] for g in problem.groups} - {best.design.fabric})
    if not fabrics:
        return (
            f"No other fabric meets the constraints with this catalog; "
            f"{fabric_label(best.design.fabric)} is the only choice."
        )
    for fabric in fabrics:
        others = [i for i, g in enumerate(problem.groups) if g[1] != fabric]
        res, vm = solve_problem(problem, catalog, spec, bounds_of(spec), others, backend, limits)
        if not res.has_solution:
            continue
        chosen = chosen_row(res, vm)
        plan = problem.costed[chosen].candidate.plan
        switch_cents = sum(
            s.quantity * next(w.price_cents for w in catalog.switches if w.sku == s.sku)
            for s in plan.switches
        )
        gap = cost_of(res, vm) - best.bom.capex_cents
        name = fabric_label(fabric)
        if gap <= 0:
            lines.append(
                f"{name} ties rank 1 at {usd(cost_of(res, vm))}; it ranks below only "
                f"on the tie-break (training time, then names)."
            )
        elif not switch_cents:
            lines.append(
                f"{name}'s best design has no switches and costs {usd(gap)} more; no "
                f"switch price cut changes the choice."
            )
        elif gap < switch_cents:
            lines.append(
                f"{name} takes rank 1 once its switches are "
                f"{gap / switch_cents:.0%} cheaper (its best design costs "
                f"{usd(gap)} more; switches {usd(switch_cents)})."
            )
        else:
            lines.append(
                f"No switch price cut alone makes {name} win: its best design costs "
                f"{usd(gap)} more than rank 1, more than its switches "
                f"({usd(switch_cents)})."
            )
    return " ".join(lines)
