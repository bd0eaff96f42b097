"""Why no design came back, said in the user's terms and re-solved, not guessed.

Every design the diagnosis names is one a re-solve returned: verified like any answer
(build_bom and check_bom clean) and within stock, so it can be built and supplied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from optimizer.catalog.model import Catalog, Link, Nic, Server, Switch
from optimizer.optimize.backends import SolveStatus
from optimizer.optimize.candidates import (
    SearchSpace,
    is_switchless,
    part_allowed,
    part_refusals,
    with_catalog_vendors,
)
from optimizer.optimize.explain import (
    NOT_COMPUTED,
    UNLIMITED_BUDGET_CENTS,
    Resolver,
    describe,
    fabric_label,
    topology_label,
    usd,
)
from optimizer.optimize.facility import facility_diagnosis
from optimizer.optimize.formulation import stock_limits
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import RankedDesign
from optimizer.performance.profile import OVERHEAD_NOTE_SHARE
from optimizer.registry.objectives import Measure
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.compat import link_fits, nic_fits_fabric, switch_fits_fabric

TIME_LIMIT_TEXT = (
    "the time limit ended the search before any design was found; raise solver.time_limit_s"
)


def diagnose(
    catalog: Catalog,
    spec: OptimizeSpec,
    status: SolveStatus,
    clock_expired: bool,
    resolve: Resolver,
    refusal: Callable[[], str | None] = lambda: None,
    too_heavy: Callable[[], str | None] = lambda: None,
    server_refusal: Callable[[], str | None] = lambda: None,
) -> str:
    """Say why nothing meets ``spec``: re-solve without the budget, power and rack caps and
    say which one the cheapest design misses; failing that, whether the parts the request's
    vendor filters or lead-time cap leave out, or fabrics and topologies the allowed parts
    cannot build, are what stops every design (with the cheapest design without them);
    failing that, name the fastest design the catalog can build and stock can supply, and
    its time against the target. Servers that refuse the workload itself (``server_
    refusal``: fp8 on a GPU without an FP8 peak) are named wherever nothing else can run it."""
    if clock_expired:
        return TIME_LIMIT_TEXT
    if status in (SolveStatus.TIME_LIMIT, SolveStatus.ERROR, SolveStatus.MODEL_INVALID):
        return f"the solver stopped without a design ({status}); raise solver.time_limit_s"
    if (facility := facility_diagnosis(catalog, spec, resolve)) is not None:  # issue 17
        return facility
    c = spec.constraints
    caps = replace(c, budget_cents=None, max_power_kw=None, max_racks=None, max_tco_cents=None)
    if spec.objective.kind.primary is Measure.TIME:
        caps = replace(caps, target_training_hours=None)
    if caps != c:
        relaxed = resolve(catalog, replace(spec, objective=Objective.MIN_COST, constraints=caps))
        if relaxed is None:
            return TIME_LIMIT_TEXT
        if relaxed.designs:
            return _over_a_cap(relaxed.designs[0], spec)
    if (left_out := _left_out_parts(catalog, spec, caps, resolve)) is not None:
        return left_out
    if (unbuilt := _unbuildable_networks(catalog, spec, caps, resolve)) is not None:
        return unbuilt
    # Nothing meets the target whatever the caps: the fastest design there is, within stock.
    fastest = resolve(
        catalog,
        replace(
            spec,
            objective=Objective.MIN_TIME,
            constraints=replace(
                caps, target_training_hours=None, budget_cents=UNLIMITED_BUDGET_CENTS
            ),
        ),
    )
    # A re-solve the clock cut short before any design proves nothing: not "no plan fits".
    if fastest is None or (not fastest.designs and fastest.status == SolveStatus.TIME_LIMIT):
        return f"no design meets the constraints; the fastest buildable design: {NOT_COMPUTED}"
    if not fastest.designs:
        servers = server_refusal()  # read after the re-solves: they time sizes too
        if (filtered := _filters_together(catalog, spec, caps, resolve)) is not None:
            return filtered + ("" if servers is None else f"; of the servers allowed, {servers}")
        stock = "" if not stock_limits(catalog) else ", from the parts in stock"
        if servers is not None:
            return (
                f"no design in the catalog can run this workload: no allowed server runs it; "
                f"{servers}"
            )
        refused = refusal()
        if refused is not None:
            return (
                "no design in the catalog can run this workload with the request's "
                f"parallelism: every allowed server size within the size limits{stock} "
                f"either refuses it or fits no plan in memory; it was refused with {refused}"
            )
        heaviest = too_heavy()
        return (
            "no design in the catalog can run this workload: no parallel plan fits its "
            f"memory on any allowed server within the size limits{stock}"
            + ("" if heaviest is None else f"; on the most GPUs tried, {heaviest}")
        )
    best = fastest.designs[0]
    target = c.target_training_hours
    if target is not None and best.time_hours > target:
        return (
            f"no design meets the {target:,.4g} h target: the fastest the catalog can build"
            f"{' and stock can supply' if stock_limits(catalog) else ''} takes "
            f"{best.time_hours:,.0f} h ({describe(best)}){_stock_note(best, catalog)}"
            f"{_profile_overhead_note(best, spec)}"
        )
    return "no design can be built from the allowed parts"


def _filters_together(
    catalog: Catalog, spec: OptimizeSpec, caps: Constraints, resolve: Resolver
) -> str | None:
    """When the request's part and network filters, none enough alone, stop every design
    together (a vendor filter with a fabric the remaining parts cannot build, a lead-time cap
    with every server, require_fabric with no cable vendor): the design the request gets
    without them (its own objective, target and caps: the cheapest that meets the target, the
    fastest within the budget), else the cheapest that meets the target whatever the caps,
    with the cap it breaks, else the fastest there is, over the target. None without
    filters, or when nothing is built without them either (then memory is the reason)."""
    fields = [
        name
        for name, on in (
            ("allowed_vendors", bool(spec.allowed_vendors)),
            ("excluded_vendors", bool(spec.excluded_vendors)),
            ("constraints.max_lead_time_days", caps.max_lead_time_days is not None),
            ("allowed_fabrics", bool(spec.allowed_fabrics)),
            ("allowed_topologies", bool(spec.allowed_topologies)),
            ("require_fabric", spec.require_fabric),
        )
        if on
    ]
    if not fields:
        return None
    unfiltered = replace(
        spec,
        constraints=replace(spec.constraints, max_lead_time_days=None),
        allowed_vendors=(),
        excluded_vendors=(),
        allowed_fabrics=(),
        allowed_topologies=(),
        require_fabric=False,
    )
    lifted = replace(caps, max_lead_time_days=None)
    unlimited = replace(lifted, target_training_hours=None, budget_cents=UNLIMITED_BUDGET_CENTS)
    for relaxed in (
        unfiltered,
        replace(unfiltered, objective=Objective.MIN_COST, constraints=lifted),
        replace(unfiltered, objective=Objective.MIN_TIME, constraints=unlimited),
    ):
        found = resolve(catalog, relaxed)
        if found is None:  # the clock ran out: nothing proved either way
            return None
        if found.designs:
            break
    else:
        return None
    best = found.designs[0]
    allow, them = ("allow together", "them") if len(fields) > 1 else ("allows", "it")
    target = spec.constraints.target_training_hours
    missed = target is not None and best.time_hours > target
    what = (
        f"the {spec.objective.kind.goal}"
        if relaxed is unfiltered
        else "the fastest design"
        if missed
        else f"the cheapest design{_goal(lifted)}"
    )
    return (
        f"no design can be built from what {_listed(fields)} {allow}: without {them} "
        f"{what} is {describe(best)}, {best.time_hours:,.0f} h at "
        f"{usd(best.bom.capex_cents)}"
        + (f", over the {target:,.4g} h target even so" if missed else _even_so(best, spec))
    )


# What a BOM line's category is called where a diagnosis names the parts missing.
_PART_CLASSES = {
    "server": "servers",
    "nic": "NICs",
    "switch": "switches",
    "cable": "cables",
    "transceiver": "optics",
    "fiber": "fiber",
}


def _left_out_parts(
    catalog: Catalog, spec: OptimizeSpec, caps: Constraints, resolve: Resolver
) -> str | None:
    """When the network parts the request's vendor filters or lead-time cap leave out are
    what stops every design: the cheapest design once the fix is applied, which of its parts
    which field leaves out, and how to allow them. The fix is read off the cheapest design
    with the left-out parts on the servers the request allows; a vendor it lets back in may
    make servers too, so the design named is re-solved under the fix (else the buyer who
    applies it gets a cheaper design than the one named). None when the filters are not the
    cause (without them nothing can be built either) or the re-solve ran out of time."""
    if not (spec.allowed_vendors or spec.excluded_vendors or caps.max_lead_time_days is not None):
        return None
    # The servers the request allows (every server when it allows none: then they are the cause)
    servers = tuple(s for s in catalog.servers if part_allowed(spec, s)) or catalog.servers
    opened = catalog if len(servers) == len(catalog.servers) else replace(catalog, servers=servers)
    cheapest = replace(spec, objective=Objective.MIN_COST, constraints=caps)
    best = _cheapest_relaxed(opened, cheapest, resolve)
    if best is None:
        return None
    by_field, classes = _refused_parts(catalog, spec, best)
    if not by_field:
        return None
    fixed = resolve(catalog, _with_fix(cheapest, caps, by_field))
    if fixed is not None and fixed.designs:
        best = fixed.designs[0]
        by_field, classes = _refused_parts(catalog, spec, best)
    reasons, fixes = [], []
    for field, left in by_field.items():
        what = _listed(classes[field])
        if field == "constraints.max_lead_time_days":
            days = _longest_lead_time(left)
            reasons.append(
                f"{field} ({caps.max_lead_time_days:,.4g} days) leaves out the {what} it "
                f"needs ({', '.join(left)}: up to {days:,.4g} days)"
            )
            fixes.append(f"raise {field} to {days:,.4g}")
            continue
        names = sorted({p.vendor for p in left.values()}, key=str.lower)
        vendors, whose = _listed(names), "vendor" if len(names) == 1 else "vendors"
        reasons.append(f"{field} leaves out {vendors}, the {whose} of the {what} it needs")
        fixes.append(
            f"add {vendors} to allowed_vendors"
            if field == "allowed_vendors"
            else f"remove {vendors} from excluded_vendors"
        )
    goal = _goal(caps)
    return (
        f"no design{goal} can be built from the parts the request allows: the cheapest "
        f"with the parts it leaves out is {describe(best)} at {usd(best.bom.capex_cents)}, "
        f"and {'; '.join(reasons)}; to build it, {' and '.join(fixes)}{_even_so(best, spec)}"
    )


def _cheapest_relaxed(
    catalog: Catalog, spec: OptimizeSpec, resolve: Resolver
) -> RankedDesign | None:
    """The cheapest design with the vendor filters lifted or the lead-time cap lifted (the
    cheaper of the two), and only when neither alone finds one, with both lifted: the
    smallest fix, not one that also asks the buyer to wait longer for a slightly cheaper
    switch. None when nothing is found or a re-solve ran out of time."""
    vendors = replace(spec, allowed_vendors=(), excluded_vendors=())
    lead = replace(spec, constraints=replace(spec.constraints, max_lead_time_days=None))
    singles = [
        relaxed
        for relaxed, on in (
            (vendors, bool(spec.allowed_vendors or spec.excluded_vendors)),
            (lead, spec.constraints.max_lead_time_days is not None),
        )
        if on
    ]
    both = replace(vendors, constraints=lead.constraints)
    for tier in [singles, [both]] if len(singles) == 2 else [singles]:
        found = [r.designs[0] for r in (resolve(catalog, s) for s in tier) if r and r.designs]
        if found:
            return min(found, key=lambda d: d.bom.capex_cents)
    return None


_Part = Server | Nic | Switch | Link
# The part filters this diagnosis lifts (the facility's cooling is facility_diagnosis's).
_PART_FILTERS = ("allowed_vendors", "excluded_vendors", "constraints.max_lead_time_days")


def _refused_parts(
    catalog: Catalog, spec: OptimizeSpec, best: RankedDesign
) -> tuple[dict[str, dict[str, _Part]], dict[str, list[str]]]:
    """The parts of ``best``'s BOM that a field of ``spec`` leaves out, by field (a part two
    fields leave out under both; a server's built-in NICs go with the server), and the
    classes of part each field leaves out."""
    builtin = next(s.builtin_nic_sku for s in catalog.servers if s.sku == best.design.server_sku)
    every: tuple[_Part, ...] = (*catalog.servers, *catalog.nics, *catalog.switches, *catalog.links)
    parts = {p.sku: p for p in every}
    by_field: dict[str, dict[str, _Part]] = {}
    classes: dict[str, list[str]] = {}
    for line in best.bom.lines:
        part = parts.get(line.sku)
        if part is None or part.sku == builtin:
            continue
        for field in (f for f in part_refusals(spec, part) if f in _PART_FILTERS):
            by_field.setdefault(field, {})[part.sku] = part
            named = classes.setdefault(field, [])
            if _PART_CLASSES[line.category] not in named:
                named.append(_PART_CLASSES[line.category])
    return by_field, classes


def _longest_lead_time(left: dict[str, _Part]) -> float:
    return max(p.availability.lead_time_days or 0 for p in left.values())


def _with_fix(
    spec: OptimizeSpec, caps: Constraints, by_field: dict[str, dict[str, _Part]]
) -> OptimizeSpec:
    """``spec`` under ``caps`` with the vendor filters and lead-time cap the diagnosis's fix
    changes changed."""
    added = {p.vendor for p in by_field.get("allowed_vendors", {}).values()}
    removed = {p.vendor for p in by_field.get("excluded_vendors", {}).values()}
    late = by_field.get("constraints.max_lead_time_days")
    return replace(
        spec,
        constraints=caps
        if late is None
        else replace(caps, max_lead_time_days=_longest_lead_time(late)),
        allowed_vendors=(*spec.allowed_vendors, *sorted(added)) if added else spec.allowed_vendors,
        excluded_vendors=tuple(v for v in spec.excluded_vendors if v not in removed),
    )


def _unbuildable_networks(
    catalog: Catalog, spec: OptimizeSpec, caps: Constraints, resolve: Resolver
) -> str | None:
    """When the request's fabrics or topologies are ones the allowed parts cannot build (no
    NIC speaks the fabric, no switch runs it, no cable or optic carries it; a direct family
    without hardware that forwards): what is missing, and the cheapest design without the
    restriction. None when nothing is missing or lifting it builds nothing either."""
    space = SearchSpace(catalog, with_catalog_vendors(catalog, spec))
    lacks = {f: why for f in spec.allowed_fabrics if (why := _fabric_lacks(space, f))}
    topologies = [t for t in spec.allowed_topologies if _cannot_scale(space, t)]
    if spec.allowed_fabrics and len(lacks) == len(spec.allowed_fabrics):
        missing = "; ".join(lacks.values())
        field, lifted = "allowed_fabrics", replace(spec, allowed_fabrics=())
        named = ", ".join(spec.allowed_fabrics)
    elif spec.allowed_topologies and len(topologies) == len(spec.allowed_topologies):
        missing = "; ".join(
            f"a {topology_label(t)} needs NICs or servers that forward traffic and none "
            "allowed does (two nodes back to back at most)"
            for t in topologies
        )
        field, lifted = "allowed_topologies", replace(spec, allowed_topologies=())
        named = ", ".join(spec.allowed_topologies)
    else:
        return None
    relaxed = resolve(catalog, replace(lifted, objective=Objective.MIN_COST, constraints=caps))
    if relaxed is None or not relaxed.designs:
        return None
    best = relaxed.designs[0]
    goal = _goal(caps)
    return (
        f"no design{goal} can be built with {field} ({named}): {missing}; without "
        f"{field} the cheapest design{goal} is {describe(best)} at "
        f"{usd(best.bom.capex_cents)}{_even_so(best, spec)}"
    )


def _fabric_lacks(space: SearchSpace, fabric: str) -> str | None:
    """The part class the request's parts lack for any network of ``fabric``, or None."""
    label = fabric_label(fabric)
    nics = [n for n in space.nics if nic_fits_fabric(n, fabric)]
    if not nics:
        return f"no allowed NIC speaks {label}"
    direct = [t for t in space.topologies if is_switchless(t) and TOPOLOGIES.get(t).scale_out]
    if not any(switch_fits_fabric(w, fabric) for w in space.switches) and all(
        _cannot_scale(space, t) for t in direct
    ):
        return f"no allowed switch runs {label}"
    speeds = sorted({n.speed_gbps for n in nics})
    links = [lk for lk in space.catalog.links if part_allowed(space.spec, lk)]
    if not any(link_fits(lk, v, fabric) for lk in links for v in speeds):
        return f"no allowed cable or optic carries {label} at {'/'.join(str(v) for v in speeds)}G"
    return None


def _forwards(space: SearchSpace, topology: str) -> bool:
    """Some allowed hardware builds more than two nodes of ``topology``."""
    family = TOPOLOGIES.get(topology)
    return (
        not family.needs_forwarding
        or any(s.forwarding for s in space.servers)
        or any(n.forwarding for n in space.nics)
    )


def _cannot_scale(space: SearchSpace, topology: str) -> bool:
    """``topology`` is a multi-node family the allowed hardware builds two nodes of at most."""
    return TOPOLOGIES.get(topology).scale_out and not _forwards(space, topology)


def _goal(caps: Constraints) -> str:
    target = caps.target_training_hours
    return "" if target is None else f" that meets the {target:,.4g} h target"


def _listed(words: list[str]) -> str:
    """The words in prose: a; a and b; a, b and c."""
    return " and ".join(filter(None, (", ".join(words[:-1]), words[-1])))


def _over_a_cap(best: RankedDesign, spec: OptimizeSpec) -> str:
    """Which cap the cheapest design meeting everything else breaks, and by how much."""
    c = spec.constraints
    what = (
        "the cheapest design that meets the target"
        if c.target_training_hours is not None and spec.objective.kind.primary is Measure.COST
        else "the cheapest design"
    )
    broken = _cap_broken(best, spec)
    if broken is None:
        return "no design satisfies the budget, power and rack limits together"
    return f"{what} ({describe(best)}) {broken}"


def _cap_broken(best: RankedDesign, spec: OptimizeSpec) -> str | None:
    """How ``best`` breaks the request's budget, power, rack or TCO cap (the first it
    breaks), or None: a design a diagnosis names as the way out must say so, or its fix
    leads to the next refusal."""
    c = spec.constraints
    if c.budget_cents is not None and best.bom.capex_cents > c.budget_cents:
        return (
            f"costs {usd(best.bom.capex_cents)}, over the {usd(c.budget_cents)} "
            f"budget by {usd(best.bom.capex_cents - c.budget_cents)}"
        )
    if c.max_power_kw is not None and best.bom.power_kw > c.max_power_kw:
        return f"draws {best.bom.power_kw:,.0f} kW, above the {c.max_power_kw:,.0f} kW cap"
    if c.max_racks is not None and best.bom.racks > c.max_racks:
        return f"needs {best.bom.racks} racks, more than the {c.max_racks} allowed"
    tco = best.tco_cents  # issue 17 (tco)
    if c.max_tco_cents is not None and tco is not None and tco > c.max_tco_cents:
        return (
            f"has a lifetime cost (TCO) of {usd(tco)}, over the {usd(c.max_tco_cents)} "
            f"cap by {usd(tco - c.max_tco_cents)}"
        )
    return None


def _even_so(best: RankedDesign, spec: OptimizeSpec) -> str:
    """``, but even so it ...`` when the design a diagnosis names breaks a cap, else ""."""
    broken = _cap_broken(best, spec)
    return "" if broken is None else f", but even so it {broken}"


def _profile_overhead_note(best: RankedDesign, spec: OptimizeSpec) -> str:
    """The calibration profile's fixed cost per step in the fastest design's step: fitted on
    long steps, it can hold most of a short one, and no cluster makes it faster."""
    profile = spec.model_options.calibration
    b = best.estimate.breakdown
    if profile is None or profile.step_overhead_s is None or b.step_time_s <= 0:
        return ""
    share = b.step_overhead_s / b.step_time_s
    if share < OVERHEAD_NOTE_SHARE:
        return ""
    return (
        f"; {share:.0%} of its step is the calibration profile's fixed step overhead "
        f"({b.step_overhead_s:.3g} s), which no larger cluster shortens"
    )


def _stock_note(best: RankedDesign, catalog: Catalog) -> str:
    """The stock limits the fastest design uses up: what stops a bigger one."""
    stock = stock_limits(catalog)
    used: dict[str, int] = {}
    for line in best.bom.lines:
        used[line.sku] = used.get(line.sku, 0) + line.quantity
    full = [f"all {qty:,} x {sku} in stock" for sku, qty in used.items() if stock.get(sku) == qty]
    return f"; it uses {', '.join(full)}" if full else ""
