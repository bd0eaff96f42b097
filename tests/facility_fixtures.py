"""A small hall to test facility limits in: the tiny catalog plus a cheaper, denser
liquid-only server (14.3 kW, 4 U, like a cold-plate HGX B200 chassis)."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from functools import cache

from optimizer_fixtures import server, spec_for, tiny_catalog

from optimizer.catalog.model import Catalog
from optimizer.optimize.request import Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult
from optimizer.optimize.solve import optimize

LIQUID_SKU = "SRV-LQ"
AIR_SKU = "SRV-A"


def hall_catalog() -> Catalog:
    cat = tiny_catalog()
    liquid = replace(server(LIQUID_SKU, 240_000), cooling="liquid", power_kw=14.3, rack_units=4)
    return replace(cat, servers=(*cat.servers, liquid))


HALL = hall_catalog()


def two_node_spec(**constraints: object) -> OptimizeSpec:
    """BERT-Large in a time only two or more nodes meet; the liquid server is the cheapest
    way there."""
    return spec_for(target_hours=two_node_target_hours(), top_k=1, **constraints)


@cache
def two_node_target_hours() -> float:
    """Between the fastest one-node and the fastest two-node design of the hall (their
    geometric mean), so the hall's story holds whatever the time model's constants are."""

    def fastest_hours(nodes: int) -> float:
        spec = spec_for(objective=Objective.MIN_TIME, budget_usd=1e9, max_nodes=nodes, top_k=1)
        return solve(spec).designs[0].estimate.training_time_hours

    return math.sqrt(fastest_hours(1) * fastest_hours(2))


def solve(spec: OptimizeSpec, catalog: Catalog = HALL) -> OptimizeResult:
    return optimize(catalog, spec)


def relaxing_number(diagnosis: str, flag: str) -> int:
    """The number the diagnosis gives for ``flag``: "needs N racks, ... than FLAG M" or
    "raise FLAG to N kW"."""
    raised = re.search(re.escape(flag) + r" to ([\d,]+) kW", diagnosis)
    if raised:
        return int(raised.group(1).replace(",", ""))
    needs = re.search(r"needs ([\d,]+) [a-z ]+, [\d,]+ more than " + re.escape(flag), diagnosis)
    assert needs, f"{flag} not named with a number in: {diagnosis}"
    return int(needs.group(1).replace(",", ""))
