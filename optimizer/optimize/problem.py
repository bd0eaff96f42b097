"""The MIP instance of one request: candidate rows, link options, and one solve of it."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

from optimizer.catalog.model import Catalog
from optimizer.cost.tco import TcoPrices, tco_prices
from optimizer.optimize.backends import Backend, Limits, SolveResult, SolveStatus
from optimizer.optimize.candidates import Costed, design_order, part_allowed
from optimizer.optimize.formulation import (
    Bounds,
    CandidateRow,
    LinkChoice,
    LinkClass,
    VarMap,
    build_model,
)
from optimizer.optimize.mip import MipModel
from optimizer.optimize.request import OptimizeSpec
from optimizer.performance.estimator import SECONDS_PER_HOUR
from optimizer.registry.objectives import Measure
from optimizer.topology.layout import LinkOption, link_options
from optimizer.topology.plan import PhysicalPlan


@dataclass
class MipInstance:
    """Candidates and link options in the form the MIP and the decoder share."""

    costed: list[Costed]
    rows: list[CandidateRow]
    options: dict[LinkClass, list[LinkOption]]
    groups: list[tuple[str, str, str, float]]  # TimeKey.group of each distinct group
    order: list[int]  # each row's position in design_order (deterministic tie-break)
    # Proven cheapest purchase of one row within some bounds (None: none fits) and its link
    # mix, kept across the top-K solves: excluding ranked groups never changes a row's own.
    row_costs: dict[tuple[int, Bounds], RowPurchase | None] = field(default_factory=dict)

    def choices(self) -> dict[LinkClass, list[LinkChoice]]:
        return {
            cls: [LinkChoice(o.label, o.parts, o.power_w, o.module_ports, o.caged) for o in opts]
            for cls, opts in self.options.items()
        }

    def row_purchase(
        self, i: int, catalog: Catalog, bounds: Bounds, backend: Backend, limits: Limits
    ) -> tuple[SolveResult | None, RowPurchase | None]:
        """Cheapest exact purchase of row ``i`` alone within ``bounds`` and the stock.

        Returns the solve (None when cached) and the purchase (None when none fits). Only
        proven answers are kept; an unproven one returns its result and None.
        """
        key = (i, bounds)
        if key in self.row_costs:
            return None, self.row_costs[key]
        row = self.rows[i]
        choices = {c: opts for c, opts in self.choices().items() if c in row.link_demand}
        model, vm = build_model([row], choices, catalog, bounds)
        model.minimize(vm.cost_terms)
        res = backend.solve(model, limits)
        if res.status is SolveStatus.OPTIMAL:
            assert res.values is not None and res.objective is not None
            values = res.values
            links = {key: values[var] for key, var in vm.links.items()}
            self.row_costs[key] = RowPurchase(res.objective, links)
        elif res.status is SolveStatus.INFEASIBLE:
            self.row_costs[key] = None
        return res, self.row_costs.get(key)


@dataclass(frozen=True)
class RowPurchase:
    """One row's cheapest purchase: capex in cents and links per (class, option index)."""

    cost_cents: int
    links: dict[tuple[LinkClass, int], int]


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


class RowBuilder:
    """Turns physical plans into MIP rows, caching each link class's buildable options."""

    def __init__(self, catalog: Catalog, spec: OptimizeSpec) -> None:
        self.catalog = catalog
        self.spec = spec
        self.options: dict[LinkClass, list[LinkOption]] = {}
        # the links the request's vendor filters and lead-time cap leave in play
        self._allowed = {lk.sku for lk in catalog.links if part_allowed(spec, lk)}
        self.tco = spec_tco_prices(catalog, spec)  # issue 17 (tco)

    def row(self, plan: PhysicalPlan, time_s: int, group: int) -> CandidateRow | None:
        """The plan's row, or None when no allowed part builds one of its link groups."""
        demand: dict[LinkClass, int] = defaultdict(int)
        spare: dict[LinkClass, int] = defaultdict(int)
        for need in plan.links:
            cls = LinkClass.of(need)
            if cls not in self.options:
                found = link_options(
                    need.length_m,
                    need.speed_gbps,
                    need.fabric,
                    self.catalog,
                    need.link_ends,  # issue 16 (fabric800): the switches' cages
                )
                self.options[cls] = [
                    o for o in found if all(sku in self._allowed for sku, _ in o.parts)
                ]
            if not self.options[cls]:
                return None
            demand[cls] += need.count
            spare[cls] += need.spare_ports
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
            link_spare={cls: n for cls, n in spare.items() if n},
        )

    def choices(self, classes: set[LinkClass]) -> dict[LinkClass, list[LinkChoice]]:
        return {
            cls: [
                LinkChoice(o.label, o.parts, o.power_w, o.module_ports, o.caged)
                for o in self.options[cls]
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

    After a time stage the cost stage is settled row by row (``_settle_by_rows``): the same
    optimum, but each row's purchase is a small MIP, where the whole model's cost stage
    (one pick among rows tied on time, each with its link mix, tiers and whole modules) can
    take CP-SAT tens of seconds to prove.
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
    measures = spec.objective.kind.stages
    stages = lexicographic_stages(measures, vm, order, len(problem.rows) + 1)
    by_rows = measures[:2] == (Measure.TIME, Measure.COST)
    first: SolveResult | None = None
    last: SolveResult | None = None
    elapsed, proven = 0.0, True
    for i, objective in enumerate(stages):
        if i == 1 and by_rows and first is not None and first.objective is not None:
            settled, spent = _settle_by_rows(
                problem, model, vm, first.objective, catalog, bounds, excluded, backend, limits
            )
            elapsed += spent
            if settled is not None:
                proven = proven and settled.status is SolveStatus.OPTIMAL
                last = settled
                break
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


def _settle_by_rows(
    problem: MipInstance,
    model: MipModel,
    vm: VarMap,
    time_s: int,
    catalog: Catalog,
    bounds: Bounds,
    excluded: list[int],
    backend: Backend,
    limits: Limits,
) -> tuple[SolveResult | None, float]:
    """The cost and design-order stages after the time stage found ``time_s``, row by row.

    Exactly one row is picked and every other variable buys that row's parts, so the
    cheapest purchase at the optimal time is the least of the tied rows' own cheapest
    purchases (each proven alone, cached across the top-K), and the design order breaks the
    remaining tie. The whole model is then solved with that row picked and its cost fixed,
    for the solution's values. Returns None (and the seconds spent) when a row's solve is
    not proven, so the caller runs the stages on the whole model instead.
    """
    spent = 0.0
    tied: list[tuple[int, int, int, RowPurchase]] = []  # (cost, design order, row, purchase)
    skip = set(excluded)
    for i, row in enumerate(problem.rows):
        if row.group in skip or row.time_s != time_s:
            continue
        res, bought = problem.row_purchase(i, catalog, bounds, backend, limits)
        if res is not None:
            spent += res.solve_time_s
            if res.status not in (SolveStatus.OPTIMAL, SolveStatus.INFEASIBLE):
                return None, spent
        if bought is not None:
            tied.append((bought.cost_cents, problem.order[i], i, bought))
    if not tied:
        return None, spent
    cost, _, best, bought = min(tied, key=lambda t: t[:3])
    # The row and its link mix fixed, the tiers and whole modules follow in presolve.
    final = replace(model, constraints=list(model.constraints))
    final.add("lexicographic_stage[1]", vm.cost_terms, hi=cost)
    final.add("settled_row", {vm.pick[best]: 1}, lo=1)
    for key, var in vm.links.items():
        n = bought.links.get(key, 0)
        final.add(f"settled_links[{var}]", {var: 1}, lo=n, hi=n)
    final.minimize(vm.cost_terms)
    res = backend.solve(final, limits)
    spent += res.solve_time_s
    if not res.has_solution or res.objective != cost:
        return None, spent
    return replace(res, status=SolveStatus.OPTIMAL), spent


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
