"""Optimality against the exponential link-split oracle: the MIP's ranked designs equal those of
exhaustive enumeration (optimizer.optimize.exhaustive: every design up to ``max_nodes`` and
every split of every link group over the link parts) on synthetic catalogs of growing size,
timed side by side in one run.

The oracle's time grows exponentially with the link parts, so its ratio to the optimizer is a
check of optimality, not a speed claim: the fair speed comparison is against the independent
enumerator (benchmarks.versus_enumerator), which prices each design's link mix exactly.

For each catalog size the largest node count grows until brute force does not finish within
``--brute-budget-s``; the finished instance brute force took longest on is reported as the
largest it finishes in that budget (the issue's target: >= 100x faster there
at the same optimum, with a 300 s budget). Run: python -m benchmarks.optimality [--level full]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.measure import isolated
from benchmarks.report import Table, parser, publish
from benchmarks.scenarios import target_hours
from benchmarks.synthetic import synthetic_catalog
from optimizer.catalog.model import Catalog
from optimizer.optimize.exhaustive import exhaustive
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset

GPUS_PER_NODE = 8  # every synthetic server class has 8 GPUs
TOP_K = 3
# Catalog sizes (SKUs) and, for each, the node counts tried in turn, smallest first.
LADDERS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "smallest": ((7,), (1,)),
    "quick": ((7, 9), (1, 2, 4, 8)),
    "full": ((7, 8, 9), (1, 2, 4, 8, 16, 32, 64, 128)),
}
BRUTE_BUDGET_S = {"smallest": 20.0, "quick": 20.0, "full": 300.0}
# BERT-Large with the work of 3/4 of the largest cluster (benchmarks.scenarios), so that several
# sizes below the largest can meet it; a global batch of 4,096 sequences (LAMB, You et al.,
# ICLR 2020, trained BERT with up to 65,536) lets data parallelism reach 128 nodes.
WORK_TOKENS = 4e10
GLOBAL_BATCH = 4096


def instance_spec(max_nodes: int) -> OptimizeSpec:
    workload = preset("bert-large", training_tokens=WORK_TOKENS, global_batch_size=GLOBAL_BATCH)
    gpus = max_nodes * GPUS_PER_NODE
    return OptimizeSpec(
        workload=workload,
        constraints=Constraints(
            target_training_hours=target_hours(workload, max(1, gpus * 3 // 4)), max_gpus=gpus
        ),
        top_k=TOP_K,
        time_limit_s=120.0,
    )


def _mip(catalog: Catalog, max_nodes: int) -> list[tuple[Any, int]]:
    result = optimize(catalog, instance_spec(max_nodes))
    return [(d.design, d.bom.capex_cents) for d in result.designs]


def _brute(catalog: Catalog, max_nodes: int) -> list[tuple[Any, int]]:
    found = exhaustive(catalog, instance_spec(max_nodes), max_nodes=max_nodes)
    return [(b.design, b.capex_cents) for b in found]


def run(level: str, out: Path, brute_budget_s: float | None = None) -> list[Table]:
    budget = brute_budget_s or BRUTE_BUDGET_S[level]
    table = Table(
        "MIP vs brute force: the exponential link-split oracle (an optimality check, not the "
        "fair speed ratio; same instance, same run)",
        (
            "catalog SKUs",
            "max nodes",
            "designs",
            "rank-1 capex USD",
            "same optimum",
            "MIP CPU s",
            "brute CPU s",
            "brute/MIP",
            "MIP wall s",
            "brute wall s",
        ),
    )
    largest: tuple[Any, ...] | None = None
    catalog_sizes, node_counts = LADDERS[level]
    for skus in catalog_sizes:
        for max_nodes in node_counts:
            row = _compare(skus, max_nodes, budget, table)
            if row is None:
                break  # larger clusters of this catalog take longer still
            if largest is None or row[6] > largest[6]:
                largest = row
    if largest is not None:
        table.notes.append(
            f"Largest instance brute force finished within {budget:g} s: "
            f"{largest[0]} SKUs x {largest[1]} nodes, brute/MIP = "
            f"{largest[7]:,.1f}x (target >= 100x at a 300 s budget)."
        )
    table.notes.append(
        "The oracle enumerates every link-part split, exponential in the link parts: this ratio "
        "is not the optimizer's speed-up over a straightforward search (see the independent "
        "enumerator's table)."
    )
    publish(
        "optimality",
        [table],
        out,
        {
            "level": level,
            "brute_budget_s": budget,
            "top_k": TOP_K,
            "work_tokens": WORK_TOKENS,
            "global_batch": GLOBAL_BATCH,
        },
    )
    return [table]


def _compare(skus: int, max_nodes: int, budget: float, table: Table) -> tuple[Any, ...] | None:
    """One instance solved both ways and tabled; None when brute force ran out of budget."""
    catalog = synthetic_catalog(skus)
    mip = isolated(_mip, catalog, max_nodes)
    try:
        brute = isolated(_brute, catalog, max_nodes, timeout_s=budget)
    except TimeoutError:
        table.add(
            skus,
            max_nodes,
            len(mip.value),
            _usd(mip.value),
            "-",
            mip.cpu_s,
            f"> {budget:g} (wall)",
            f"> {budget / mip.wall_s:,.0f}",
            mip.wall_s,
            f"> {budget:g}",
        )
        table.notes.append(
            f"Brute force exceeded its {budget:g} s budget at {skus} SKUs x {max_nodes} nodes."
        )
        return None
    same = mip.value == brute.value
    row = (
        skus,
        max_nodes,
        len(mip.value),
        _usd(mip.value),
        "yes" if same else "NO",
        mip.cpu_s,
        brute.cpu_s,
        brute.cpu_s / mip.cpu_s,
        mip.wall_s,
        brute.wall_s,
    )
    table.add(*row)
    if not same:
        table.notes.append(
            f"DIFFERENT OPTIMUM at {skus} SKUs x {max_nodes} nodes: MIP "
            f"{mip.value[:1]} vs brute {brute.value[:1]}"
        )
    return row


def _usd(designs: list[tuple[Any, int]]) -> float | None:
    return designs[0][1] / 100 if designs else None


def main() -> None:
    p = parser(__doc__)
    p.add_argument(
        "--brute-budget-s",
        type=float,
        default=None,
        help="stop the ladder once brute force exceeds this (default: 20 s quick, 300 s full)",
    )
    args = p.parse_args()
    run(args.level, args.out, args.brute_budget_s)


if __name__ == "__main__":
    main()
