"""The optimizer's entry point: search candidates, solve the MIP K times, verify, explain."""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from optimizer.catalog.model import Catalog
from optimizer.cost.tco import breakdown_of
from optimizer.errors import SolverFailed
from optimizer.optimize.backends import Limits, SolveResult, SolveStatus, get_backend
from optimizer.optimize.baseline import RULE_TIME_LIMIT, baseline_line
from optimizer.optimize.candidates import (
    EstimateCache,
    SearchSpace,
    confident_hours,
    with_catalog_vendors,
)
from optimizer.optimize.diagnose import diagnose
from optimizer.optimize.dominance import prune_dominated
from optimizer.optimize.explain import (
    NOT_COMPUTED,
    Binding,
    binding_constraints,
    explain_ranked,
    pareto_front,
    sensitivity,
)
from optimizer.optimize.facility import facility_figures, facility_layout
from optimizer.optimize.formulation import LinkClass, VarMap, stock_limits
from optimizer.optimize.portfolio import make_timer, with_workload_times  # issue 17 (portfolio)
from optimizer.optimize.problem import (
    MipInstance,
    RowBuilder,
    bounds_of,
    build_problem,
    chosen_row,
    cost_of,
    solve_problem,
    spec_tco_prices,
)
from optimizer.optimize.request import Objective, OptimizeSpec
from optimizer.optimize.result import CostSplit, OptimizeResult, RankedDesign
from optimizer.optimize.search import Clock, search
from optimizer.optimize.tco import pareto_with_tco, tco_comparison, with_tco_sentences
from optimizer.performance.estimator import (
    COMBINED_1F1B_CAUTION,
    SECONDS_PER_HOUR,
    SMALL_MOE_NOTE_PREFIX,
)
from optimizer.performance.plan import PartialPlan
from optimizer.performance.profile import NOTE_PREFIX
from optimizer.registry.objectives import Measure
from optimizer.topology.bom import BillOfMaterials, BomSignature, bom_signature, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.layout import LinkOption, modules_for
from optimizer.topology.plan import PhysicalPlan


def optimize(
    catalog: Catalog,
    spec: OptimizeSpec,
    *,
    fixed: PartialPlan | None = None,
    stop: threading.Event | None = None,
    progress: Callable[[dict[str, object]], None] | None = None,
    explain: bool = True,
    estimates: EstimateCache | None = None,
    vendors_spelled: bool = False,
) -> OptimizeResult:
    """Ranked, verified designs for ``spec`` over ``catalog`` (see docs/optimizer.md).

    ``spec.time_limit_s`` bounds the whole request: when it runs out (or ``stop`` is set) the
    search stops, the designs found so far are ranked with status FEASIBLE, and the gap to the
    best unexplored bound is reported. ``progress`` receives dicts with ``phase``,
    ``candidates_evaluated``, ``best_capex_usd``, ``best_tco_usd``, ``bound_usd`` (on the
    objective's cost measure: capex, or TCO under min-tco), ``designs_found``, ``elapsed_s``.

    ``explain=False`` ranks only: no binding, sensitivity or diagnosis (the re-solves those
    run use it, sharing the request's ``estimates``). ``vendors_spelled``: the vendor filters
    are already checked and spelled as the catalog spells them (a re-solve on part of the
    request's catalog, which may lack a vendor the request names).
    """
    start = time.perf_counter()
    clock = Clock(start + spec.time_limit_s, stop, progress, start)
    if not vendors_spelled:
        spec = with_catalog_vendors(catalog, spec)
    given = catalog  # the explanations re-solve from the catalog as given
    filtered = any(_filters_key(spec))  # else every part may dominate (shared with the rule)
    catalog = prune_dominated(
        catalog,
        top_k=spec.top_k,
        usable=SearchSpace.allowed_by(spec) if filtered else None,
        links_usable=SearchSpace.allowed_by(spec) if filtered else None,
        usable_key=_filters_key(spec),
    )
    layout = facility_layout(spec)  # issue 17 (facility): the hall's limits
    space = SearchSpace(catalog, spec)
    timer = make_timer(spec, {s.sku: s for s in space.servers}, fixed)  # issue 17 (portfolio)
    if estimates is not None:
        timer.share(estimates)
    stock = stock_limits(catalog)
    limits = Limits(time_limit_s=spec.time_limit_s, seed=spec.seed, stop=stop)
    backend = get_backend(spec.backend)
    builder = RowBuilder(catalog, spec)

    bounds = bounds_of(spec)

    def exact_cost(plan: PhysicalPlan) -> int | None:
        remaining = replace(limits, time_limit_s=clock.remaining())
        return builder.exact_cost(plan, backend, remaining, bounds)

    outcome = search(space, timer, layout, stock, exact_cost, clock)
    evaluated = build_problem(outcome.candidates, builder)  # the Pareto front's points
    rankable = outcome.rankable(catalog)
    problem = evaluated if rankable is outcome.candidates else build_problem(rankable, builder)

    ranked: list[RankedDesign] = []
    status, gap, bound = SolveStatus.INFEASIBLE, 0.0, None
    excluded: list[int] = []  # groups ranked, or whose best is the same BOM as a ranked design
    seen: set[BomSignature] = set()
    proven, more_may_exist = 0, False
    while len(ranked) < spec.top_k:
        if not _rows_left(problem, excluded):
            break
        if ranked and clock.expired():
            more_may_exist = True
            break
        # A search cut short still gets a moment to rank what it found.
        remaining = clock.remaining(floor=min(1.0, 0.1 * spec.time_limit_s))
        res, varmap = solve_problem(
            problem,
            catalog,
            spec,
            bounds,
            excluded,
            backend,
            replace(limits, time_limit_s=remaining),
        )
        if not res.has_solution:
            if not ranked:
                status = res.status
            # Only a proof of infeasibility says no further design exists.
            more_may_exist = res.status is not SolveStatus.INFEASIBLE
            break
        chosen = chosen_row(res, varmap)
        design = _verified(problem, chosen, res, varmap, catalog, spec, len(ranked) + 1, timer)
        signature = bom_signature(design.bom)
        excluded.append(problem.rows[chosen].group)
        if signature in seen:
            continue  # the group's best is hardware already ranked: not a distinct design
        seen.add(signature)
        rank_status, rank_gap, rank_bound = _rank_one_status(
            res, outcome.open_bound, spec, varmap.tco_units_per_cent
        )
        if not ranked:
            status, gap, bound = rank_status, rank_gap, rank_bound
        if proven == len(ranked) and rank_status is SolveStatus.OPTIMAL:
            proven += 1
        ranked.append(design)
        clock.report(
            {
                "phase": "solve",
                "candidates_evaluated": timer.evaluations,
                "best_capex_usd": ranked[0].bom.capex_cents / 100,
                # issue 17 (tco): rank 1's lifetime cost; bound_usd is on TCO under min-tco
                "best_tco_usd": None if ranked[0].tco is None else ranked[0].tco.tco_cents / 100,
                "bound_usd": 0.0 if bound is None else bound / 100,
                "designs_found": len(ranked),
            },
            force=True,
        )
    # Unexplored keys may hold further designs: fewer than K is then no proof that none exist.
    more_may_exist = more_may_exist or outcome.open_bound is not None
    cut_short = bool(ranked) and len(ranked) < spec.top_k and more_may_exist

    if not ranked and outcome.open_bound is not None and status is SolveStatus.INFEASIBLE:
        status = SolveStatus.TIME_LIMIT  # nothing proves infeasibility: the clock ran out

    failed: list[str] = []  # explanation re-solves whose rank 1 failed verification

    def resolve(cat: Catalog, sp: OptimizeSpec) -> OptimizeResult | None:
        """Rank 1 of a variant of this request, within what is left of its clock; None when
        the clock is out or the variant's rank 1 fails verification (``failed``): the designs
        above are verified, so a claim that cannot be checked is not computed, never the
        whole answer lost."""
        if clock.expired():
            return None
        sp = replace(sp, top_k=1, time_limit_s=clock.remaining())
        try:
            return optimize(
                cat,
                sp,
                fixed=fixed,
                stop=stop,
                explain=False,
                estimates=timer,
                vendors_spelled=True,
            )
        except SolverFailed as exc:
            failed.append(str(exc))
            return None

    binding: Binding | None = None
    if ranked and explain:
        binding = binding_constraints(ranked[0], given, spec, resolve)
    ranked = explain_ranked(ranked, spec, stock, binding)
    text = ""
    if not ranked and explain:
        text = diagnose(
            given,
            spec,
            status,
            clock.expired(),
            resolve,
            timer.refusal,
            timer.too_heavy,
            timer.server_refusal,
        )
    if not ranked or not explain:
        sens = ""
    elif clock.expired():
        sens = NOT_COMPUTED
    else:
        sens = sensitivity(ranked, given, spec, resolve)
    if not ranked or not explain:
        rule = ""
    elif clock.expired():  # the rule of thumb sizes its own clusters: a search, not a reply
        rule = RULE_TIME_LIMIT
    else:
        rule = baseline_line(ranked[0], _for_baseline(given), spec, clock.expired)
    warnings: tuple[str, ...] = (
        ()
        if outcome.open_bound is None
        else (
            f"the time limit ended the search after {outcome.keys_evaluated} of "
            f"{outcome.keys_total} structural choices; "
            + ("the designs are the best found" if ranked else "it found no design"),
        )
    )
    if cut_short:
        status = SolveStatus.TIME_LIMIT
        warnings = (*warnings, _cut_short_warning(len(ranked), proven, spec.top_k))
    if (missed := _target_missed(ranked, spec)) is not None:
        warnings = (*warnings, missed)
    warnings = (*warnings, *_estimate_caveats(ranked))
    # issue 17 (tco): the lifetime-cost sentence, and why min-tco's rank 1 is not the cheapest
    comparison = ""
    if ranked and explain and spec.objective is Objective.MIN_TCO:
        comparison = tco_comparison(ranked[0], given, spec, resolve)
    ranked = with_tco_sentences(ranked, spec, comparison)
    if failed:  # their claims read "not computed": say why, and what failed
        why = _failed_claim(clock.expired())
        ranked = [replace(d, explanation=d.explanation.replace(NOT_COMPUTED, why)) for d in ranked]
        text, sens, rule, comparison = (
            s.replace(NOT_COMPUTED, why) for s in (text, sens, rule, comparison)
        )
        warnings = (
            *warnings,
            f"{len(failed)} explanation re-solve(s) failed verification (the variant's rank "
            f"1, not the designs above, which are verified); first: {failed[0]}",
        )
    return OptimizeResult(
        status=str(status),
        designs=tuple(ranked),
        pareto=pareto_with_tco(pareto_front(evaluated.costed), evaluated.costed),
        diagnosis=text,
        solve_time_s=time.perf_counter() - start,
        gap=gap,
        backend=backend.name,
        candidates_evaluated=timer.evaluations,
        bound_cents=None if bound is None else math.floor(bound),
        sensitivity=sens,
        baseline=rule,
        warnings=warnings,
        cost_model=spec.cost_model,
        tco_comparison=comparison,
    )


def _failed_claim(expired: bool) -> str:
    """What a claim reads whose re-solve returned nothing once some re-solve failed
    verification (NOT_COMPUTED says the time limit): either cause when the clock ran out
    too."""
    cause = "a re-solve failed verification (see warnings)"
    return f"not computed: {'time limit, or ' if expired else ''}{cause}"


def _rows_left(problem: MipInstance, excluded: list[int]) -> bool:
    """Some candidate is in a group not yet ranked (or skipped as a twin)."""
    groups = set(excluded)
    return any(r.group not in groups for r in problem.rows)


def _target_missed(ranked: list[RankedDesign], spec: OptimizeSpec) -> str | None:
    """Under min-time (one workload), that rank 1 misses the request's target: min-time
    ranks by time within the budget and does not refuse a design above the target
    (docs/optimizer.md), so the fastest affordable design is the answer, and this says the
    budget cannot buy the target."""
    target = spec.constraints.target_training_hours
    if not ranked or target is None or spec.portfolio:
        return None
    if spec.objective.kind.primary is not Measure.TIME or ranked[0].time_hours <= target:
        return None
    return (
        f"no design within the budget and limits meets the {target:,.4g} h target: rank 1, "
        f"the fastest, takes {ranked[0].time_hours:,.0f} h"
    )


def _estimate_caveats(ranked: list[RankedDesign]) -> list[str]:
    """What the designs' times rest on that their table does not show, once per note with the
    ranks it concerns (the table shows no estimate's notes): what of the request's calibration
    profile they do not use or stretch (a profile fitted on H100 times a B200 design at the
    built-in kernel efficiency), how published runs of a small mixture of experts compare
    with the model's time (estimator.small_moe_note), that a Combined 1F1B saving is
    unconfirmed (estimator.COMBINED_1F1B_CAUTION), and what expert load skew costs their steps
    (_skew_caveat)."""
    ranks: dict[str, list[int]] = defaultdict(list)
    for d in ranked:
        for note in d.estimate.notes:
            if note.startswith((NOTE_PREFIX, SMALL_MOE_NOTE_PREFIX, COMBINED_1F1B_CAUTION)):
                ranks[note].append(d.rank)
    caveats = [f"{_ranks_text(r)}: {note}" for note, r in ranks.items()]
    skew = _skew_caveat(ranked)
    return caveats if skew is None else [*caveats, skew]


def _ranks_text(ranks: list[int]) -> str:
    return f"rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))}"


def _skew_caveat(ranked: list[RankedDesign]) -> str | None:
    """Once for all ranks whose plans' expert ranks wait for a busier one, the share of their
    steps the skew costs (Estimate.expert_skew_s, the same plan re-timed with balanced
    routing; estimator.skew_note says it per design): an assumption that can decide which
    design ranks first, so never left to the per-design notes alone."""
    skewed = [d for d in ranked if d.estimate.expert_skew_s > 0.0]
    if not skewed:
        return None
    shares = [d.estimate.expert_skew_s / d.estimate.step_time_s for d in skewed]
    low, high = min(shares), max(shares)
    share = f"{low:.1%}" if f"{low:.1%}" == f"{high:.1%}" else f"{low:.1%}-{high:.1%}"
    return (
        f"{_ranks_text([d.rank for d in skewed])}: the busiest expert rank, at the "
        f"request's workload.expert_load_imbalance, costs {share} of the step over balanced "
        "routing; a run whose routing is balanced (or force-balanced, as NVIDIA's benchmarks "
        "are) states 1"
    )


def _cut_short_warning(found: int, proven: int, top_k: int) -> str:
    """Say how much of the top-K the clock let through, and how much of it is proven."""
    text = f"{found} of {top_k} designs ranked before the time limit"
    if proven < found:
        text += f" ({proven} proven best)"
    return text + "; more designs may exist: raise solver.time_limit_s"


def _rank_one_status(
    res: SolveResult, open_bound: float | None, spec: OptimizeSpec, tco_units: int = 1
) -> tuple[SolveStatus, float, float | None]:
    """Status, relative gap and bound (cents) on the objective's cost measure of one rank,
    counting unexplored keys: capex under min-cost, TCO under min-tco, none under min-time."""
    if open_bound is None:
        bound = res.bound
        if spec.objective.kind.primary is Measure.TCO:  # issue 17 (tco): milli-cents to cents
            bound = None if bound is None else bound / tco_units
        elif spec.objective.kind.primary is not Measure.COST:
            bound = None
        return res.status, res.gap, bound
    # The search stopped early: rank 1 is proven only if no unexplored key could beat it.
    primary = float(res.objective or 0)
    res_bound = res.bound
    if spec.objective.kind.primary is Measure.TCO:  # issue 17 (tco): the MIP counts milli-cents
        primary /= tco_units
        res_bound = None if res_bound is None else res_bound / tco_units
    if spec.objective.kind.primary in (Measure.COST, Measure.TCO):
        bound = min(open_bound, res_bound if res_bound is not None else primary)
        gap = max(0.0, primary - bound) / max(1.0, primary)
    else:
        best_hours = primary / SECONDS_PER_HOUR
        gap = max(0.0, best_hours - open_bound) / max(1e-9, best_hours)
        bound = None
    status = res.status if gap == 0.0 else SolveStatus.FEASIBLE
    return status, gap, bound


def _spare_parts(
    plan: PhysicalPlan,
    split: Mapping[LinkClass, Sequence[tuple[LinkOption, int]]],
    res: SolveResult,
    vm: VarMap,
) -> dict[str, dict[str, int]]:
    """Per link group, the modules the MIP bought of each caged SKU beyond its ports (the
    per-switch spare, ``layout.whole_modules``): the BOM buys them where the MIP did."""
    assert res.values is not None
    out: dict[str, dict[str, int]] = {}
    for need in plan.links:
        cls = LinkClass.of(need)
        ports: dict[str, int] = defaultdict(int)
        per_module: dict[str, int] = {}
        caged: set[str] = set()
        for option, n in split.get(cls, ()):
            twins = dict(option.module_ports)
            caged.update(option.caged)
            for sku, per_link in option.parts:
                if sku in twins:
                    ports[sku] += n * per_link
                    per_module[sku] = twins[sku]
        extra = {
            sku: res.values[var] - modules_for(ports[sku], per_module[sku])
            for sku in sorted(caged)
            if ports.get(sku) and (var := vm.modules.get((cls, sku))) is not None
        }
        if any(extra.values()):
            out[need.group] = {sku: n for sku, n in extra.items() if n}
    return out


def _verified(
    problem: MipInstance,
    chosen: int,
    res: SolveResult,
    vm: VarMap,
    catalog: Catalog,
    spec: OptimizeSpec,
    rank: int,
    timer: EstimateCache,
) -> RankedDesign:
    """Decode the chosen design, rebuild its BOM, and refuse anything unverified."""
    assert res.values is not None
    cand = problem.costed[chosen].candidate
    split: dict[LinkClass, list[tuple[LinkOption, int]]] = {}
    for (cls, j), var in vm.links.items():
        if res.values[var]:
            split.setdefault(cls, []).append((problem.options[cls][j], res.values[var]))
    mix = {cls: list(pool) for cls, pool in split.items()}  # split is used up below
    link_choice: dict[str, list[tuple[LinkOption, int]]] = {}
    for need in cand.plan.links:
        cls = LinkClass.of(need)
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
    bom = build_bom(cand.design, catalog, link_choice, _spare_parts(cand.plan, mix, res, vm))
    violations = check_bom(  # issue 14 (sharp): the time's SHARP claim is checked too
        cand.design, bom, catalog, in_network_reduction=cand.key.in_network_reduction
    )
    if violations:
        msg = f"rank {rank} failed verification: " + "; ".join(v.message for v in violations)
        raise SolverFailed(msg)
    again = timer.reestimate(cand.design, cand.plan)
    if again is None or abs(confident_hours(again, spec.confidence) - cand.time_hours) > 1e-9:
        msg = f"rank {rank}: re-estimating the built design does not reproduce its time"
        raise SolverFailed(msg)
    if bom.capex_cents != cost_of(res, vm):
        msg = (
            f"rank {rank}: BOM capex {bom.capex_cents} cents differs from the MIP's "
            f"{cost_of(res, vm)} cents"
        )
        raise SolverFailed(msg)
    ranked = RankedDesign(
        rank=rank,
        design=cand.design,
        bom=bom,
        estimate=cand.estimate,
        time_hours=confident_hours(cand.estimate, spec.confidence),
        cost=split_cost(bom),
        binding=(),
        explanation="",
        budget_slack_cents=None,
        time_slack_hours=None,
        gpus=cand.gpus,
        oversubscription=cand.plan.oversubscription,
        tco=breakdown_of(bom, spec_tco_prices(catalog, spec)),  # issue 17 (tco)
        **vars(facility_figures(cand.plan, catalog)),  # issue 17 (facility)
    )
    return with_workload_times(ranked, timer, cand.plan)  # issue 17 (portfolio)


def split_cost(bom: BillOfMaterials) -> CostSplit:
    by: dict[str, int] = defaultdict(int)
    for line in bom.lines:
        by[line.category] += line.extended_price_cents
    return CostSplit(
        by["server"], by["nic"], by["switch"], by["cable"], by["transceiver"] + by["fiber"]
    )


def _filters_key(spec: OptimizeSpec) -> tuple[object, ...]:
    """What the request's part filters read (equal keys, equal filters; all empty: none)."""
    c = spec.constraints
    return (spec.allowed_vendors, spec.excluded_vendors, c.max_lead_time_days, c.cooling)


def _for_baseline(catalog: Catalog) -> Catalog:
    """The catalog the rule of thumb is applied to: without parts another beats on every count
    (optimizer.optimize.dominance). The rule buys the cheapest server's design and, in its
    order, the cheapest NIC and switch that serve; a dominated part is never cheaper, so it
    never changes the rule's pick, and the rule's walk over part choices no longer grows with
    every reseller's copy of a part. The rule knows no vendor or lead-time filter, so every
    part may dominate."""
    return prune_dominated(catalog, top_k=1)
