"""Print the estimator's error on every case of the visible published set (the table in
docs/performance-model.md): the published runs (validation.calibration_cases) and the paper
configurations (data/paper-configs.json). It first prints the fit: the kernel efficiency per
GPU generation that minimises the worst relative error of hardware TFLOP/s (one constant per
generation, fitted on all its visible points at once; issue 14 asks for the fit on visible data
to be printed by the plain command, so ``--fit`` is only kept as an accepted flag). Then a
held-out check: the same fit without the runs of >= 2,048 GPUs, and those runs' errors under
it (our proxy for large runs the project has not seen). A case today's estimator refuses is
listed as "not modelled yet" with the refusal, never a crash.

Run: python -m benchmarks.estimator_accuracy [--fit]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from optimizer.errors import InvalidInput
from optimizer.performance import calibration
from optimizer.performance.estimator import Estimate
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import PublishedCase, visible_cases

HELD_OUT_MIN_GPUS = 2048  # runs this large are held out of the held-out fit
VISIBLE_TARGET = (0.05, 0.12)  # issue 14 acceptance: median, worst |error| on the visible set
HELD_OUT_TARGET = (0.08, 0.20)  # issue 14 acceptance on large runs the project has not seen


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


def estimate_or_refusal(case: PublishedCase) -> Estimate | str:
    """The estimate of ``case`` under its fixed plan, or why the estimator refuses it (a
    refusal names its field and never ends the report; any other error is a bug and does)."""
    try:
        return plan_and_estimate(case.workload, case.cluster, case.fixed)
    except InvalidInput as exc:
        return f"not modelled yet: {exc}"


def generations(cases: list[PublishedCase]) -> list[str]:
    """The GPU generations the cases run on, in a stable order."""
    return sorted({calibration.generation(c.cluster.gpu_model).name for c in cases})


@contextmanager
def kernel_efficiency(name: str, efficiency: float) -> Iterator[None]:
    """Generation ``name`` at one kernel efficiency for the duration (the parameterisation
    fit_generation searches), restored after."""
    original = calibration.GENERATIONS[name]
    calibration.set_generation(
        replace(
            original,
            kernel_efficiency=efficiency,
            kernel_efficiency_low=efficiency,
            kernel_efficiency_high=efficiency,
        )
    )
    try:
        yield
    finally:
        calibration.set_generation(original)


def _plan_cell(case: PublishedCase, est: Estimate | str) -> str:
    """t,c,p,d,vp,zero,mb of the plan estimated, or of the fixed plan ('-' = not fixed)."""
    if isinstance(est, str):
        f = case.fixed
        values: tuple[int | None, ...] = (
            f.tensor,
            f.context,
            f.pipeline,
            f.data,
            f.virtual_pipeline,
            f.zero_stage,
            f.micro_batch_size,
        )
        return ",".join("-" if v is None else str(v) for v in values)
    p = est.plan
    return (
        f"{p.tensor},{p.context},{p.pipeline},{p.data},{p.virtual_pipeline},"
        f"{p.zero_stage},{p.micro_batch_size}"
    )


def _summary(errors: list[float], target: tuple[float, float]) -> str:
    if not errors:
        return "0 points"
    median, worst = statistics.median(errors), max(errors)
    verdict = "meets" if median <= target[0] and worst <= target[1] else "misses"
    return (
        f"{len(errors)} points: median |error| {median:.1%}, worst {worst:.1%} "
        f"({verdict} the target median <= {target[0]:.0%}, worst <= {target[1]:.0%})"
    )


def print_visible_table(cases: list[PublishedCase]) -> list[float]:
    """One row per case (and per stated training time); returns the |errors| of the modelled."""
    print(
        "| case | source | GPUs | plan (t,c,p,d,vp,zero,mb) | measured TFLOP/s/GPU | "
        "estimated | error |"
    )
    print("|---|---|---|---|---|---|---|")
    errors: list[float] = []
    for c in cases:
        est = estimate_or_refusal(c)
        row = (
            f"| {c.id} | {c.source.split(',')[0]} | {c.cluster.gpus} | {_plan_cell(c, est)} | "
            f"{c.measured_hardware_tflops_per_gpu:.1f} | "
        )
        if isinstance(est, str):
            print(row + f"{est} | |")
            continue
        err = est.hardware_tflops_per_gpu / c.measured_hardware_tflops_per_gpu - 1
        errors.append(abs(err))
        print(row + f"{est.hardware_tflops_per_gpu:.1f} | {err:+.1%} |")
        if c.measured_training_days is not None:
            days = est.productive_training_time_hours / 24  # the paper's days are failure-free
            print(
                f"| {c.id} (training time) | | | | {c.measured_training_days:g} days | "
                f"{days:.1f} days | {days / c.measured_training_days - 1:+.1%} |"
            )
    return errors


def print_held_out(cases: list[PublishedCase], refused: dict[str, str]) -> None:
    """Fit on the modelled runs of fewer than HELD_OUT_MIN_GPUS GPUs; print the larger runs'
    errors under that fit (a refused one as not modelled yet)."""
    seen = [c for c in cases if c.cluster.gpus < HELD_OUT_MIN_GPUS and c.id not in refused]
    held = [c for c in cases if c.cluster.gpus >= HELD_OUT_MIN_GPUS]
    print(
        f"\nHeld-out check: the same fit on the {len(seen)} visible runs of fewer than "
        f"{HELD_OUT_MIN_GPUS:,} GPUs, then the {len(held)} larger runs predicted with it"
    )
    fitted: dict[str, float] = {}
    for name in generations([c for c in held if c.id not in refused]):
        mine = [c for c in seen if calibration.generation(c.cluster.gpu_model).name == name]
        if not mine:
            print(f"fit {name}: no smaller run to fit on; the committed constant is used")
            continue
        eff, lo, hi = fit_generation(name, mine)
        fitted[name] = eff
        print(
            f"fit {name} without the large runs ({len(mine)} points): "
            f"kernel_efficiency={eff:.3f}  error range {lo:+.3f}..{hi:+.3f}"
        )
    print("| held-out case | GPUs | measured TFLOP/s/GPU | estimated | error |")
    print("|---|---|---|---|---|")
    errors: list[float] = []
    for c in held:
        if c.id in refused:
            print(
                f"| {c.id} | {c.cluster.gpus} | {c.measured_hardware_tflops_per_gpu:.1f} | "
                f"{refused[c.id]} | |"
            )
            continue
        name = calibration.generation(c.cluster.gpu_model).name
        original = calibration.GENERATIONS[name].kernel_efficiency
        with kernel_efficiency(name, fitted.get(name, original)):
            err = relative_error(c)
            estimated = c.measured_hardware_tflops_per_gpu * (1 + err)
        errors.append(abs(err))
        print(
            f"| {c.id} | {c.cluster.gpus} | {c.measured_hardware_tflops_per_gpu:.1f} | "
            f"{estimated:.1f} | {err:+.1%} |"
        )
    print(f"\nHeld-out runs: {_summary(errors, HELD_OUT_TARGET)}")
    not_modelled = [c.id for c in held if c.id in refused]
    if not_modelled:
        print(f"{len(not_modelled)} not modelled yet: {', '.join(not_modelled)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--fit", action="store_true", help="accepted for compatibility: the fit is always printed"
    )
    parser.parse_args()
    cases = visible_cases()
    refused = {c.id: r for c in cases if isinstance(r := estimate_or_refusal(c), str)}
    modelled = [c for c in cases if c.id not in refused]
    for name in generations(modelled):
        eff, lo, hi = fit_generation(name, modelled)
        print(f"fit {name}: kernel_efficiency={eff:.3f}  error range {lo:+.3f}..{hi:+.3f}")
    errors = print_visible_table(cases)
    print(f"\nVisible set: {_summary(errors, VISIBLE_TARGET)}")
    if refused:
        print(f"{len(refused)} not modelled yet: {', '.join(refused)}")
    print_held_out(cases, refused)


if __name__ == "__main__":
    main()
