"""Why no design came back, said in the user's terms and re-solved, not guessed.

Every design the diagnosis names is one a re-solve returned: verified like any answer
(build_bom and check_bom clean) and within stock, so it can be built and supplied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from optimizer.catalog.model import Catalog
from optimizer.optimize.backends import SolveStatus
from optimizer.optimize.explain import (
    NOT_COMPUTED,
    UNLIMITED_BUDGET_CENTS,
    Resolver,
    describe,
    usd,
)
from optimizer.optimize.facility import facility_diagnosis
from optimizer.optimize.formulation import stock_limits
from optimizer.optimize.request import Objective, OptimizeSpec
from optimizer.optimize.result import RankedDesign
from optimizer.registry.objectives import Measure

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
) -> str:
    """Say why nothing meets ``spec``: re-solve without the budget, power and rack caps and
    say which one the cheapest design misses; failing that, name the fastest design the
    catalog can build and stock can supply, and its time against the target."""
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
    if fastest is None:
        return f"no design meets the constraints; the fastest buildable design: {NOT_COMPUTED}"
    if not fastest.designs:
        stock = "" if not stock_limits(catalog) else ", from the parts in stock"
        refused = refusal()  # read after the re-solves: they time sizes too
        if refused is not None:
            return (
                "no design in the catalog can run this workload with the request's "
                f"parallelism: every allowed server size within the size limits{stock} "
                f"either refuses it or fits no plan in memory; it was refused with {refused}"
            )
        return (
            "no design in the catalog can run this workload: no parallel plan fits its "
            f"memory on any allowed server within the size limits{stock}"
        )
    best = fastest.designs[0]
    target = c.target_training_hours
    if target is not None and best.time_hours > target:
        return (
            f"no design meets the {target:,.4g} h target: the fastest the catalog can build"
            f"{' and stock can supply' if stock_limits(catalog) else ''} takes "
            f"{best.time_hours:,.0f} h ({describe(best)}){_stock_note(best, catalog)}"
        )
    return "no design can be built from the allowed parts"


def _over_a_cap(best: RankedDesign, spec: OptimizeSpec) -> str:
    """Which cap the cheapest design meeting everything else breaks, and by how much."""
    c = spec.constraints
    what = (
        "the cheapest design that meets the target"
        if c.target_training_hours is not None and spec.objective.kind.primary is Measure.COST
        else "the cheapest design"
    )
    what += f" ({describe(best)})"
    if c.budget_cents is not None and best.bom.capex_cents > c.budget_cents:
        return (
            f"{what} costs {usd(best.bom.capex_cents)}, over the {usd(c.budget_cents)} "
            f"budget by {usd(best.bom.capex_cents - c.budget_cents)}"
        )
    if c.max_power_kw is not None and best.bom.power_kw > c.max_power_kw:
        return f"{what} draws {best.bom.power_kw:,.0f} kW, above the {c.max_power_kw:,.0f} kW cap"
    if c.max_racks is not None and best.bom.racks > c.max_racks:
        return f"{what} needs {best.bom.racks} racks, more than the {c.max_racks} allowed"
    tco = best.tco_cents  # issue 17 (tco)
    if c.max_tco_cents is not None and tco is not None and tco > c.max_tco_cents:
        return (
            f"{what} has a lifetime cost (TCO) of {usd(tco)}, over the {usd(c.max_tco_cents)} "
            f"cap by {usd(tco - c.max_tco_cents)}"
        )
    return "no design satisfies the budget, power and rack limits together"


def _stock_note(best: RankedDesign, catalog: Catalog) -> str:
    """The stock limits the fastest design uses up: what stops a bigger one."""
    stock = stock_limits(catalog)
    used: dict[str, int] = {}
    for line in best.bom.lines:
        used[line.sku] = used.get(line.sku, 0) + line.quantity
    full = [f"all {qty:,} x {sku} in stock" for sku, qty in used.items() if stock.get(sku) == qty]
    return f"; it uses {', '.join(full)}" if full else ""
