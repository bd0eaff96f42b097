"""Why a design ranks where it does, what binds, and why nothing fits when nothing does.

Every claim is re-solved, not guessed: "binding" names the stated constraints whose removal
changes rank 1, and the sensitivity line states a price cut that, applied to the catalog and
re-solved, changes rank 1 while one percent less does not (docs/optimizer.md, Explanations).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from optimizer.catalog.model import Availability, Catalog
from optimizer.optimize.backends import SolveStatus
from optimizer.optimize.candidates import HOST_LINK_NOTE, IN_NETWORK_NOTE, part_allowed
from optimizer.optimize.facility import facility_at_limit, facility_relaxations
from optimizer.optimize.formulation import stock_limits
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult, ParetoEntry, RankedDesign
from optimizer.performance.estimator import SECONDS_PER_HOUR
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.objectives import Measure
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.bom import bom_signature
from optimizer.topology.compat import switch_fits_fabric
from optimizer.topology.design import Design

if TYPE_CHECKING:
    from optimizer.optimize.candidates import Costed

# A design is "at its limit" of a constraint when it uses all but this fraction of it.
BINDING_SLACK = 0.02
# What a re-solve answers with: optimize's rank 1 alone, without explanations of its own;
# None once the request's clock has run out.
Resolver = Callable[[Catalog, OptimizeSpec], "OptimizeResult | None"]
# Statuses whose rank 1 (or its absence) is proven.
PROVEN = (str(SolveStatus.OPTIMAL), str(SolveStatus.INFEASIBLE))
NOT_COMPUTED = "not computed: time limit"
NOT_ASKED = "not computed: ranking only"  # issue 19 (batch): the request skipped re-solves
# min_time needs a budget: "without the budget" re-solves with the largest a request may state
# (optimizer.optimize.convert.MAX_BUDGET_CENTS).
UNLIMITED_BUDGET_CENTS = 10**14


def fabric_label(fabric: str) -> str:
    return FABRICS.get(fabric).label


def topology_label(topology: str) -> str:
    """The family's name in prose ("rail-optimized fat-tree")."""
    return TOPOLOGIES.get(topology).label


def usd(cents: int | float) -> str:
    return f"${cents / 100:,.0f}"


def describe(d: RankedDesign) -> str:
    return describe_design(d.design, d.gpus, d.oversubscription)


def describe_design(design: Design, gpus: int, oversubscription: float | None = None) -> str:
    """A design in one phrase: nodes, server, GPUs, fabric, topology (with its down:up ratio
    as built, ``oversubscription``, where given), NICs per node."""
    ratio = design.oversubscription if oversubscription is None else oversubscription
    topology = TOPOLOGIES.get(design.topology).display(ratio, short=False)
    if not TOPOLOGIES.get(design.topology).scale_out:  # no fabric, no NIC bought
        return f"{design.nodes:,} x {design.server_sku} ({gpus:,} GPUs), {topology}"
    return (
        f"{design.nodes:,} x {design.server_sku} ({gpus:,} GPUs), "
        f"{fabric_label(design.fabric)} {topology}, "
        f"{design.nics_per_node} x {design.nic_sku} per node"
    )


def rank_one_changes(best: RankedDesign, again: OptimizeResult | None) -> bool | None:
    """Whether a re-solve's rank 1 differs from ``best``; None when the re-solve proves
    nothing (clock out, or stopped before optimality)."""
    if again is None or again.status not in PROVEN:
        return None
    return not again.designs or bom_signature(again.designs[0].bom) != bom_signature(best.bom)


def faster_than(best: RankedDesign, relaxed: OptimizeSpec) -> OptimizeSpec:
    """min-time without its budget, as the question the binding test asks of it: is any
    design faster than rank 1 at any price? Rank 1 changes exactly when one ranks faster,
    ``ceil`` of its training seconds below rank 1's (search.py ranks by whole seconds, then
    capex; a design as fast and cheaper would have been within the budget). The cheapest such
    design answers it, a min-cost search that stops at the first cluster size meeting the
    time, where the fastest design at any price searches up to the largest clusters (8.3 of
    a 10.5 s request, roce-spectrum Llama 3 70B on $20M)."""
    seconds = math.ceil(best.time_hours * SECONDS_PER_HOUR)
    faster = replace(
        relaxed.constraints,
        budget_cents=None,
        target_training_hours=max(seconds - 1, 1) / SECONDS_PER_HOUR,
    )
    return replace(relaxed, objective=Objective.MIN_COST, constraints=faster)


def faster_exists(again: OptimizeResult | None) -> bool | None:
    """Whether ``faster_than``'s re-solve found a design; None when it proves nothing."""
    if again is None or again.status not in PROVEN:
        return None
    return bool(again.designs)


def without_stock(catalog: Catalog) -> Catalog:
    """The catalog with every stock limit lifted (lead times and prices kept)."""

    def lift(avail: Availability) -> Availability:
        return replace(avail, stock_units=None)

    return replace(
        catalog,
        servers=tuple(replace(r, availability=lift(r.availability)) for r in catalog.servers),
        nics=tuple(replace(r, availability=lift(r.availability)) for r in catalog.nics),
        switches=tuple(replace(r, availability=lift(r.availability)) for r in catalog.switches),
        links=tuple(replace(r, availability=lift(r.availability)) for r in catalog.links),
    )


def relaxations(catalog: Catalog, spec: OptimizeSpec) -> list[tuple[str, Catalog, OptimizeSpec]]:
    """Each stated constraint by its binding name, with the request that leaves it out."""
    c = spec.constraints
    out: list[tuple[str, Catalog, OptimizeSpec]] = []

    def drop(name: str, without: Constraints) -> None:
        out.append((name, catalog, replace(spec, constraints=without)))

    if c.budget_cents is not None:
        # min_time needs a budget: leaving it out means the largest budget a request may state.
        drop("budget", replace(c, budget_cents=UNLIMITED_BUDGET_CENTS if _min_time(spec) else None))
    if c.target_training_hours is not None:
        drop("time", replace(c, target_training_hours=None))
    if c.max_power_kw is not None:
        drop("power", replace(c, max_power_kw=None))
    if c.max_racks is not None:
        drop("racks", replace(c, max_racks=None))
    if stock_limits(catalog):
        out.append(("stock", without_stock(catalog), spec))
    if c.max_lead_time_days is not None:
        drop("lead_time", replace(c, max_lead_time_days=None))
    if c.min_gpus is not None:
        drop("min_gpus", replace(c, min_gpus=None))
    if c.max_gpus is not None:
        drop("max_gpus", replace(c, max_gpus=None))
    if c.min_nic_gbps_per_gpu is not None:
        drop("min_nic_gbps_per_gpu", replace(c, min_nic_gbps_per_gpu=None))
    if spec.allowed_vendors or spec.excluded_vendors:
        out.append(("vendors", catalog, replace(spec, allowed_vendors=(), excluded_vendors=())))
    out.extend((name, catalog, sp) for name, sp in facility_relaxations(spec))  # issue 17
    return out


@dataclass(frozen=True)
class Binding:
    """Rank 1's binding constraints, found by re-solving without each stated one."""

    names: tuple[str, ...]  # removing each changes rank 1
    unknown: tuple[str, ...] = ()  # not computed: the clock ran out (or a re-solve was cut short)
    stated: int = 0  # how many constraints were re-solved without

    def sentence(self) -> str:
        parts = []
        if self.names:
            parts.append(f"Binding (leaving it out changes rank 1): {', '.join(self.names)}.")
        if self.unknown:
            parts.append(f"Binding for {', '.join(self.unknown)}: {NOT_COMPUTED}.")
        if not parts:
            parts.append(
                "No stated constraint is binding: leaving out each one leaves rank 1 unchanged."
                if self.stated
                else "No constraint was stated."
            )
        return " ".join(parts)


def binding_constraints(
    best: RankedDesign, catalog: Catalog, spec: OptimizeSpec, resolve: Resolver
) -> Binding:
    """Re-solve without each stated constraint; binding are those whose removal changes
    rank 1's design (a cap at 98 % use that decides nothing is not binding, and a cap that
    excluded a better design is, however far the answer sits from it)."""
    names: list[str] = []
    unknown: list[str] = []
    stated = relaxations(catalog, spec)
    for name, relaxed_catalog, relaxed in stated:
        if name == "budget" and _min_time(spec):
            changed = faster_exists(resolve(relaxed_catalog, faster_than(best, relaxed)))
        else:
            changed = rank_one_changes(best, resolve(relaxed_catalog, relaxed))
        if changed is None:
            unknown.append(name)
        elif changed:
            names.append(name)
    return Binding(tuple(names), tuple(unknown), len(stated))


def at_limit(d: RankedDesign, spec: OptimizeSpec, stock: dict[str, int]) -> list[str]:
    """The constraints this design uses (all but 2 % of): a fact about the design, not a
    claim about what decides the answer."""
    c = spec.constraints
    out: list[str] = []
    budget, target = c.budget_cents, c.target_training_hours
    if budget is not None and budget - d.bom.capex_cents <= BINDING_SLACK * budget:
        out.append("budget")
    # a min-time design over the target (it does not refuse one) is not at it but past it
    if target is not None and 0 <= target - d.time_hours <= BINDING_SLACK * target:
        out.append("time")
    if c.max_power_kw is not None and d.bom.power_kw >= (1 - BINDING_SLACK) * c.max_power_kw:
        out.append("power")
    if c.max_racks is not None and d.bom.racks >= c.max_racks:
        out.append("racks")
    if _at_stock_limit(d, stock):
        out.append("stock")
    out.extend(facility_at_limit(d, spec, BINDING_SLACK))  # issue 17 (facility)
    return out


def explain_ranked(
    ranked: list[RankedDesign],
    spec: OptimizeSpec,
    stock: dict[str, int],
    binding: Binding | None,
) -> list[RankedDesign]:
    """Fill in binding constraints, slack and a one-paragraph explanation for each rank.

    Rank 1's ``binding`` is ``binding`` (re-solved; None: not computed); a lower rank's is the
    constraints it uses up, which is all that can be said of a design that is not the answer.
    """
    c = spec.constraints
    out = []
    for d in ranked:
        budget, target = c.budget_cents, c.target_training_hours
        if d.rank == 1:
            names = () if binding is None else binding.names
            not_computed = NOT_ASKED if spec.ranking_only else NOT_COMPUTED
            tail = (
                f"Binding constraints: {not_computed}." if binding is None else binding.sentence()
            )
        else:
            used = at_limit(d, spec, stock)
            names = tuple(used)
            tail = f"At its limit: {', '.join(used)}." if used else ""
        out.append(
            replace(
                d,
                binding=names,
                budget_slack_cents=None if budget is None else budget - d.bom.capex_cents,
                time_slack_hours=None if target is None else target - d.time_hours,
                explanation=(_sentence(d, ranked[0], spec) + tail).strip(),
            )
        )
    return out


def _min_time(spec: OptimizeSpec) -> bool:
    return spec.objective.kind.primary is Measure.TIME


def _at_stock_limit(d: RankedDesign, stock: dict[str, int]) -> bool:
    """Some SKU of the BOM uses its whole stock."""
    used: dict[str, int] = {}
    for line in d.bom.lines:
        used[line.sku] = used.get(line.sku, 0) + line.quantity
    return any(stock.get(sku) == qty for sku, qty in used.items())


def _sentence(d: RankedDesign, best: RankedDesign, spec: OptimizeSpec) -> str:
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
    if IN_NETWORK_NOTE in d.estimate.notes:  # issue 14 (sharp)
        timing += "Its switches reduce the data-parallel all-reduce in the network (SHARP). "
    for note in d.estimate.notes:  # issue 14 (host link)
        if note.startswith(HOST_LINK_NOTE):
            sentence = note.removeprefix(HOST_LINK_NOTE)
            timing += f"{sentence[0].upper()}{sentence[1:]}. "
    if d.rank == 1 or kind.primary is Measure.TCO:  # issue 17 (tco): its own sentence
        rel = ""
    elif kind.primary is Measure.COST:
        extra = d.bom.capex_cents - best.bom.capex_cents
        rel = f"Costs {usd(extra)} ({extra / best.bom.capex_cents:+.1%}) more than rank 1. "
    else:
        extra = d.bom.capex_cents - best.bom.capex_cents
        slower = d.time_hours - best.time_hours
        less = f"costs {usd(-extra)} ({-extra / best.bom.capex_cents:.1%}) less"
        if slower >= 0.05:  # and, when cheaper, what the buyer saves by waiting
            saves = f" and {less}" if extra < 0 else ""
            rel = f"Takes {slower:,.1f} h longer than rank 1{saves}. "
        elif extra >= 0:
            rel = f"Trains as fast as rank 1 and costs {usd(extra)} more. "
        else:  # a hair slower (ranked below) yet cheaper: what a buyer may well prefer
            rel = f"Trains as fast as rank 1 (within {slower:.2f} h) and {less}. "
    return head + money + timing + rel


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
            front.append(
                ParetoEntry(cents, hours, cand.gpus, cand.design, cand.plan.oversubscription)
            )
            best_time = hours
    return tuple(front)


def with_switch_cut(catalog: Catalog, fabric: str, cut_pct: int) -> Catalog:
    """The catalog with every switch that serves ``fabric`` ``cut_pct`` % cheaper, at list
    and at every volume break (rounded down to the cent, so the cut is at least that)."""
    skus = {w.sku for w in catalog.switches if switch_fits_fabric(w, fabric)}

    def cut(cents: int) -> int:
        return cents * (100 - cut_pct) // 100

    return replace(
        catalog,
        switches=tuple(
            replace(w, price_cents=cut(w.price_cents)) if w.sku in skus else w
            for w in catalog.switches
        ),
        price_breaks=tuple(
            replace(pb, unit_price_cents=cut(pb.unit_price_cents)) if pb.sku in skus else pb
            for pb in catalog.price_breaks
        ),
    )


# The deepest switch price cut a sensitivity line considers: a 100 % cut (free switches) is
# not a price, so "changes rank 1 only at 100 %" is said as "no cut changes rank 1".
MAX_CUT_PCT = 99


@dataclass(frozen=True)
class Cut:
    """The smallest whole-percent switch price cut that changes rank 1, both sides checked."""

    pct: int
    rank_one: RankedDesign  # rank 1 once the cut applies


def smallest_cut(
    best: RankedDesign,
    catalog: Catalog,
    spec: OptimizeSpec,
    fabric: str,
    guess_pct: int,
    resolve: Resolver,
) -> Cut | None:
    """The smallest whole percent whose cut on ``fabric``'s switches changes rank 1 when the
    whole request is re-solved: rank 1 changes at it and not one percent below. Starts at
    ``guess_pct`` (the rival's gap over its switch spend, rounded up) and bisects from there.

    Returns None when no cut up to ``MAX_CUT_PCT`` changes rank 1 (free switches are not a
    price a vendor quotes); raises ``_Unknown`` when a re-solve proves nothing."""
    seen: dict[int, OptimizeResult | None] = {0: None}

    def changes(pct: int) -> bool:
        if pct not in seen:
            again = resolve(with_switch_cut(catalog, fabric, pct), spec)
            if rank_one_changes(best, again) is None:
                raise _Unknown
            seen[pct] = again if rank_one_changes(best, again) else None
        return seen[pct] is not None

    lo, hi = 0, min(max(guess_pct, 1), MAX_CUT_PCT)  # invariant: no change at lo, change at hi
    if not changes(hi):
        lo, hi = hi, MAX_CUT_PCT
        if lo == hi or not changes(hi):
            return None
    probe = hi - 1  # the usual case: the guess is exact, so one percent less changes nothing
    while hi - lo > 1:
        if changes(probe):
            hi = probe
        else:
            lo = probe
        probe = (lo + hi) // 2
    again = seen[hi]
    assert again is not None
    return Cut(hi, again.designs[0])


def _rival_fabrics(best: RankedDesign, spec: OptimizeSpec) -> list[str]:
    """The fabrics a sensitivity line compares rank 1 with: the others the request allows,
    or all of them when rank 1 is one node without a scale-out fabric (its fabric is only
    the label the search came through)."""
    allowed = spec.allowed_fabrics or FABRICS.names()
    if not _has_fabric(best):
        return list(allowed)
    return [f for f in allowed if f != best.design.fabric]


def _has_fabric(best: RankedDesign) -> bool:
    return TOPOLOGIES.get(best.design.topology).scale_out


def _rival_spec(spec: OptimizeSpec, fabric: str) -> OptimizeSpec:
    """The request restricted to designs that buy ``fabric``: a node alone buys none, so it is
    no design of that fabric (infiniband-ndr's "RoCE's fastest design within the budget (1 x
    DGX-B200 (8 GPUs), single node without a scale-out fabric)", where no switch serves
    RoCE), and against a one-node rank 1 it would be rank 1 again under another label."""
    return replace(spec, allowed_fabrics=(fabric,), require_fabric=True)


class _Unknown(Exception):
    """A re-solve was cut short by the clock: the claim cannot be checked."""


def sensitivity(
    ranked: list[RankedDesign], catalog: Catalog, spec: OptimizeSpec, resolve: Resolver
) -> str:
    """Why rank 1's scale-up domain wins (issue 16, when the catalog offers rack-scale rows),
    then the price sensitivity of ``price_sensitivity``."""
    scale = scale_up_line(ranked[0], catalog, spec, resolve)
    return " ".join(
        part for part in (scale, price_sensitivity(ranked, catalog, spec, resolve)) if part
    )


def price_sensitivity(
    ranked: list[RankedDesign], catalog: Catalog, spec: OptimizeSpec, resolve: Resolver
) -> str:
    """For every other fabric the request allows, re-solved over the whole catalog: its best
    design, and the smallest cut in its switch prices (at the volume prices the BOM pays)
    that changes rank 1, checked by re-solving with the cut and with one percent less.
    Min-time says the same of its fastest rival designs, after the budget that buys a faster
    design (``time_sensitivity``)."""
    if spec.objective.kind.primary is Measure.TIME:
        return time_sensitivity(ranked[0], catalog, spec, resolve)
    if spec.objective.kind.primary is not Measure.COST:
        return ""
    best = ranked[0]
    fabrics = _rival_fabrics(best, spec)
    if not fabrics:
        return f"The request allows only {fabric_label(best.design.fabric)}."
    lines: list[str] = []
    cuts: list[tuple[int, str]] = []
    none_builds = True
    for fabric in fabrics:
        name = fabric_label(fabric)
        alone = resolve(catalog, _rival_spec(spec, fabric))
        if alone is None or alone.status not in PROVEN:
            lines.append(f"{name}: {NOT_COMPUTED}.")
            none_builds = False
            continue
        if not alone.designs:
            lines.append(f"No {name} design meets the constraints with this catalog.")
            continue
        none_builds = False
        line, cut = _rival_line(best, alone.designs[0], catalog, spec, fabric, resolve)
        lines.append(line)
        if cut is not None:
            cuts.append((cut.pct, name))
    if none_builds and not _has_fabric(best):
        return (
            "No design with a scale-out fabric meets the constraints with this catalog (each "
            "fabric re-solved); one node without a fabric is the only choice."
        )
    if none_builds:
        return (
            f"No other fabric meets the constraints with this catalog (each re-solved); "
            f"{fabric_label(best.design.fabric)} is the only choice."
        )
    if len(cuts) > 1:
        pct, name = min(cuts)
        lines.insert(0, f"The smallest switch price cut that changes rank 1: {pct}% ({name}).")
    return " ".join(lines)


def _cut_or_why_not(
    best: RankedDesign,
    rival: RankedDesign,
    catalog: Catalog,
    spec: OptimizeSpec,
    fabric: str,
    guess_pct: int,
    resolve: Resolver,
    which: str,
) -> tuple[Cut | None, str]:
    """The smallest switch price cut of ``fabric`` that changes rank 1, or the clause saying
    why none is stated (a re-solve proved nothing, or no cut up to ``MAX_CUT_PCT`` does);
    ``which`` names the rival ("best", "fastest")."""
    try:
        cut = smallest_cut(best, catalog, spec, fabric, guess_pct, resolve)
    except _Unknown:
        return None, f"; the price cut that changes rank 1: {NOT_COMPUTED}."
    if cut is not None:
        return cut, ""
    spend = (
        f"its {which} design's switches cost {usd(rival.cost.switches_cents)} at volume prices"
        if rival.cost.switches_cents
        else f"its {which} design has no switches"
    )
    return None, (
        f"; no cut of up to {MAX_CUT_PCT}% in the price of switches serving "
        f"{fabric_label(fabric)} changes rank 1 ({spend})."
    )


def _rival_line(
    best: RankedDesign,
    rival: RankedDesign,
    catalog: Catalog,
    spec: OptimizeSpec,
    fabric: str,
    resolve: Resolver,
) -> tuple[str, Cut | None]:
    """The rival fabric's best design against rank 1, and the cut that makes rank 1 change."""
    name = fabric_label(fabric)
    gap = rival.bom.capex_cents - best.bom.capex_cents
    switch_cents = rival.cost.switches_cents  # extended prices: the volume price paid
    head = f"{name}'s best design ({describe(rival)}) costs {usd(rival.bom.capex_cents)}"
    if gap <= 0:
        return (
            f"{head}, as much as rank 1; it ranks below only on the tie-break "
            f"(training time, then names).",
            None,
        )
    head += f", {usd(gap)} more than rank 1"
    # The cut at which this rival alone would undercut rank 1, rounded up to a whole percent
    # (a switchless rival: start from free switches, where another design of its fabric may win).
    guess = gap * 100 // switch_cents + 1 if switch_cents else MAX_CUT_PCT
    cut, no_cut = _cut_or_why_not(best, rival, catalog, spec, fabric, guess, resolve, "best")
    if cut is None:
        return f"{head}{no_cut}", None
    spend = f"its switches cost {usd(switch_cents)}" if switch_cents else "it has no switches"
    return (
        f"{head}. Switches serving {name} {cut.pct}% cheaper (at volume prices; {spend}) "
        f"change rank 1 to {describe(cut.rank_one)} at "
        f"{usd(cut.rank_one.bom.capex_cents)}; {cut.pct - 1}% cheaper does not.",
        cut,
    )


def time_sensitivity(
    best: RankedDesign, catalog: Catalog, spec: OptimizeSpec, resolve: Resolver
) -> str:
    """Min-time's sensitivity, re-solved: the smallest budget that buys a faster design (or
    that none does), then for every other fabric the request allows, its fastest design
    within the budget and the smallest cut in its switch prices (at volume prices) that
    changes rank 1 (a faster design becomes affordable, or the same time costs less), each
    checked by re-solving at the cut and at one percent less."""
    budget_line, faster = _budget_line(best, catalog, spec, resolve)
    lines = [budget_line]
    fabrics = _rival_fabrics(best, spec)
    if not fabrics:
        lines.append(f"The request allows only {fabric_label(best.design.fabric)}.")
    cuts: list[tuple[int, str]] = []
    for fabric in fabrics:
        line, cut = _fastest_rival_line(best, catalog, spec, fabric, resolve, faster)
        lines.append(line)
        if cut is not None:
            cuts.append((cut.pct, fabric_label(fabric)))
    if len(cuts) > 1:
        pct, name = min(cuts)
        lines.insert(1, f"The smallest switch price cut that changes rank 1: {pct}% ({name}).")
    return " ".join(lines)


def usd_cents(cents: int) -> str:
    """Dollars to the cent: a threshold said exactly, as the test re-solves it."""
    return f"${cents / 100:,.2f}"


def _budget_line(
    best: RankedDesign, catalog: Catalog, spec: OptimizeSpec, resolve: Resolver
) -> tuple[str, RankedDesign | None]:
    """The smallest budget at which rank 1 changes: the cheapest design strictly faster than
    rank 1 under every other constraint (re-solved min-cost, no budget, proven), checked by
    re-solving the request at that budget (rank 1 changes). A cent below, nothing faster is
    affordable (that is the min-cost proof), so rank 1 stays: the tests re-solve it too.
    Returned with that cheapest faster design, if one was found."""
    c = spec.constraints
    faster_than = math.nextafter(best.time_hours, 0.0)
    target = (
        faster_than
        if c.target_training_hours is None
        else min(faster_than, c.target_training_hours)
    )
    cheapest = resolve(
        catalog,
        replace(
            spec,
            objective=Objective.MIN_COST,
            constraints=replace(c, budget_cents=None, target_training_hours=target),
        ),
    )
    if cheapest is None or cheapest.status not in PROVEN:
        return f"The budget that buys a faster design: {NOT_COMPUTED}.", None
    if not cheapest.designs:
        return (
            "No budget buys a faster design: re-solved without the budget, no design trains "
            "faster than rank 1 under the other constraints."
        ), None
    faster = cheapest.designs[0]
    need = faster.bom.capex_cents

    def at(budget_cents: int) -> OptimizeResult | None:
        return resolve(catalog, replace(spec, constraints=replace(c, budget_cents=budget_cents)))

    again = at(need)
    changed = rank_one_changes(best, again)
    if changed is None:
        return f"The budget that buys a faster design: {NOT_COMPUTED}.", faster
    if not changed or again is None or not again.designs:
        # The re-solve disagrees with the min-cost one: say only what was re-solved.
        return (
            f"The cheapest faster design costs {usd(need)} ({describe(faster)}); "
            "re-solving the request at that budget does not confirm it as the threshold."
        ), faster
    now = again.designs[0]
    budget = "" if c.budget_cents is None else f" (the request's: {usd(c.budget_cents)})"
    return (
        f"A budget of {usd_cents(need)}{budget} buys a faster design: rank 1 becomes "
        f"{describe(now)}, {now.time_hours:,.0f} h at {usd(now.bom.capex_cents)}; "
        "a cent less does not."
    ), faster


def _fastest_rival_line(
    best: RankedDesign,
    catalog: Catalog,
    spec: OptimizeSpec,
    fabric: str,
    resolve: Resolver,
    faster: RankedDesign | None,
) -> tuple[str, Cut | None]:
    """A competing fabric under min-time: its fastest design within the budget, and the
    smallest cut in its switch prices that changes rank 1 (bisected, both sides re-solved),
    starting where the cheapest design faster than rank 1 (``faster``) would fit the budget."""
    name = fabric_label(fabric)
    alone = resolve(catalog, _rival_spec(spec, fabric))
    if alone is None or alone.status not in PROVEN:
        return f"{name}: {NOT_COMPUTED}.", None
    if not alone.designs:
        return f"No {name} design meets the constraints with this catalog.", None
    rival = alone.designs[0]
    head = (
        f"{name}'s fastest design within the budget ({describe(rival)}) trains in "
        f"{rival.time_hours:,.0f} h at {usd(rival.bom.capex_cents)}"
    )
    cut, no_cut = _cut_or_why_not(
        best,
        rival,
        catalog,
        spec,
        fabric,
        _affording_cut(faster, catalog, spec, fabric),
        resolve,
        "fastest",
    )
    if cut is None:
        return f"{head}{no_cut}", None
    now = cut.rank_one
    mine = best.design.fabric
    shared = any(
        switch_fits_fabric(w, fabric) and switch_fits_fabric(w, mine) for w in catalog.switches
    )
    also = f", some of which also serve {fabric_label(mine)}" if shared else ""
    return (
        f"{head}. Switches serving {name} {cut.pct}% cheaper (at volume prices{also}) change "
        f"rank 1 to {describe(now)}, {now.time_hours:,.0f} h at {usd(now.bom.capex_cents)}; "
        f"{cut.pct - 1}% cheaper does not.",
        cut,
    )


def _affording_cut(
    faster: RankedDesign | None, catalog: Catalog, spec: OptimizeSpec, fabric: str
) -> int:
    """Where a min-time switch-price cut is first tried: the cut of ``fabric``'s switches at
    which the cheapest design faster than rank 1 fits the budget (its gap over their spend in
    it, rounded up), past which rank 1 changes; or the deepest cut when no cut does (a bisection
    from the deepest spent seven of the nine re-solves of the medium request's cut, 5 %,
    docs/optimizer.md)."""
    budget = spec.constraints.budget_cents
    if faster is None or budget is None:
        return MAX_CUT_PCT
    skus = {w.sku for w in catalog.switches if switch_fits_fabric(w, fabric)}
    spend = sum(
        line.extended_price_cents
        for line in faster.bom.lines
        if line.category == "switch" and line.sku in skus
    )
    gap = faster.bom.capex_cents - budget
    return min(gap * 100 // spend + 1, MAX_CUT_PCT) if spend and gap > 0 else MAX_CUT_PCT


# issue 16 (scale-up domain)
def _domain(d: RankedDesign) -> int:
    return d.estimate.scale_up_gpus or d.gpus


def _shares(d: RankedDesign) -> tuple[float, float]:
    """(network, expert all-to-all on the network) seconds as shares of the expected step."""
    b, step_s = d.estimate.breakdown, d.estimate.step_time_s
    return b.network_s / step_s, b.all_to_all_network_s / step_s


def scale_up_line(
    best: RankedDesign, catalog: Catalog, spec: OptimizeSpec, resolve: Resolver
) -> str:
    """Why rank 1's scale-up domain beats the others, re-solved: the request over the servers
    of the other domain sizes only gives the best rival, and both designs' own estimates give
    the numbers (network share of the step, its expert all-to-all share, hours, capex).

    Said only when the allowed servers differ in domain and one of them is rack-scale (a
    domain of several hosts, e.g. GB200 NVL72); empty otherwise, or when the re-solve is cut
    short."""
    if spec.objective.kind.primary not in (Measure.TIME, Measure.COST):
        return ""  # min-tco has its own sentence (tco_comparison)
    servers = [s for s in catalog.servers if part_allowed(spec, s)]
    domains = {s.scale_up_domain_gpus for s in servers}
    if len(domains) < 2 or all(s.scale_up_domain_gpus <= s.host_gpus for s in servers):
        return ""
    mine = _domain(best)
    others = tuple(s for s in catalog.servers if s.scale_up_domain_gpus != mine)
    again = resolve(replace(catalog, servers=others), spec)
    if again is None or again.status not in PROVEN:
        return f"Other scale-up domains: {NOT_COMPUTED}."
    if not again.designs:
        return (
            f"Scale-up domain: no design with a domain other than {mine} GPUs meets the "
            "constraints (re-solved over those servers alone)."
        )
    rival = again.designs[0]
    theirs = _domain(rival)
    net, a2a = _shares(best)
    rnet, ra2a = _shares(rival)
    versus = f"the best {theirs}-GPU-domain design ({describe(rival)})"
    plan = best.estimate.plan
    if spec.objective.kind.primary is Measure.TIME:
        if spec.workload.is_moe and plan.expert > 1 and a2a < ra2a:
            why = (
                f"the expert all-to-all (EP {plan.expert}) stays inside the {mine}-GPU scale-up "
                f"domain: all-to-all on the network {a2a:.0%} of the step against {ra2a:.0%} "
                f"on the {theirs}-GPU design"
            )
        else:
            why = f"network {net:.0%} of the step against {rnet:.0%} on the {theirs}-GPU design"
        return (
            f"Scale-up domain: the {mine}-GPU domain wins on time over {versus}: {why}; "
            f"{best.time_hours:,.0f} h against {rival.time_hours:,.0f} h within the same budget."
        )
    saved = rival.bom.capex_cents - best.bom.capex_cents
    if mine < theirs and plan.tensor <= mine and a2a <= 0.0:
        target = spec.constraints.target_training_hours
        need = "" if target is None else f" to meet the {target:,.0f} h target"
        why = (
            f"the model fits TP{plan.tensor} inside the {mine}-GPU server (network "
            f"{net:.0%} of the step), so the {theirs}-GPU domain's speed "
            f"({rival.time_hours:,.0f} h against {best.time_hours:,.0f} h) is not needed{need}"
        )
    else:
        why = (
            f"network {net:.0%} of the step against {rnet:.0%}, {best.time_hours:,.0f} h "
            f"against {rival.time_hours:,.0f} h"
        )
    return (
        f"Scale-up domain: the {mine}-GPU domain wins on cost over {versus}: {why}; "
        f"{usd(saved)} cheaper."
    )
