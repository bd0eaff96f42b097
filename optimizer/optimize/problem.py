"""The MIP instance of one request: candidate rows, link options, and one solve of it."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace

from optimizer.catalog.model import Catalog
from optimizer.cost.tco import TcoPrices, tco_prices
from optimizer.optimize.backends import Backend, Limits, SolveResult, SolveStatus
from optimizer.optimize.candidates import Costed, design_order
from optimizer.optimize.formulation import (
    Bounds,
    CandidateRow,
    LinkChoice,
    LinkClass,
    VarMap,
    build_model,
)
from optimizer.optimize.request import OptimizeSpec
from optimizer.performance.estimator import SECONDS_PER_HOUR
from optimizer.registry.objectives import Measure
from optimizer.topology.layout import LinkOption, group_ends, link_options
from optimizer.topology.plan import PhysicalPlan


@dataclass
class MipInstance:
    """Candidates and link options in the form the MIP and the decoder share."""

    costed: list[Costed]
    rows: list[CandidateRow]
    options: dict[LinkClass, list[LinkOption]]
    groups: list[tuple[str, str, str, float]]  # TimeKey.group of each distinct group
    order: list[int]  # each row's position in design_order (deterministic tie-break)

    def choices(self) -> dict[LinkClass, list[LinkChoice]]:
        return {
            cls: [LinkChoice(o.label, o.parts, o.power_w, o.module_ports) for o in opts]
            for cls, opts in self.options.items()
        }


def bounds_of(spec: OptimizeSpec) -> Bounds:
    c = spec.constraints
    return Bounds(
        budget_cents=c.budget_cents,
        max_power_w=None if c.max_power_kw is None else math.floor(c.max_power_kw * 1000),
        max_racks=c.max_racks,
        max_tco_cents=c.max_tco_cents,  # issue 17 (tco)
    )


def spec_tco_prices(catalog: Catalog, spec: OptimizeSpec) -> TcoPrices:
    """The request's cost model over the catalog's per-row support rates (issue 17, tco)."""
    return tco_prices((*catalog.servers, *catalog.nics, *catalog.switches), spec.cost_model)


def _link_allowed(catalog: Catalog, spec: OptimizeSpec) -> set[str]:
    """Link SKUs the request's vendor and lead-time filters leave in play."""
    lead = spec.constraints.max_lead_time_days
    return {
        lk.sku
        for lk in catalog.links
        if (not spec.allowed_vendors or lk.vendor in spec.allowed_vendors)
        and lk.vendor not in spec.excluded_vendors
        and not (
            lead is not None
            and lk.availability.lead_time_days is not None
            and lk.availability.lead_time_days > lead
        )
    }


class RowBuilder:
    """Turns physical plans into MIP rows, caching each link class's buildable options."""

    def __init__(self, catalog: Catalog, spec: OptimizeSpec) -> None:
        self.catalog = catalog
        self.spec = spec
        self.options: dict[LinkClass, list[LinkOption]] = {}
        self._allowed = _link_allowed(catalog, spec)
        self.tco = spec_tco_prices(catalog, spec)  # issue 17 (tco)

    def row(self, plan: PhysicalPlan, time_s: int, group: int) -> CandidateRow | None:
        """The plan's row, or None when no allowed part builds one of its link groups."""
        demand: dict[LinkClass, int] = defaultdict(int)
        for need in plan.links:
            cls = LinkClass.of(need)
            if cls not in self.options:
                found = link_options(
                    need.length_m,
                    need.speed_gbps,
                    need.fabric,
                    self.catalog,
                    group_ends(need.group),
                )
                self.options[cls] = [
                    o for o in found if all(sku in self._allowed for sku, _ in o.parts)
                ]
            if not self.options[cls]:
                return None
            demand[cls] += need.count
        fixed: dict[str, int] = defaultdict(int)
        fixed[plan.servers.sku] += plan.servers.quantity
        if plan.nics.quantity:  # none bought: built into the server, or a one-node design
            fixed[plan.nics.sku] += plan.nics.quantity
        for sw in plan.switches:
            fixed[sw.sku] += sw.quantity
        return CandidateRow(
            fixed_qty=dict(fixed),
            link_demand=dict(demand),
            power_w=math.ceil(plan.power_kw * 1000),
            racks=plan.racks,
            time_s=time_s,
            group=group,
        )

    def choices(self, classes: set[LinkClass]) -> dict[LinkClass, list[LinkChoice]]:
        return {
            cls: [
                LinkChoice(o.label, o.parts, o.power_w, o.module_ports) for o in self.options[cls]
            ]
            for cls in classes
        }

    def exact_cost(
        self, plan: PhysicalPlan, backend: Backend, limits: Limits, bounds: Bounds | None = None
    ) -> int | None:
        """Cheapest exact price of one plan alone (link mix and volume tiers by the MIP)
        within ``bounds`` (budget, power, racks) and the stock; None when no purchase fits."""
        row = self.row(plan, 0, 0)
        if row is None:
            return None
        choices = self.choices(set(row.link_demand))
        model, vm = build_model([row], choices, self.catalog, bounds or Bounds(), tco=self.tco)
        model.minimize(vm.cost_terms)
        res = backend.solve(model, limits)
        return res.objective if res.status is SolveStatus.OPTIMAL else None


def build_problem(costed: list[Costed], builder: RowBuilder) -> MipInstance:
    """Rows for the MIP; candidates whose links no allowed part can build are dropped."""
    keep: list[Costed] = []
    rows: list[CandidateRow] = []
    group_ids: dict[tuple[str, str, str, float], int] = {}
    for item in costed:
        cand = item.candidate
        group = group_ids.get(cand.key.group, len(group_ids))
        row = builder.row(cand.plan, math.ceil(cand.time_hours * SECONDS_PER_HOUR), group)
        if row is None:
            continue
        group_ids.setdefault(cand.key.group, group)
        keep.append(item)
        rows.append(row)
    used = {cls for r in rows for cls in r.link_demand}
    ranking = sorted(range(len(keep)), key=lambda i: design_order(keep[i].candidate.design))
    order = [0] * len(keep)
    for position, i in enumerate(ranking):
        order[i] = position
    return MipInstance(keep, rows, {c: builder.options[c] for c in used}, list(group_ids), order)


def solve_problem(
    problem: MipInstance,
    catalog: Catalog,
    spec: OptimizeSpec,
    bounds: Bounds,
    excluded: list[int],
    backend: Backend,
    limits: Limits,
) -> tuple[SolveResult, VarMap]:
    """One lexicographic MIP solve (each stage keeps the previous optimum as a constraint).

    min_cost: cost, then (time, design order); min_time: time, then cost, then design order;
    min_tco: lifetime cost (milli-cents), then (time, design order).
    The design order (optimizer.optimize.candidates.design_order) makes ties deterministic.
    The result carries the primary objective, its bound and a status that is OPTIMAL only
    when every stage was proven optimal.
    """
    model, vm = build_model(
        problem.rows,
        problem.choices(),
        catalog,
        bounds,
        excluded_groups=excluded,
        tco=spec_tco_prices(catalog, spec),
    )
    order = {vm.pick[i]: r for i, r in enumerate(problem.order)}
    stages = lexicographic_stages(spec.objective.kind.stages, vm, order, len(problem.rows) + 1)
    first: SolveResult | None = None
    last: SolveResult | None = None
    elapsed, proven = 0.0, True
    for i, objective in enumerate(stages):
        model.minimize(objective)
        res = backend.solve(model, limits)
        elapsed += res.solve_time_s
        if not res.has_solution:
            if last is None:
                return res, vm
            break  # keep the previous stage's solution (a later stage ran out of time)
        proven = proven and res.status is SolveStatus.OPTIMAL
        first = first or res
        last = res
        model.add(f"lexicographic_stage[{i}]", objective, hi=res.objective)
    assert first is not None and last is not None
    status = SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE
    return replace(
        last, status=status, objective=first.objective, bound=first.bound, solve_time_s=elapsed
    ), vm


def lexicographic_stages(
    measures: tuple[Measure, ...], vm: VarMap, order: dict[int, int], scale: int
) -> list[dict[int, int]]:
    """The objective's measures as MIP objectives, then the design order as the last word.

    The order is folded into a final time stage (time x scale + order: seconds are small, so
    one solve settles both); after a final cost stage it is a stage of its own, since capex in
    cents times the row count could exceed what a floating-point backend represents exactly.
    """
    terms = {Measure.COST: vm.cost_terms, Measure.TIME: vm.time_terms, Measure.TCO: vm.tco_terms}
    stages = [terms[m] for m in measures]
    if measures[-1] is Measure.TIME:
        stages[-1] = {v: vm.time_terms[v] * scale + order[v] for v in vm.pick}
    else:
        stages.append(order)
    return stages


def chosen_row(res: SolveResult, vm: VarMap) -> int:
    """The candidate row a solution picks (exactly one pick variable is 1)."""
    assert res.values is not None, "a solution has values"
    return next(i for i, v in enumerate(vm.pick) if res.values[v] == 1)


def cost_of(res: SolveResult, vm: VarMap) -> int:
    """Capex in cents of a solution (the cost objective evaluated, whatever was minimised)."""
    assert res.values is not None
    return sum(c * res.values[v] for v, c in vm.cost_terms.items())
