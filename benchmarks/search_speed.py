"""Search speed before and after, side by side: the service's medium request (the fastest
Llama 3 70B cluster for $300M on roce-spectrum, min-time; tests/service_support.py's
``medium_optimize``) on older commits of this repository and on this tree.

Issue 13's merges made its top 20 take ~44 s (the min-time ranking's whole-model cost stage);
this benchmark keeps that visible. Each tree runs in its own child process (a commit is
unpacked with ``git archive`` into a temporary directory and imported from there), calls
``optimizer.api.optimize`` once per top-K and reports the call's wall and CPU seconds (CPU is
the figure to compare on a shared machine), its status and design count, and a digest of the
designs (identical digests: identical answers, byte for byte). Trees whose model changed
(before issue 13) answer differently by design; the digest shows where answers must match.
Run: python -m benchmarks.search_speed [--level quick] [--ref COMMIT ...]
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

# Commits worth comparing: the last tree before issue 13's merges, and issue 13 merged
# (before the ranking was made fast again).
DEFAULT_REFS = {"before issue 13": "424d580", "issue 13 merged": "28fce23"}
TOP_KS = {"smallest": (5,), "quick": (5, 20), "full": (5, 20)}
RUNS = {"smallest": 1, "quick": 1, "full": 3}
SOLVER_LIMIT_S = 60.0

# Runs in the child, from the tree under test (its own optimizer package and protos).
CHILD = """
import hashlib, json, sys, time
from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
request = optimize_pb2.OptimizeRequest(
    catalog="roce-spectrum",
    workload=estimate_pb2.Workload(model="llama3-70b"),
    objective="min_time",
    constraints=optimize_pb2.Constraints(budget_usd=3e8),
    top_k=int(sys.argv[1]),
    solver=optimize_pb2.SolverOptions(time_limit_s=float(sys.argv[2])),
)
wall, cpu = time.perf_counter(), time.process_time()
response = api.optimize(request)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
digest = hashlib.sha256()
for design in response.designs:
    digest.update(design.SerializeToString(deterministic=True))
print(json.dumps({"wall_s": wall, "cpu_s": cpu, "status": response.status,
                  "designs": len(response.designs), "digest": digest.hexdigest()[:12]}))
"""


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float
    status: str
    designs: int
    digest: str


def unpack(ref: str, into: Path) -> Path:
    """The tree of commit ``ref`` under ``into`` (git archive: no worktree, no checkout)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref], cwd=REPO_ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def timed(tree: Path, top_k: int) -> Timed:
    """One medium request on ``tree`` in a fresh interpreter (cold caches)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(top_k), str(SOLVER_LIMIT_S)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=SOLVER_LIMIT_S * 10,
        check=False,
    )
    if done.returncode != 0:
        msg = f"{tree} top {top_k} exited {done.returncode}: {done.stderr[-800:]}"
        raise RuntimeError(msg)
    return Timed(**json.loads(done.stdout.strip().splitlines()[-1]))


def run(level: str, out: Path, refs: dict[str, str] | None = None) -> list[Table]:
    refs = DEFAULT_REFS if refs is None else refs
    if level == "smallest":
        refs = {}
    table = Table(
        "Search speed: medium_optimize (roce-spectrum, llama3-70b, min-time, $300M)",
        ("tree", "top K", "wall s", "CPU s", "CPU vs this tree", "status", "designs", "digest"),
    )
    with tempfile.TemporaryDirectory(prefix="search-speed-") as tmp:
        trees = {f"{name} ({ref})": unpack(ref, Path(tmp) / ref) for name, ref in refs.items()}
        trees["this tree"] = REPO_ROOT
        results: dict[tuple[str, int], list[Timed]] = {}
        for top_k in TOP_KS[level]:
            for name, tree in trees.items():
                results[(name, top_k)] = [timed(tree, top_k) for _ in range(RUNS[level])]
    for top_k in TOP_KS[level]:
        ours = statistics.median(t.cpu_s for t in results[("this tree", top_k)])
        for name in trees:
            runs = results[(name, top_k)]
            wall = statistics.median(t.wall_s for t in runs)
            cpu = statistics.median(t.cpu_s for t in runs)
            last = runs[-1]
            ratio = f"{cpu / ours:.1f}x"
            table.add(name, top_k, wall, cpu, ratio, last.status, last.designs, last.digest)
    table.notes.append(
        f"Median of {RUNS[level]} run(s) per cell, each in a fresh interpreter; solver time "
        f"limit {SOLVER_LIMIT_S:g} s. CPU s counts every thread of the call (CP-SAT runs one "
        "worker). Equal digests mean byte-identical designs."
    )
    publish("search_speed", [table], out, {"level": level, "refs": refs})
    return [table]


def main() -> None:
    p = parser(__doc__)
    p.add_argument(
        "--ref",
        action="append",
        help="compare against this commit instead of the defaults (repeatable)",
    )
    args = p.parse_args()
    run(args.level, args.out, {ref: ref for ref in args.ref} if args.ref else None)


if __name__ == "__main__":
    main()
