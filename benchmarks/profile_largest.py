"""Where the time goes: cProfile of the largest instance the suite solves (131,072 GPUs' worth
of Llama 3 70B on the bundled InfiniBand catalog, top 10), by phase and by function.

Phases are cumulative times of the functions that implement them; they overlap where one
calls another (the candidate search prices candidates with the BOM builder and times them with
the estimator), so each is read as "time spent in or under it", not as a share of a partition.
Run: python -m benchmarks.profile_largest [--level full]
"""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path

from benchmarks.measure import isolated
from benchmarks.report import Table, module_main, publish
from benchmarks.scale import SOLVER_LIMIT_S, SWEEP_CATALOG, sweep_workload
from benchmarks.scenarios import Scenario, bundled, describe
from optimizer.optimize.solve import optimize

INSTANCE = {"smallest": (64, 1), "quick": (131072, 10), "full": (131072, 10)}
TOP_ENTRIES = 15
# (phase, module path suffix, function name): the code each phase is.
PHASES = (
    ("whole request", "optimize/solve.py", "optimize"),
    ("candidate search", "optimize/search.py", "search"),
    ("  estimator (planner + estimate)", "performance/planner.py", "plan_and_estimate"),
    ("  topology sizing + physical plan", "topology/plan.py", "physical_plan"),
    ("MIP rows", "optimize/problem.py", "build_problem"),
    ("model build", "optimize/formulation.py", "build_model"),
    ("solve (CP-SAT)", "backends/cpsat.py", "solve"),
    ("solve (CBC/HiGHS)", "backends/pulp_backend.py", "solve"),
    ("BOM (build_bom, all callers)", "topology/bom.py", "build_bom"),
    ("verification: BOM check", "topology/check.py", "check_bom"),
    ("verification: re-estimate", "optimize/candidates.py", "reestimate"),
    ("explanation", "optimize/explain.py", "explain_ranked"),
    ("sensitivity", "optimize/explain.py", "sensitivity"),
    ("Pareto front", "optimize/explain.py", "pareto_front"),
)


def _where(key: tuple[str, int, str]) -> str:
    filename, line, name = key
    if filename == "~":
        return name
    short = filename.split("/work/main/")[-1].split("site-packages/")[-1]
    return f"{short}:{line} {name}"


def profiled(gpus: int, top_k: int) -> dict[str, list[tuple[object, ...]]]:
    """Phase and top-entry rows of one profiled optimize call (runs in a child process)."""
    sc = Scenario(SWEEP_CATALOG, gpus, sweep_workload())
    spec = sc.spec(target_hours=sc.target_hours, top_k=top_k, time_limit_s=SOLVER_LIMIT_S)
    catalog = bundled()[SWEEP_CATALOG]
    profile = cProfile.Profile()
    result = profile.runcall(optimize, catalog, spec)
    stats = pstats.Stats(profile)
    raw = stats.stats  # type: ignore[attr-defined]
    total = max(
        ct
        for (f, _, n), (_, _, _, ct, _) in raw.items()
        if f.endswith("optimize/solve.py") and n == "optimize"
    )
    phases = []
    for label, suffix, name in PHASES:
        hits = [
            (nc, ct)
            for (f, _, n), (_, nc, _, ct, _) in raw.items()
            if f.endswith(suffix) and n == name
        ]
        if hits:
            calls = sum(nc for nc, _ in hits)
            cum = sum(ct for _, ct in hits)
            phases.append((label, calls, cum, f"{cum / total:.0%}"))
    by_cum = sorted(raw.items(), key=lambda kv: kv[1][3], reverse=True)[:TOP_ENTRIES]
    by_own = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[:TOP_ENTRIES]
    best = result.designs[0] if result.designs else None
    return {
        "phases": phases,
        "cumulative": [(_where(k), v[1], v[3]) for k, v in by_cum],
        "own": [(_where(k), v[1], v[2]) for k, v in by_own],
        "result": [
            (
                result.status,
                len(result.designs),
                result.candidates_evaluated,
                describe(best.design) if best else "",
            )
        ],
    }


def run(level: str, out: Path) -> list[Table]:
    gpus, top_k = INSTANCE[level]
    found = isolated(profiled, gpus, top_k).value
    title = f"{gpus:,} GPUs' worth of Llama 3 70B, {SWEEP_CATALOG}, top {top_k}, under cProfile"
    phases = Table(
        f"Where the time goes: {title}",
        ("phase", "calls", "cumulative s", "of the request"),
        found["phases"],
    )
    status, designs, timed, design = found["result"][0]
    phases.notes.append(
        f"Result: {status}, {designs} designs, {timed} candidate estimates, "
        f"rank 1 {design}. cProfile roughly doubles pure-Python time."
    )
    cumulative = Table(
        "Top entries by cumulative time", ("function", "calls", "cumulative s"), found["cumulative"]
    )
    own = Table("Top entries by own time", ("function", "calls", "own s"), found["own"])
    tables = [phases, cumulative, own]
    publish("profile_largest", tables, out, {"level": level, "gpus": gpus, "top_k": top_k})
    return tables


if __name__ == "__main__":
    module_main(run, __doc__)
