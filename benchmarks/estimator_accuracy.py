"""Print the estimator's error on every published measured run (the table in
docs/performance-model.md), and with ``--fit`` the kernel efficiency per GPU generation that
minimises the worst relative error of hardware TFLOP/s (one constant per generation, fitted on
all its points at once).

Run: python -m benchmarks.estimator_accuracy [--fit]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace

from optimizer.performance import calibration
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import PublishedCase, calibration_cases


def relative_error(case: PublishedCase) -> float:
    est = plan_and_estimate(case.workload, case.cluster, case.fixed)
    return est.hardware_tflops_per_gpu / case.measured_hardware_tflops_per_gpu - 1


def fit_generation(name: str, cases: list[PublishedCase]) -> tuple[float, float, float]:
    """(best efficiency, min error, max error) by golden-section search on the worst error."""
    mine = [c for c in cases if calibration.generation(c.cluster.gpu_model).name == name]
    original = calibration.GENERATIONS[name]

    def errors(eff: float) -> list[float]:
        calibration.set_generation(
            replace(
                original,
                kernel_efficiency=eff,
                kernel_efficiency_low=eff,
                kernel_efficiency_high=eff,
            )
        )
        return [relative_error(c) for c in mine]

    lo, hi = 0.3, 0.95
    for _ in range(30):
        a, b = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        if max(map(abs, errors(a))) < max(map(abs, errors(b))):
            hi = b
        else:
            lo = a
    best = (lo + hi) / 2
    errs = errors(best)
    calibration.set_generation(original)
    return best, min(errs), max(errs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fit", action="store_true", help="fit kernel efficiencies first")
    args = parser.parse_args()
    cases = calibration_cases()
    if args.fit:
        for name in ("A100", "H100"):
            eff, lo, hi = fit_generation(name, cases)
            print(f"fit {name}: kernel_efficiency={eff:.3f}  error range {lo:+.3f}..{hi:+.3f}")
    print(
        "| case | source | GPUs | plan (t,p,d,vp,zero,mb) | measured TFLOP/s/GPU | "
        "estimated | error |"
    )
    print("|---|---|---|---|---|---|---|")
    errors: list[float] = []
    for c in cases:
        est = plan_and_estimate(c.workload, c.cluster, c.fixed)
        err = est.hardware_tflops_per_gpu / c.measured_hardware_tflops_per_gpu - 1
        errors.append(abs(err))
        p = est.plan
        print(
            f"| {c.id} | {c.source.split(',')[0]} | {c.cluster.gpus} | "
            f"{p.tensor},{p.pipeline},{p.data},{p.virtual_pipeline},{p.zero_stage},"
            f"{p.micro_batch_size} | {c.measured_hardware_tflops_per_gpu:.1f} | "
            f"{est.hardware_tflops_per_gpu:.1f} | {err:+.1%} |"
        )
        if c.measured_training_days is not None:
            days = est.productive_training_time_hours / 24  # the paper's days are failure-free
            print(
                f"| {c.id} (training time) | | | | {c.measured_training_days:g} days | "
                f"{days:.1f} days | {days / c.measured_training_days - 1:+.1%} |"
            )
    print(
        f"\n{len(errors)} points: median |error| {statistics.median(errors):.1%}, "
        f"worst {max(errors):.1%}"
    )


if __name__ == "__main__":
    main()
