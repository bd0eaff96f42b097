"""The fair speed comparison: the optimizer's rank 1 against the independent enumerator's
optimum (benchmarks/enumerator.py), on the same requests, in the same run.

The enumerator is what a careful engineer would write without the optimizer: every server x
fabric x NIC x NICs per node x topology x oversubscription x switch SKUs x node count, one by
one, each priced exactly (its own small CP-SAT model over the link mix). It shares only the
physics (estimator, sizing, BOM builder) with the optimizer, none of its search, bounds,
dominance or MIP, so its time is the honest baseline and agreement of the two is a check.
It is not the exponential link-split oracle of benchmarks/optimality.py, whose time grows
with every link-part split and which flatters any optimizer.

Both sides run in a fresh forked process with the catalog already loaded (its time is the
same for both and not what is compared); CPU time is user + system of the call. The
requests are issue 13's acceptance scenarios (benchmarks/realism_scenarios.py), rank 1 only.
Run: python -m benchmarks.versus_enumerator [--level full]
"""

from __future__ import annotations

import math
import os
import statistics
from dataclasses import replace
from pathlib import Path

from benchmarks.enumerator import Found, enumerate_optimum
from benchmarks.measure import isolated
from benchmarks.realism_scenarios import REPRESENTATIVE, SCENARIOS, Scenario, catalog
from benchmarks.report import Table, module_main, publish
from optimizer.optimize.request import Objective
from optimizer.optimize.solve import optimize


def scenarios(level: str) -> tuple[Scenario, ...]:
    """A handful of requests per level, rank 1 only.

    smallest: one request cut to 2 nodes (CI's smoke case); quick: one request per objective
    on each catalog, from the default test subset; full: every acceptance scenario.
    """
    if level == "smallest":
        return (replace(REPRESENTATIVE[0], max_nodes=2, top_k=1),)
    if level == "quick":
        picked: dict[tuple[str, Objective], Scenario] = {}
        for s in REPRESENTATIVE:
            picked.setdefault((s.catalog, s.objective), s)
        return tuple(replace(s, top_k=1) for s in picked.values())
    return tuple(replace(s, top_k=1) for s in SCENARIOS)


Value = tuple[int, int] | None  # the lexicographic objective of rank 1; None: no design


def _value(objective: Objective, cost_cents: int, seconds: int) -> tuple[int, int]:
    return (seconds, cost_cents) if objective is Objective.MIN_TIME else (cost_cents, seconds)


def optimizer_value(s: Scenario) -> Value:
    """The optimizer's rank 1 as the enumerator ranks designs: (capex or TCO, seconds), or
    (seconds, capex) for min-time."""
    result = optimize(catalog(s.catalog), s.spec())
    if not result.designs:
        return None
    top = result.designs[0]
    cost = (top.tco_cents or 0) if s.objective is Objective.MIN_TCO else top.bom.capex_cents
    return _value(s.objective, cost, math.ceil(top.time_hours * 3600))


def enumerator_value(s: Scenario) -> Value:
    """The independent enumerator's optimum, in the same terms."""
    found: Found | None = enumerate_optimum(catalog(s.catalog), s.spec(), max_nodes=s.max_nodes)
    if found is None:
        return None
    cost = found.tco_cents if s.objective is Objective.MIN_TCO else found.capex_cents
    return _value(s.objective, cost, found.seconds)


def comparison(level: str) -> Table:
    table = Table(
        "Optimizer vs the independent enumerator (same requests, same run; the fair ratio)",
        (
            "request",
            "optimizer CPU s",
            "enumerator CPU s",
            "enumerator/optimizer",
            "same rank-1 objective",
            "optimizer wall s",
            "enumerator wall s",
            "load avg 1 min",
        ),
    )
    ratios: list[float] = []
    for s in scenarios(level):
        catalog(s.catalog)  # loaded once, before the fork: not part of either time
        mine = isolated(optimizer_value, s)
        theirs = isolated(enumerator_value, s)
        ratio = theirs.cpu_s / mine.cpu_s if mine.cpu_s > 0 else math.nan
        ratios.append(ratio)
        same = mine.value == theirs.value
        table.add(
            s.name,
            mine.cpu_s,
            theirs.cpu_s,
            ratio,
            "yes" if same else "NO",
            mine.wall_s,
            theirs.wall_s,
            os.getloadavg()[0],
        )
        if not same:
            table.notes.append(f"DIFFERENT rank 1 on {s.name}: {mine.value} vs {theirs.value}")
    finite = [r for r in ratios if math.isfinite(r) and r > 0]
    if finite:
        table.notes.append(
            f"Enumerator/optimizer CPU: median {statistics.median(finite):,.1f}x, "
            f"range {min(finite):,.1f}x to {max(finite):,.1f}x over {len(finite)} requests "
            f"(values are (capex or TCO cents, seconds), or (seconds, capex cents) for min-time)."
        )
    return table


def run(level: str, out: Path) -> list[Table]:
    tables = [comparison(level)]
    publish(
        "versus_enumerator",
        tables,
        out,
        {"level": level, "requests": [s.name for s in scenarios(level)], "top_k": 1},
    )
    return tables


if __name__ == "__main__":
    module_main(run, __doc__)
