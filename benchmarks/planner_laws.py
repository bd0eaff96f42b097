"""Planner laws over a sweep: more GPUs must never make the planned step slower.

The planner may leave GPUs idle, so a cluster of n GPUs can always run the best plan of any
smaller cluster it contains; a point is a violation when its planned training time exceeds
the best time of any smaller GPU count of the same (preset, fabric) series (issue 14,
defect 7). Run: python -m benchmarks.planner_laws [--system h100|a100] [--show N]
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from optimizer.errors import InvalidInput
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import Estimate
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, SELENE, GpuSystem, cluster_for
from optimizer.workload.presets import preset, preset_names

# Whole 8-GPU nodes, powers of two and the 1.5x steps between them (96 -> 192 is where
# BERT-Large on Ethernet went 2.7x slower before issue 14).
GPU_COUNTS = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
FABRICS = ("infiniband", "roce", "ethernet")
SYSTEMS = {"h100": HGX_H100, "a100": SELENE}
TOLERANCE = 1e-9  # relative: float noise is not a violation


@dataclass(frozen=True)
class Violation:
    """A point slower than a smaller GPU count of its series."""

    preset: str
    fabric: str
    gpus: int
    training_time_hours: float
    smaller_gpus: int
    smaller_training_time_hours: float

    @property
    def slowdown(self) -> float:
        return self.training_time_hours / self.smaller_training_time_hours


@dataclass(frozen=True)
class SweepResult:
    points: int  # feasible (preset, fabric, GPU count) points
    infeasible: int
    violations: tuple[Violation, ...]


def series_violations(
    name: str, fabric: str, times: Iterable[tuple[int, float]]
) -> list[Violation]:
    """Points of one series (ascending GPU counts) slower than the best smaller count."""
    out: list[Violation] = []
    best: tuple[int, float] | None = None
    for gpus, hours in times:
        if best is not None and hours > best[1] * (1 + TOLERANCE):
            out.append(Violation(name, fabric, gpus, hours, best[0], best[1]))
        if best is None or hours < best[1]:
            best = (gpus, hours)
    return out


def sweep(
    system: GpuSystem = HGX_H100,
    presets: Iterable[str] | None = None,
    gpu_counts: Iterable[int] = GPU_COUNTS,
    fabrics: Iterable[str] = FABRICS,
) -> SweepResult:
    """Plan every (preset, fabric, GPU count) point and collect the monotonicity violations."""
    points = infeasible = 0
    violations: list[Violation] = []
    counts = sorted(gpu_counts)
    for name, fabric in itertools.product(presets or preset_names(), fabrics):
        w = preset(name)
        times: list[tuple[int, float]] = []
        for gpus in counts:
            try:
                cluster = cluster_for(system, gpus, fabric=fabric)
                est: Estimate = plan_and_estimate(w, cluster, why=False)
            except (PlanInfeasible, InvalidInput):
                infeasible += 1
                continue
            points += 1
            times.append((gpus, est.training_time_hours))
        violations.extend(series_violations(name, fabric, times))
    return SweepResult(points, infeasible, tuple(violations))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--system", choices=sorted(SYSTEMS), default="h100")
    parser.add_argument("--show", type=int, default=10, help="worst violations to list")
    args = parser.parse_args()
    result = sweep(SYSTEMS[args.system])
    print(
        f"{result.points} feasible points ({result.infeasible} infeasible), "
        f"{len(result.violations)} slower than a smaller GPU count"
    )
    worst = sorted(result.violations, key=lambda v: v.slowdown, reverse=True)
    for v in worst[: args.show]:
        print(
            f"  {v.preset} on {v.fabric}: {v.smaller_gpus} -> {v.gpus} GPUs, "
            f"{v.smaller_training_time_hours:,.1f} -> {v.training_time_hours:,.1f} h "
            f"({v.slowdown:.2f}x slower)"
        )


if __name__ == "__main__":
    main()
