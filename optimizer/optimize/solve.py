"""The optimizer's entry point: search candidates, solve the MIP K times, verify, explain."""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict
from dataclasses import replace

from optimizer.catalog.model import Catalog
from optimizer.errors import SolverFailed
from optimizer.optimize.backends import Limits, SolveResult, SolveStatus, get_backend
from optimizer.optimize.candidates import SearchSpace, Timer, confident_hours
from optimizer.optimize.explain import diagnose, explain_ranked, pareto_front, sensitivity
from optimizer.optimize.formulation import LinkClass, VarMap, stock_limits
from optimizer.optimize.problem import (
    Problem,
    RowBuilder,
    bounds_of,
    build_problem,
    cost_of,
    solve_problem,
)
from optimizer.optimize.request import OptimizeSpec
from optimizer.optimize.result import CostSplit, OptimizeResult, RankedDesign
from optimizer.optimize.search import search
from optimizer.performance.plan import PartialPlan
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.layout import Layout, LinkOption
from optimizer.topology.plan import PhysicalPlan


def optimize(catalog: Catalog, spec: OptimizeSpec, *, fixed: PartialPlan | None = None,
             stop: threading.Event | None = None) -> OptimizeResult:
    """Ranked, verified designs for ``spec`` over ``catalog`` (see docs/optimizer.md)."""
    start = time.perf_counter()
    layout = Layout() if spec.rack_power_kw is None else Layout(rack_power_kw=spec.rack_power_kw)
    space = SearchSpace(catalog, spec)
    timer = Timer(spec.workload, {s.sku: s for s in space.servers}, spec.confidence, fixed)
    stock = stock_limits(catalog)
    limits = Limits(time_limit_s=spec.time_limit_s, seed=spec.seed)
    if stop is not None:
        limits = replace(limits, stop=stop)
    backend = get_backend(spec.backend)
    builder = RowBuilder(catalog, spec)

    def exact_cost(plan: PhysicalPlan) -> int | None:
        return builder.exact_cost(plan, backend, limits)

    outcome = search(space, timer, layout, stock, exact_cost)
    problem = build_problem(outcome.candidates, builder)
    deadline = start + spec.time_limit_s
    bounds = bounds_of(spec)

    ranked: list[RankedDesign] = []
    status, gap, bound = SolveStatus.INFEASIBLE, 0.0, None
    excluded: list[int] = []
    for rank in range(1, spec.top_k + 1):
        if not problem.rows:
            break
        remaining = max(0.05, deadline - time.perf_counter())
        res, varmap = solve_problem(problem, catalog, spec, bounds, excluded, backend,
                                 replace(limits, time_limit_s=remaining))
        if not res.has_solution:
            if rank == 1:
                status = res.status
            break
        if rank == 1:
            status, gap, bound = res.status, res.gap, res.bound
        chosen = next(i for i, v in enumerate(varmap.pick) if res.values[v] == 1)
        ranked.append(_verified(problem, chosen, res, varmap, catalog, spec, rank, timer))
        excluded.append(problem.rows[chosen].group)

    ranked = explain_ranked(ranked, spec, stock)
    text = "" if ranked else diagnose(problem, timer, catalog, spec, backend, limits, status)
    sens = sensitivity(problem, ranked, catalog, spec, backend, limits) if ranked else ""
    return OptimizeResult(
        status=str(status), designs=tuple(ranked),
        pareto=pareto_front(problem.costed),
        diagnosis=text, solve_time_s=time.perf_counter() - start, gap=gap,
        backend=backend.name, candidates_evaluated=timer.evaluations,
        bound_cents=None if bound is None else math.floor(bound), sensitivity=sens)


def _verified(problem: Problem, chosen: int, res: SolveResult, vm: VarMap, catalog: Catalog,
              spec: OptimizeSpec, rank: int, timer: Timer) -> RankedDesign:
    """Decode the chosen design, rebuild its BOM, and refuse anything unverified."""
    assert res.values is not None
    cand = problem.costed[chosen].candidate
    split: dict[LinkClass, list[tuple[LinkOption, int]]] = {}
    for (cls, j), var in vm.links.items():
        if res.values[var]:
            split.setdefault(cls, []).append((problem.options[cls][j], res.values[var]))
    link_choice: dict[str, list[tuple[LinkOption, int]]] = {}
    for need in cand.plan.links:
        cls = LinkClass(need.length_m, need.speed_gbps, need.fabric)
        left, picks = need.count, []
        pool = split.get(cls, [])
        while left:
            option, n = pool[0]
            take = min(n, left)
            picks.append((option, take))
            left -= take
            pool[0] = (option, n - take)
            if pool[0][1] == 0:
                pool.pop(0)
        link_choice[need.group] = picks
    bom = build_bom(cand.design, catalog, link_choice)
    violations = check_bom(cand.design, bom, catalog)
    if violations:
        msg = f"rank {rank} failed verification: " + "; ".join(v.message for v in violations)
        raise SolverFailed(msg)
    again = timer.reestimate(cand.design, cand.plan)
    if again is None or abs(confident_hours(again, spec.confidence) - cand.time_hours) > 1e-9:
        msg = f"rank {rank}: re-estimating the built design does not reproduce its time"
        raise SolverFailed(msg)
    if bom.capex_cents != cost_of(res, vm):
        msg = (f"rank {rank}: BOM capex {bom.capex_cents} cents differs from the MIP's "
               f"{cost_of(res, vm)} cents")
        raise SolverFailed(msg)
    return RankedDesign(
        rank=rank, design=cand.design, bom=bom, estimate=cand.estimate,
        time_hours=confident_hours(cand.estimate, spec.confidence),
        cost=split_cost(bom), binding=(), explanation="",
        budget_slack_cents=None, time_slack_hours=None,
        gpus=cand.gpus)


def split_cost(bom: BillOfMaterials) -> CostSplit:
    by: dict[str, int] = defaultdict(int)
    for line in bom.lines:
        by[line.category] += line.extended_price_cents
    return CostSplit(by["server"], by["nic"], by["switch"], by["cable"],
                     by["transceiver"] + by["fiber"])
