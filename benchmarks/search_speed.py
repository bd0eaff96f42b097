"""Search speed before and after, side by side: the service's medium request (the fastest
Llama 3 70B cluster for $300M on roce-spectrum, min-time; tests/service_support.py's
``medium_optimize``) on older commits of this repository and on this tree; or (``--request
deepseek-gen-2026``) the fastest DeepSeek-V3 cluster for $50M on gen-2026, whose seven GPU
models search the same sizes under seven memory limits (the planner's caches,
docs/performance-model.md sec. 9); or (``--request deepseek-gen-2026-min-cost``) the cheapest
one training in 1,000 h (the min-cost search's ideal floors, docs/optimizer.md); or
(``--request deepseek-gen-2026-200m``) the fastest for $200M under the default 30 s limit,
where the clock cuts some explanations' claims when the search is slow ("cut claims").

Issue 13's merges made its top 20 take ~44 s (the min-time ranking's whole-model cost stage);
this benchmark keeps that visible. Each tree runs in its own child process (a commit is
unpacked with ``git archive`` into a temporary directory and imported from there), calls
``optimizer.api.optimize`` once per top-K and reports the call's wall and CPU seconds (CPU is
the figure to compare on a shared machine), its status and design count, and a digest of the
designs (identical digests: identical answers, byte for byte). Trees whose model changed
(before issue 13) answer differently by design; the digest shows where answers must match.
Run: python -m benchmarks.search_speed [--level quick] [--request NAME] [--ref COMMIT ...]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import REPO_ROOT
from benchmarks.report import Table, parser, publish


@dataclass(frozen=True)
class Request:
    """One request of the benchmark: its catalog, workload preset, objective, constraints (the
    proto's field names) and solver time limit; the DeepSeek-V3 ones get the time their whole
    answer takes (baseline included)."""

    catalog: str
    model: str
    objective: str
    constraints: dict[str, float]
    limit_s: float

    def title(self) -> str:
        said = ", ".join(
            f"${v / 1e6:g}M" if k == "budget_usd" else f"{v:g} h"
            for k, v in self.constraints.items()
        )
        return f"{self.catalog}, {self.model}, {self.objective.replace('_', '-')}, {said}"


REQUESTS = {
    "medium": Request("roce-spectrum", "llama3-70b", "min_time", {"budget_usd": 3e8}, 60.0),
    "deepseek-gen-2026": Request("gen-2026", "deepseek-v3", "min_time", {"budget_usd": 5e7}, 300.0),
    # at the default time limit (30 s): how many of its claims the clock cuts
    "deepseek-gen-2026-200m": Request(
        "gen-2026", "deepseek-v3", "min_time", {"budget_usd": 2e8}, 30.0
    ),
    # the cheapest DeepSeek-V3 cluster training in 1,000 h: the min-cost search's ideal floors
    "deepseek-gen-2026-min-cost": Request(
        "gen-2026", "deepseek-v3", "min_cost", {"target_training_hours": 1000.0}, 300.0
    ),
}
# Commits worth comparing: the last tree before issue 13's merges, and issue 13 merged
# (before the ranking was made fast again); the tree before the planner's caches were
# counted apart and shared across memory limits; the tree before BOM items were kept across
# price variants and the min-time switch cut started where a faster design is affordable; the
# tree before the planner's candidate arrays were one table; the tree before sizes were
# bounded by their slowest stage and collectives priced once per shape.
DEFAULT_REFS = {
    "medium": {
        "before issue 13": "424d580",
        "issue 13 merged": "28fce23",
        "before the cut guess": "709688a",
    },
    "deepseek-gen-2026": {
        "before the planner caches": "e578520",
        "before the cut guess": "709688a",
        "before the plan table": "0594850",
        "before the size floors": "f282566",
    },
    "deepseek-gen-2026-200m": {
        "before the plan table": "0594850",
        "before the size floors": "f282566",
    },
    "deepseek-gen-2026-min-cost": {"before the floor cap": "3fe88ce"},
}
TOP_KS = {
    "medium": {"smallest": (5,), "quick": (5, 20), "full": (5, 20)},
    "deepseek-gen-2026": {"smallest": (3,), "quick": (3,), "full": (3,)},
    "deepseek-gen-2026-200m": {"smallest": (3,), "quick": (3,), "full": (3,)},
    "deepseek-gen-2026-min-cost": {"smallest": (3,), "quick": (3,), "full": (3,)},
}
RUNS = {"smallest": 1, "quick": 1, "full": 3}

# Runs in the child, from the tree under test (its own optimizer package and protos).
CHILD = """
import hashlib, json, sys, time
from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
catalog, model, objective, constraints, top_k, limit_s = sys.argv[1:]
request = optimize_pb2.OptimizeRequest(
    catalog=catalog,
    workload=estimate_pb2.Workload(model=model),
    objective=objective,
    constraints=optimize_pb2.Constraints(**json.loads(constraints)),
    top_k=int(top_k),
    solver=optimize_pb2.SolverOptions(time_limit_s=float(limit_s)),
)
wall, cpu = time.perf_counter(), time.process_time()
response = api.optimize(request)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
digest = hashlib.sha256()
for design in response.designs:
    digest.update(design.SerializeToString(deterministic=True))
claims = getattr(response, "sensitivity", "") + getattr(response, "baseline", "")
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "status": response.status,
                  "designs": len(response.designs), "digest": digest.hexdigest()[:12],
                  "claims": hashlib.sha256(claims.encode()).hexdigest()[:12],
                  "not_computed": claims.count("not computed")}))
"""


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float
    status: str
    designs: int
    digest: str
    claims: str  # digest of the sensitivity and baseline lines
    not_computed: int  # of their claims, how many the time limit cut


def unpack(ref: str, into: Path) -> Path:
    """The tree of commit ``ref`` under ``into`` (git archive: no worktree, no checkout)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref], cwd=REPO_ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def timed(tree: Path, request: str, top_k: int) -> Timed:
    """One ``request`` on ``tree`` in a fresh interpreter (cold caches)."""
    r = REQUESTS[request]
    args = (r.catalog, r.model, r.objective, json.dumps(r.constraints), str(top_k), str(r.limit_s))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=r.limit_s * 10,
        check=False,
    )
    if done.returncode != 0:
        msg = f"{tree} top {top_k} exited {done.returncode}: {done.stderr[-800:]}"
        raise RuntimeError(msg)
    return Timed(**json.loads(done.stdout.strip().splitlines()[-1]))


def run(
    level: str, out: Path, refs: dict[str, str] | None = None, request: str = "medium"
) -> list[Table]:
    refs = DEFAULT_REFS[request] if refs is None else refs
    if level == "smallest":
        refs = {}
    table = Table(
        f"Search speed: {request} ({REQUESTS[request].title()})",
        (
            "tree",
            "top K",
            "wall s",
            "CPU s",
            "CPU vs this tree",
            "status",
            "designs",
            "digest",
            "claims",
            "cut claims",
        ),
    )
    top_ks = TOP_KS[request][level]
    with tempfile.TemporaryDirectory(prefix="search-speed-") as tmp:
        trees = {f"{name} ({ref})": unpack(ref, Path(tmp) / ref) for name, ref in refs.items()}
        trees["this tree"] = REPO_ROOT
        results: dict[tuple[str, int], list[Timed]] = {}
        for top_k in top_ks:
            for name, tree in trees.items():
                results[(name, top_k)] = [timed(tree, request, top_k) for _ in range(RUNS[level])]
    for top_k in top_ks:
        ours = statistics.median(t.cpu_s for t in results[("this tree", top_k)])
        for name in trees:
            runs = results[(name, top_k)]
            wall = statistics.median(t.wall_s for t in runs)
            cpu = statistics.median(t.cpu_s for t in runs)
            last = runs[-1]
            ratio = f"{cpu / ours:.1f}x"
            table.add(
                name,
                top_k,
                wall,
                cpu,
                ratio,
                last.status,
                last.designs,
                last.digest,
                last.claims,
                last.not_computed,
            )
    table.notes.append(
        f"Median of {RUNS[level]} run(s) per cell, each in a fresh interpreter; solver time "
        f"limit {REQUESTS[request].limit_s:g} s. CPU s counts every thread of the call (CP-SAT "
        "runs one worker). Equal digests mean byte-identical designs; equal claims, the same "
        "sensitivity and baseline text; cut claims: how many of them read 'not computed' "
        "(the time limit ended them)."
    )
    name = "search_speed" if request == "medium" else f"search_speed-{request}"
    publish(name, [table], out, {"level": level, "refs": refs, "request": request})
    return [table]


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--request", choices=sorted(REQUESTS), default="medium")
    p.add_argument(
        "--ref",
        action="append",
        help="compare against this commit instead of the defaults (repeatable)",
    )
    args = p.parse_args()
    refs = {ref: ref for ref in args.ref} if args.ref else None
    run(args.level, args.out, refs, args.request)


if __name__ == "__main__":
    main()
