"""Facility limits together: power, racks, floor positions, rack power density and cooling.

The hall is one set of limits on the layout (optimizer.topology.layout): how much a rack may
draw, how many floor positions racks and in-row CDUs may take, and whether liquid-only servers
can be cooled at all. ``facility_layout`` turns a request into that layout; the search refuses
designs over it like any design the layout cannot place, so the size searches stay exact (each
limit only grows with the cluster's size).

When nothing fits, ``facility_diagnosis`` names the facility limit that binds and the number
that would relax it, found by re-solving: the number is enough (a re-solve at it returns a
design) and, when the clock allows, one less is not.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from optimizer.catalog.model import Catalog, Server
from optimizer.errors import InvalidInput
from optimizer.optimize.request import OptimizeSpec
from optimizer.optimize.result import RankedDesign
from optimizer.topology.layout import Layout
from optimizer.topology.plan import PhysicalPlan

if TYPE_CHECKING:  # explain imports this module: its names are imported where used
    from optimizer.optimize.explain import Resolver

AIR_RACK_KW = 30.0
"""Typical ceiling of an air-cooled rack, applied when the request says ``cooling: air`` and
states no rack limit of its own: "air cooling tops out near 30 kW" (factryze.ai, "DLC and Watts
per Rack"; NVIDIA NCA-AIIO study notes, "practical limit ~30 kW/rack"). docs/optimizer.md."""
UNLIMITED_RACK_KW = 100_000.0
"""A rack limit that never binds (the largest a request may state, request_limits.py)."""
COOLING = ("air", "liquid")
DESCENT_STEPS = 8
"""Re-solves one relaxing number may take on its way down before it is reported as enough
(but perhaps more than needed)."""


def rack_kw_limit(spec: OptimizeSpec) -> float | None:
    """The request's power limit per rack: stated (``max_rack_kw``/``rack_power_kw``), else the
    typical air ceiling in an air-cooled facility, else none (the layout's default)."""
    if spec.rack_power_kw is not None:
        return spec.rack_power_kw
    return AIR_RACK_KW if spec.constraints.cooling == "air" else None


def facility_layout(spec: OptimizeSpec) -> Layout:
    """The layout every design of ``spec`` is placed in: the facility's limits on it."""
    c = spec.constraints
    if c.cooling is not None and c.cooling not in COOLING:
        msg = f"got {c.cooling!r}, expected one of {', '.join(COOLING)}"
        raise InvalidInput(msg, field="constraints.cooling")
    rack_kw = rack_kw_limit(spec)
    base = Layout() if rack_kw is None else Layout(rack_power_kw=rack_kw, rack_power_stated=True)
    return replace(base, max_floor_positions=c.max_floor_positions, facility_cooling=c.cooling)


def cooling_allows(server: Server, spec: OptimizeSpec) -> bool:
    """An air-cooled facility cannot take a liquid-only server; anything else goes."""
    return not (spec.constraints.cooling == "air" and server.cooling == "liquid")


@dataclass(frozen=True)
class FacilityFigures:
    """What one design asks of the hall."""

    floor_positions: int
    cooling: str  # how its servers are installed: air | liquid
    rack_kw: float  # draw of its fullest rack (server or network)


def facility_figures(plan: PhysicalPlan, catalog: Catalog) -> FacilityFigures:
    """Floor positions, cooling and fullest-rack draw of ``plan`` (built from ``catalog``)."""
    design, layout, placement = plan.design, plan.design.layout, plan.placement
    server = next(s for s in catalog.servers if s.sku == design.server_sku)
    node_kw = (plan.server_power_kw + plan.nic_power_kw) / design.nodes
    fullest = min(design.nodes, placement.nodes_per_rack) * node_kw
    switches = {s.sku: s for s in catalog.switches}
    for demand in plan.switches:
        sw = switches[demand.sku]
        per_rack = layout.per_rack(sw.power_w / 1000, sw.rack_units, f"switch {sw.sku}")
        fullest = max(fullest, min(demand.quantity, per_rack) * sw.power_w / 1000)
    cooling = "liquid" if layout.liquid_installed(server.cooling) else "air"
    return FacilityFigures(placement.floor_positions, cooling, round(fullest, 6))


@dataclass(frozen=True)
class _Limit:
    """One numeric facility limit: how to read it, set it, and measure a design against it."""

    flag: str
    unit: str  # "racks", "floor positions", "kW"
    stated: Callable[[OptimizeSpec], float | None]
    set_to: Callable[[OptimizeSpec, float | None], OptimizeSpec]
    needs: Callable[[RankedDesign], float]


def _constraint(spec: OptimizeSpec, **values: Any) -> OptimizeSpec:
    return replace(spec, constraints=replace(spec.constraints, **values))


LIMITS = (
    _Limit(
        "--max-racks",
        "racks",
        lambda s: s.constraints.max_racks,
        lambda s, v: _constraint(s, max_racks=None if v is None else int(v)),
        lambda d: d.bom.racks,
    ),
    _Limit(
        "--max-floor-positions",
        "floor positions",
        lambda s: s.constraints.max_floor_positions,
        lambda s, v: _constraint(s, max_floor_positions=None if v is None else int(v)),
        lambda d: d.floor_positions,
    ),
    _Limit(
        "--max-power-kw",
        "kW",
        lambda s: s.constraints.max_power_kw,
        lambda s, v: _constraint(s, max_power_kw=v),
        lambda d: d.bom.power_kw,
    ),
    _Limit(
        "--max-rack-kw",
        "kW",
        lambda s: rack_kw_limit(s) or _liquid_default_rack_kw(s),
        lambda s, v: replace(s, rack_power_kw=UNLIMITED_RACK_KW if v is None else v),
        lambda d: d.rack_kw,
    ),
)


def _liquid_default_rack_kw(spec: OptimizeSpec) -> float | None:
    """A liquid-cooled hall that states no rack limit packs ordinary servers to the layout's
    default: the diagnosis may say to raise it (a rack-scale unit is placed at its own
    power whatever the default, issue 16)."""
    return Layout().rack_power_kw if spec.constraints.cooling == "liquid" else None


def without_facility(spec: OptimizeSpec) -> OptimizeSpec:
    """``spec`` in a hall without limits: no power, rack, floor, density or cooling cap."""
    for limit in LIMITS:
        if limit.stated(spec) is not None:
            spec = limit.set_to(spec, None)
    return _constraint(spec, cooling=None)


def facility_diagnosis(catalog: Catalog, spec: OptimizeSpec, resolve: Resolver) -> str | None:
    """Why no design fits, when the facility is why: each limit that alone admits a design
    when raised, with the number it must reach (proven enough by a re-solve, and one less
    proven not, within the clock). None when the facility is not the reason (no limit is
    stated, or no design meets the rest of the request in any hall)."""
    from optimizer.optimize.explain import describe

    stated = [limit for limit in LIMITS if limit.stated(spec) is not None]
    if not stated and spec.constraints.cooling is None:
        return None
    free = resolve(catalog, without_facility(spec))
    if free is None:
        return None
    if not free.designs:
        return None  # the budget, target or parts exclude every design, in any hall
    parts: list[str] = []
    for limit in stated:
        said = _relax(limit, catalog, spec, resolve)
        if said:
            parts.append(said)
    if spec.constraints.cooling == "air":
        liquid = resolve(catalog, _constraint(spec, cooling="liquid"))
        if liquid is not None and liquid.designs:
            parts.append(
                "a facility with liquid cooling (--cooling liquid) admits "
                f"{describe(liquid.designs[0])}"
            )
    refused = rack_scale_refused(catalog, spec)  # issue 16 (rackscale)
    if parts:
        return "the facility limits exclude every design: " + "; or ".join(parts) + refused
    best = free.designs[0]
    over = [
        f"{_said(limit, math.ceil(limit.needs(best) - 1e-9))} ({limit.flag} {_cap(limit, spec)})"
        for limit in stated
        if limit.needs(best) > (limit.stated(spec) or 0.0) + 1e-9
    ]
    if spec.constraints.cooling == "air" and best.cooling == "liquid":
        over.append("liquid cooling (--cooling air)")
    return (
        "no single facility limit is the reason; together they exclude the cheapest design "
        f"without them ({describe(best)}), which needs {' and '.join(over)}{refused}"
    )


# issue 16 (rackscale)
def rack_scale_refused(catalog: Catalog, spec: OptimizeSpec) -> str:
    """Why the rack limit refuses each rack-scale row the hall could otherwise cool: the
    unit is one whole rack at its own power, never split across racks; "" when none is."""
    limit = rack_kw_limit(spec)
    if limit is None:
        return ""
    over = [
        f"{s.sku} is a rack-scale system placed as one whole rack of {s.power_kw:,g} kW"
        for s in catalog.servers
        if s.rack_scale and cooling_allows(s, spec) and s.power_kw > limit + 1e-9
    ]
    if not over:
        return ""
    return f" ({'; '.join(over)}, above the {limit:,g} kW per rack; it is not split across racks)"


def _said(limit: _Limit, value: int) -> str:
    return f"{value:,} kW" if limit.unit == "kW" else f"{value:,} {limit.unit}"


def _cap(limit: _Limit, spec: OptimizeSpec) -> str:
    cap = limit.stated(spec)
    return f"{cap:,g} kW" if limit.unit == "kW" else f"{int(cap or 0):,}"


def _relax(limit: _Limit, catalog: Catalog, spec: OptimizeSpec, resolve: Resolver) -> str:
    """The smallest whole value of ``limit`` that admits a design, said in its flag's terms;
    "" when raising it alone admits none."""
    from optimizer.optimize.explain import NOT_COMPUTED

    cap = limit.stated(spec)
    assert cap is not None
    found = resolve(catalog, limit.set_to(spec, None))
    if found is None or not found.designs:
        return ""
    value = math.ceil(limit.needs(found.designs[0]) - 1e-9)
    exact = False
    for _ in range(DESCENT_STEPS):
        if value - 1 < 1:
            exact = True
            break
        lower = resolve(catalog, limit.set_to(spec, value - 1))
        if lower is None:
            break
        if not lower.designs:
            exact = True
            break
        value = math.ceil(limit.needs(lower.designs[0]) - 1e-9)
    note = "" if exact else f" (perhaps less: {NOT_COMPUTED})"
    if limit.unit == "kW":
        return f"raise {limit.flag} to {value:,} kW (from {cap:,g} kW){note}"
    more = value - int(cap)
    return f"needs {value:,} {limit.unit}, {more:,} more than {limit.flag} {int(cap):,}{note}"


def facility_relaxations(spec: OptimizeSpec) -> list[tuple[str, OptimizeSpec]]:
    """Each stated facility limit beyond power and racks by its binding name, with the
    request that leaves it out (explain's re-solves)."""
    c = spec.constraints
    out: list[tuple[str, OptimizeSpec]] = []
    if c.max_floor_positions is not None:
        out.append(("floor_positions", _constraint(spec, max_floor_positions=None)))
    if spec.rack_power_kw is not None:
        out.append(("rack_kw", replace(spec, rack_power_kw=None)))
    if c.cooling is not None:
        out.append(("cooling", _constraint(spec, cooling=None)))
    return out


def facility_at_limit(d: RankedDesign, spec: OptimizeSpec, slack: float) -> list[str]:
    """The floor and rack-density limits this design uses (all but ``slack`` of)."""
    out: list[str] = []
    floor = spec.constraints.max_floor_positions
    if floor is not None and d.floor_positions >= floor:
        out.append("floor_positions")
    rack_kw = rack_kw_limit(spec)
    if rack_kw is not None and d.rack_kw >= (1 - slack) * rack_kw:
        out.append("rack_kw")
    return out
