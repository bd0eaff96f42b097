"""A calibration profile: the model's few free parameters fitted to a user's measurements
(issue 14, ``procure calibrate``).

A profile scales the built-in kernel efficiency of one GPU generation (its FP8 runs' apart
where both precisions were measured) and the element-wise (memory-bound) work of its runs,
replaces the delivered / line-rate efficiency of the fabrics nccl-tests measured, and sets
the framework's collective efficiency and per-step overhead.
It is a frozen record of tuples so that it can key the estimator's scenario cache
(``estimator.scenario_for``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

from optimizer.performance import calibration as fitted
from optimizer.performance.calibration import GpuGeneration

METRICS = ("step_time_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu")
PARAMETERS = (
    "kernel_efficiency",
    "fp8_kernel_efficiency",
    "elementwise_scale",
    "fabric_efficiency",
    "collective_efficiency",
    "step_overhead_s",
)
MAX_RESIDUAL_SPREAD = 0.5
# The low/high spread of a calibrated model's efficiencies is never narrower than this. A
# profile fitted on two small runs misses the large runs of the published series by up to
# 16.1 % of TFLOP/s (Megatron-LM SC'21 Table 1 at 1,024 GPUs), all over-predictions; only the
# fitted efficiencies widen, so the time range is about 3/4 of the spread, and 22 % is the
# smallest whole percent whose range holds every measured run
# (tests/test_calibrate_extrapolation.py, docs/performance-model.md).
MIN_RESIDUAL_SPREAD = 0.22
# A fitted per-step overhead is extrapolated as a fixed cost. An estimate whose step is at most
# 1/EXTRAPOLATED_STEP_RATIO of the shortest calibrated one, with the overhead at least
# OVERHEAD_NOTE_SHARE of it, says so: two scales cannot tell a fixed cost from a loss that grows
# with the scale (communication, stragglers), and on short steps the two part ways.
EXTRAPOLATED_STEP_RATIO = 2.0
OVERHEAD_NOTE_SHARE = 0.05
# How every note of notes_for begins: the optimizer lifts them out of its designs' estimates.
NOTE_PREFIX = "calibration profile"


@dataclass(frozen=True)
class CalibratedFabric:
    """A fabric's delivered / line-rate bandwidth as nccl-tests measured it."""

    fabric: str
    efficiency: float


@dataclass(frozen=True)
class CalibrationPoint:
    """One measurement the profile was fitted on and the calibrated model's prediction."""

    label: str
    metric: str
    measured: float
    predicted: float
    residual: float  # predicted / measured - 1
    gpus: int = 0
    step_time_s: float = 0.0  # the calibrated model's step at this run; 0: not recorded


class _Case(Protocol):
    """The scenario constants a profile overrides (``estimator.EstimateCase``)."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @property
    def kernel_efficiency(self) -> float: ...
    @property
    def fabric_efficiency(self) -> float: ...
    @property
    def collective_efficiency(self) -> float: ...
    @property
    def step_overhead_s(self) -> float: ...
    @property
    def elementwise_scale(self) -> float: ...


CaseT = TypeVar("CaseT", bound=_Case)


@dataclass(frozen=True)
class CalibrationProfile:
    """Fitted parameters; hashable (it keys the estimator's scenario cache).

    ``None`` (or an empty tuple) leaves the built-in value of a parameter; ``fitted`` names the
    parameters the data determined, ``points`` the measurements with their residuals.
    """

    gpu_generation: str = ""
    kernel_efficiency_scale: float | None = None
    kernel_efficiency: float = 0.0  # the fitted expected value, for the reader
    fabrics: tuple[CalibratedFabric, ...] = ()
    collective_efficiency: float | None = None
    step_overhead_s: float | None = None
    fitted: tuple[str, ...] = ()
    points: tuple[CalibrationPoint, ...] = ()
    residual_spread: float = MIN_RESIDUAL_SPREAD
    tool_version: str = ""
    notes: tuple[str, ...] = ()
    # x the built-in element-wise work of gpu_generation's runs (the framework's fusion)
    elementwise_scale: float | None = None
    # x the kernel efficiency of gpu_generation's FP8 runs, on top of kernel_efficiency_scale:
    # their FP8 GEMMs' speed over the built-in FP8/BF16 ratio's (fitted from runs in both)
    fp8_kernel_efficiency_scale: float | None = None

    @property
    def range_spread(self) -> float:
        """Relative spread of the fitted efficiencies the low/high scenarios use: the largest
        residual, at least MIN_RESIDUAL_SPREAD (what extrapolation misses by), at most
        MAX_RESIDUAL_SPREAD."""
        return max(MIN_RESIDUAL_SPREAD, min(self.residual_spread, MAX_RESIDUAL_SPREAD))

    def kernel_scale_for(self, gen: GpuGeneration, fp8: bool = False) -> float | None:
        """The fitted kernel-efficiency scale where it is ``gen``'s (fitted on its runs); for
        an FP8 run (``fp8``) times the FP8 runs' own scale where one was fitted."""
        if gen.name != self.gpu_generation:
            return None
        if not fp8 or self.fp8_kernel_efficiency_scale is None:
            return self.kernel_efficiency_scale
        return (self.kernel_efficiency_scale or 1.0) * self.fp8_kernel_efficiency_scale

    @property
    def calibrated_steps_s(self) -> tuple[float, float] | None:
        """(shortest, longest) step of the calibrated model at the measured runs; None for a
        profile that did not record them."""
        steps = [p.step_time_s for p in self.points if p.step_time_s > 0]
        return (min(steps), max(steps)) if steps else None

    def notes_for(self, gen: GpuGeneration, fabric: str, step_s: float) -> list[str]:
        """What of this profile an estimate of ``gen`` on ``fabric`` with a ``step_s`` step
        does not use, or stretches past what it was fitted on, and why."""
        notes = []
        steps = self.calibrated_steps_s
        overhead = self.step_overhead_s
        if (
            "step_overhead_s" in self.fitted
            and overhead is not None
            and overhead > fitted.COMPUTE.step_overhead_s  # else the low end keeps it
            and steps is not None
            and step_s * EXTRAPOLATED_STEP_RATIO <= steps[0]
            and overhead >= OVERHEAD_NOTE_SHARE * step_s
        ):
            notes.append(  # the same for every step it concerns: the optimizer lists it once
                f"{NOTE_PREFIX}: its fitted step overhead ({overhead:.3g} s, at most "
                f"{overhead / steps[0]:.0%} of the steps it was fitted on: {steps[0]:.3g}-"
                f"{steps[1]:.3g} s) weighs more on a step under half as long; the runs cannot "
                "tell a fixed cost from a loss that grows with the scale, so the low end of the "
                "range takes the built-in overhead; a measured run with a step nearer this one "
                "pins it down"
            )
        scales = (self.kernel_efficiency_scale, self.fp8_kernel_efficiency_scale)
        if scales != (None, None) and gen.name != self.gpu_generation:
            notes.append(
                f"{NOTE_PREFIX} fitted on {self.gpu_generation}: the {gen.name} kernel "
                "efficiency is the built-in one"
            )
        if self.elementwise_scale is not None and gen.name != self.gpu_generation:
            notes.append(
                f"{NOTE_PREFIX} fitted on {self.gpu_generation}: the {gen.name} element-wise "
                "work is the built-in one"
            )
        if self.fabrics and self.fabric_efficiency(fabric) is None:
            measured = ", ".join(f.fabric for f in self.fabrics)
            notes.append(
                f"{NOTE_PREFIX} measured {measured}, not {fabric}: its fabric "
                "efficiency is the built-in one"
            )
        return notes

    def fabric_efficiency(self, fabric: str) -> float | None:
        """The measured efficiency of ``fabric``; None when nccl-tests did not measure it."""
        return next((f.efficiency for f in self.fabrics if f.fabric == fabric), None)

    def apply(
        self, case: CaseT, gen: GpuGeneration, fabric: str, scenario: str, fp8: bool = False
    ) -> CaseT:
        """``case`` (one scenario's constants for ``gen`` on ``fabric``, of an FP8 run where
        ``fp8``) with this profile's parameters. The expected scenario takes the fitted
        values; the optimistic and pessimistic ones widen each fitted efficiency by the
        residual spread s (x 1/(1 - s) and x 1/(1 + s), as the built-in ranges do), so the
        range brackets the fit, and take
        the smaller and the larger of the fitted and the built-in step overhead: what two
        scales attribute to a fixed cost per step may be a loss that grows with the scale
        instead, which a shorter step (more GPUs on the same batch) does not pay in full. The
        element-wise scale and the collective efficiency are the fitted ones in every
        scenario: the kernel efficiency's widening carries the compute's range."""
        spread = self.range_spread
        widen = {"expected": 1.0, "optimistic": 1 / (1 - spread), "pessimistic": 1 / (1 + spread)}[
            scenario
        ]
        changes: dict[str, float] = {}
        scale = self.kernel_scale_for(gen, fp8)
        if scale is not None:
            kernel = gen.efficiency("expected") * scale * widen
            changes["kernel_efficiency"] = min(1.0, kernel)
        if self.elementwise_scale is not None and gen.name == self.gpu_generation:
            changes["elementwise_scale"] = self.elementwise_scale
        measured = self.fabric_efficiency(fabric)
        if measured is not None:
            changes["fabric_efficiency"] = min(1.0, measured * widen)
        if self.collective_efficiency is not None:
            changes["collective_efficiency"] = self.collective_efficiency
        if self.step_overhead_s is not None:
            overhead = self.step_overhead_s
            if scenario == "optimistic":
                overhead = min(overhead, case.step_overhead_s)
            elif scenario == "pessimistic":
                overhead = max(overhead, case.step_overhead_s)
            changes["step_overhead_s"] = overhead
        return dataclasses.replace(case, **changes)
