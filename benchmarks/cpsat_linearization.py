"""CP-SAT's LP relaxation, level 1 (OR-Tools' default) against level 2 (ours,
optimizer/optimize/backends/cpsat.py ``LINEARIZATION_LEVEL``), on the same requests: the
README's main job on each bundled catalog and budget (min-time) scenarios, each request in a
fresh process per level, timed end to end (search, MIP, verification, explanations) with
whether the two levels return the same designs; at the full level also seeded random requests
(every catalog, both objectives, facility, policy and fabric limits), compared BOM by BOM.

Run: python -m benchmarks.cpsat_linearization [--level full]
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import NamedTuple

from benchmarks.measure import isolated
from benchmarks.report import Table, module_main, publish
from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.optimize.backends import cpsat

LEVELS = (1, 2)
MAIN_JOB_HOURS = 720.0  # the README's main job: Llama 3 70B, 15T tokens, in 30 days
POINT_TIMEOUT_S = 600.0


class Instance(NamedTuple):
    catalog: str
    model: str
    target_hours: float | None = None  # min-cost under a deadline, else min-time
    budget_usd: float | None = None

    @property
    def name(self) -> str:
        if self.target_hours is not None:
            return f"{self.catalog} {self.model}, {self.target_hours:g} h (min-cost)"
        return f"{self.catalog} {self.model}, ${self.budget_usd:,.0f} (min-time)"

    def request(self) -> optimize_pb2.OptimizeRequest:
        limits = (
            optimize_pb2.Constraints(target_training_hours=self.target_hours)
            if self.target_hours is not None
            else optimize_pb2.Constraints(budget_usd=self.budget_usd)
        )
        return optimize_pb2.OptimizeRequest(
            catalog=self.catalog,
            workload=estimate_pb2.Workload(model=self.model),
            constraints=limits,
            objective="min-cost" if self.target_hours is not None else "min-time",
        )


def _main(catalog: str) -> Instance:
    return Instance(catalog, "llama3-70b", target_hours=MAIN_JOB_HOURS)


CATALOGS = ("infiniband-ndr", "roce-spectrum", "gen-2026", "ethernet-budget")
INSTANCES = {
    "smallest": (_main("infiniband-ndr"),),
    "quick": (
        *(_main(c) for c in CATALOGS),
        Instance("gen-2026", "llama3-70b", budget_usd=20e6),
    ),
    "full": (
        *(_main(c) for c in CATALOGS),
        *(Instance(c, "llama3-70b", budget_usd=20e6) for c in CATALOGS),
        Instance("gen-2026", "llama3-405b", budget_usd=300e6),
    ),
}


# Random requests per level (full only), of workloads and token counts that answer in about a
# second each.
RANDOM_REQUESTS = {"smallest": 0, "quick": 0, "full": 150}
RANDOM_SEED = 7
RANDOM_WORKLOADS = (
    ("llama3-8b", 1e12),
    ("llama3-70b", 1e12),
    ("mpt-7b", 3e11),
    ("mixtral-8x7b", 3e11),
    ("mpt-30b", 3e11),
    ("gpt3-175b", 1e11),
)
BUDGETS_USD = (3e5, 1e6, 3e6, 1e7, 3e7)


def random_requests(n: int, seed: int = RANDOM_SEED) -> list[optimize_pb2.OptimizeRequest]:
    """``n`` seeded random requests: a catalog, a workload, min-cost under a deadline (and
    sometimes a budget) or min-time under a budget (and sometimes a deadline), and each of
    the power, rack, GPU, NIC-rate, fabric and topology limits now and then."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        model, tokens = rng.choice(RANDOM_WORKLOADS)
        c = optimize_pb2.Constraints()
        if rng.random() < 2 / 3:
            objective = "min-cost"
            c.target_training_hours = rng.choice((50, 100, 200, 400, 800, 2000))
            if rng.random() < 0.4:
                c.budget_usd = rng.choice(BUDGETS_USD)
        else:
            objective = "min-time"
            c.budget_usd = rng.choice(BUDGETS_USD)
            if rng.random() < 0.3:
                c.target_training_hours = rng.choice((100, 400, 2000))
        if rng.random() < 0.25:
            c.max_power_kw = rng.choice((15, 40, 100, 300))
        if rng.random() < 0.15:
            c.max_racks = rng.choice((1, 2, 4))
        if rng.random() < 0.25:
            c.min_nic_gbps_per_gpu = rng.choice((50, 100, 200, 400))
        if rng.random() < 0.15:
            c.max_gpus = rng.choice((8, 16, 64))
        r = optimize_pb2.OptimizeRequest(
            catalog=rng.choice(CATALOGS),
            workload=estimate_pb2.Workload(model=model, training_tokens=tokens),
            constraints=c,
            objective=objective,
        )
        if rng.random() < 0.3:
            r.allowed_fabrics.extend(rng.sample(("infiniband", "roce", "ethernet"), 2))
        if rng.random() < 0.25:
            r.allowed_topologies.extend(
                rng.sample(("single_switch", "fat_tree", "rail_optimized", "dragonfly", "torus"), 2)
            )
        out.append(r)
    return out


class Answer(NamedTuple):
    """What a level's answer is compared on: status (or the refusal), each design's capex and
    hours, and each design's bill of materials (SKU, where, quantity)."""

    status: str
    designs: tuple[tuple[float, float], ...]
    boms: tuple[tuple[tuple[str, str, int], ...], ...] = ()

    def same_designs(self, other: Answer) -> bool:
        return (self.status, self.designs) == (other.status, other.designs)


def _answer_to(request: optimize_pb2.OptimizeRequest) -> Answer:
    try:
        r = api.optimize(request)
    except InvalidInput as e:
        return Answer(f"refused: {e}", ())
    return Answer(
        r.status,
        tuple((d.capex_usd, d.training_time_hours) for d in r.designs),
        tuple(tuple(sorted((b.sku, b.tier, b.quantity) for b in d.bom)) for d in r.designs),
    )


def _answers(requests: list[optimize_pb2.OptimizeRequest], level: int) -> list[Answer]:
    cpsat.LINEARIZATION_LEVEL = level  # in the child process only (benchmarks.measure.isolated)
    return [_answer_to(r) for r in requests]


def run(level: str, out: Path) -> list[Table]:
    table = Table(
        "CP-SAT LP relaxation: level 1 (default) vs level 2 (ours), whole request",
        (
            "request",
            "status",
            "designs",
            "level 1 wall s",
            "level 2 wall s",
            "level 1 / level 2",
            "same answer",
        ),
    )
    differing = 0
    for instance in INSTANCES[level]:
        measured = {
            lp: isolated(_answers, [instance.request()], lp, timeout_s=POINT_TIMEOUT_S)
            for lp in LEVELS
        }
        one, two = measured[1], measured[2]
        same = one.value == two.value
        differing += not same
        table.add(
            instance.name,
            two.value[0].status,
            len(two.value[0].designs),
            one.wall_s,
            two.wall_s,
            one.wall_s / two.wall_s,
            "yes" if same else "NO",
        )
    table.notes.append(
        f"{differing} request(s) answered differently (status, designs or bills of materials). "
        "Each request runs once per level in a fresh process (catalog loading and the "
        "estimator's caches start cold in both)."
    )
    tables = [table]
    if RANDOM_REQUESTS[level]:
        tables.append(_random_table(RANDOM_REQUESTS[level]))
    publish(
        "cpsat_linearization",
        tables,
        out,
        {"level": level, "levels": list(LEVELS), "random_seed": RANDOM_SEED},
    )
    return tables


def _random_table(n: int) -> Table:
    requests = random_requests(n)
    measured = {
        lp: isolated(_answers, requests, lp, timeout_s=n * POINT_TIMEOUT_S) for lp in LEVELS
    }
    pairs = list(zip(measured[1].value, measured[2].value, strict=True))
    table = Table(
        f"CP-SAT LP relaxation on {n} random requests (seed {RANDOM_SEED})",
        (
            "requests",
            "identical",
            "same designs, other link mix",
            "different designs",
            "level 1 wall s",
            "level 2 wall s",
            "level 1 / level 2",
        ),
    )
    identical = sum(a == b for a, b in pairs)
    designs_only = sum(a != b and a.same_designs(b) for a, b in pairs)
    table.add(
        n,
        identical,
        designs_only,
        n - identical - designs_only,
        measured[1].wall_s,
        measured[2].wall_s,
        measured[1].wall_s / measured[2].wall_s,
    )
    table.notes.append(
        "Identical: the same status (or refusal), designs and bills of materials (SKU, where, "
        "quantity). Each level answers all the requests in one fresh process, in order."
    )
    return table


if __name__ == "__main__":
    module_main(run, __doc__)
