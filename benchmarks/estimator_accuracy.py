"""Print the estimator's error on every published measured run (the table in
docs/performance-model.md), and with ``--fit`` the compute constants fitted by least squares
on them: the large-GEMM kernel efficiency of A100 and H100, the GEMM main-loop overhead, the
attention efficiency, the straggler share and the per-step overhead (``--fit --write`` puts
them into optimizer/performance/calibration.py).

Run: python -m benchmarks.estimator_accuracy [--fit [--write]]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from optimizer.performance import calibration, compute
from optimizer.performance.estimator import scenario_for
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import PublishedCase, calibration_cases

CALIBRATION_PY = Path(calibration.__file__)


def relative_error(case: PublishedCase) -> float:
    est = plan_and_estimate(case.workload, case.cluster, case.fixed)
    return est.hardware_tflops_per_gpu / case.measured_hardware_tflops_per_gpu - 1


# --- the fit (issue 14, compute): least squares over every visible published case -------

FITTED_GENERATIONS = ("A100", "H100")


@dataclass(frozen=True)
class FitParameter:
    """One fitted coefficient: its name as printed, bounds, the fixed point the fit starts
    from (so the fit is a function of the cases alone, whatever calibration.py holds), and
    the digits it is kept to."""

    name: str
    lower: float
    upper: float
    start: float
    decimals: int


FIT_PARAMETERS = (
    *(FitParameter(f"{g}.kernel_efficiency", 0.2, 1.0, 0.6, 3) for g in FITTED_GENERATIONS),
    FitParameter("gemm_inner_overhead_elements", 0.0, 4096.0, 128.0, 0),
    FitParameter("attention_efficiency", 0.2, 1.0, 0.6, 3),
    FitParameter("straggler_per_doubling", 0.0, 0.2, 0.005, 4),
    # Bounded by what a framework's per-step host work costs (tens of ms; docs sec. 7): a
    # larger loss on the visible runs is one framework's, for `procure calibrate` to fit.
    FitParameter("step_overhead_s", 0.0, 0.02, 0.01, 3),
)


def current_parameters() -> list[float]:
    """The coefficients calibration.py holds now, in FIT_PARAMETERS order."""
    k = calibration.COMPUTE
    return [
        *(calibration.GENERATIONS[g].kernel_efficiency for g in FITTED_GENERATIONS),
        k.gemm_inner_overhead_elements,
        k.attention_efficiency,
        k.straggler_per_doubling,
        k.step_overhead_s,
    ]


def apply_parameters(theta: Sequence[float]) -> None:
    """Install ``theta`` as the model's constants (every generation's range collapsed to the
    value, as the fit sees only the expected scenario) and clear the caches they feed."""
    for g, eff in zip(FITTED_GENERATIONS, theta, strict=False):
        gen = calibration.GENERATIONS[g]
        calibration.set_generation(
            replace(
                gen, kernel_efficiency=eff, kernel_efficiency_low=eff, kernel_efficiency_high=eff
            )
        )
    rest = theta[len(FITTED_GENERATIONS) :]
    calibration.set_compute_constants(
        calibration.ComputeConstants(
            gemm_inner_overhead_elements=rest[0],
            attention_efficiency=rest[1],
            straggler_per_doubling=rest[2],
            step_overhead_s=rest[3],
        )
    )
    compute.clear_caches()
    scenario_for.cache_clear()


def residuals(theta: Sequence[float], cases: list[PublishedCase]) -> np.ndarray:
    """Relative errors of hardware TFLOP/s under ``theta``, one per case."""
    apply_parameters(theta)
    return np.array([relative_error(c) for c in cases])


@dataclass(frozen=True)
class FitResult:
    parameters: tuple[float, ...]  # rounded to each FitParameter's decimals
    errors: tuple[float, ...]  # relative error per case at the rounded parameters
    worst_by_generation: dict[str, float]


def fit(cases: list[PublishedCase], iterations: int = 200) -> FitResult:
    """Levenberg-Marquardt least squares of the relative errors (Jacobian by finite
    differences, steps projected into the bounds) from each parameter's fixed start, so
    the same cases always give the same constants. Leaves the model's constants as they
    were."""
    saved_generations = {g: calibration.GENERATIONS[g] for g in FITTED_GENERATIONS}
    saved_constants = calibration.COMPUTE
    lower = np.array([p.lower for p in FIT_PARAMETERS])
    upper = np.array([p.upper for p in FIT_PARAMETERS])
    span = upper - lower
    free = span > 0  # a parameter pinned by its bounds is not fitted
    x = np.array([p.start for p in FIT_PARAMETERS])
    try:
        r = residuals(x, cases)
        cost = float(r @ r)
        damping = 1e-3
        for _ in range(iterations):
            # Central differences over 0.1% of each range: the planner's discrete choices
            # make the errors piecewise smooth, and a wider step sees through the seams.
            jac = np.zeros((len(r), len(x)))
            for i in np.flatnonzero(free):
                step = 1e-3 * span[i]
                hi, lo = x.copy(), x.copy()
                hi[i], lo[i] = min(upper[i], x[i] + step), max(lower[i], x[i] - step)
                jac[:, i] = (residuals(hi, cases) - residuals(lo, cases)) / (hi[i] - lo[i])
            a, g = jac.T @ jac, jac.T @ r
            scale = np.diag(a) + 1e-12
            accepted = False
            while damping < 1e6:
                candidate = np.clip(
                    x - np.linalg.solve(a + damping * np.diag(scale), g), lower, upper
                )
                rc = residuals(candidate, cases)
                if float(rc @ rc) < cost:
                    moved = np.max(np.abs(candidate - x)[free] / span[free])
                    x, r, cost, damping = candidate, rc, float(rc @ rc), damping / 3
                    accepted = moved > 1e-6
                    break
                damping *= 4
            if not accepted:
                break
        rounded = tuple(round(float(v), p.decimals) for v, p in zip(x, FIT_PARAMETERS, strict=True))
        errors = residuals(rounded, cases)
        worst = {
            g: float(
                max(
                    abs(e)
                    for e, c in zip(errors, cases, strict=True)
                    if calibration.generation(c.cluster.gpu_model).name == g
                )
            )
            for g in FITTED_GENERATIONS
        }
        return FitResult(rounded, tuple(float(e) for e in errors), worst)
    finally:
        for gen in saved_generations.values():
            calibration.set_generation(gen)
        calibration.set_compute_constants(saved_constants)
        compute.clear_caches()
        scenario_for.cache_clear()


def kernel_efficiency_range(result: FitResult, generation: str) -> tuple[float, float, float]:
    """(low, expected, high) of a fitted generation: expected / (1 + worst error) and
    expected / (1 - worst error), so the range brackets every one of its points."""
    eff = result.parameters[FITTED_GENERATIONS.index(generation)]
    worst = result.worst_by_generation[generation]
    return round(eff / (1 + worst), 3), eff, round(eff / (1 - worst), 3)


def fitted_block(result: FitResult) -> str:
    """The lines of calibration.py's fitted block for ``result`` (what --write puts there)."""
    lines = [
        f"{g}_KERNEL_EFFICIENCY = {kernel_efficiency_range(result, g)!r}"
        for g in FITTED_GENERATIONS
    ]
    lines.append("COMPUTE = ComputeConstants(")
    for p, v in zip(FIT_PARAMETERS[len(FITTED_GENERATIONS) :], result.parameters[2:], strict=True):
        lines.append(f"    {p.name}={float(v)!r},")
    lines.append(")")
    return "\n".join(lines)


def print_fit(result: FitResult) -> None:
    for g in FITTED_GENERATIONS:
        low, eff, high = kernel_efficiency_range(result, g)
        print(
            f"fit {g}: kernel_efficiency={eff} (low {low}, high {high}; worst error "
            f"{result.worst_by_generation[g]:.3f})"
        )
    for p, v in zip(FIT_PARAMETERS[len(FITTED_GENERATIONS) :], result.parameters[2:], strict=True):
        print(f"fit {p.name}={v}")


def write_fitted_block(result: FitResult, path: Path = CALIBRATION_PY) -> None:
    """Replace the fitted block of calibration.py with ``result`` (``--fit --write``)."""
    text = path.read_text(encoding="utf-8")
    start = text.index("A100_KERNEL_EFFICIENCY = ")
    end = text.index(")\n", text.index("COMPUTE = ComputeConstants(")) + 2
    path.write_text(text[:start] + fitted_block(result) + "\n" + text[end:], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fit", action="store_true", help="fit the compute constants first")
    parser.add_argument(
        "--write", action="store_true", help="with --fit: write the result into calibration.py"
    )
    args = parser.parse_args()
    cases = calibration_cases()
    if args.fit:
        result = fit(cases)
        print_fit(result)
        if args.write:
            write_fitted_block(result)
            print(f"wrote {CALIBRATION_PY}; re-run without --fit to see the table")
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
            days = est.training_time_hours / 24
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
