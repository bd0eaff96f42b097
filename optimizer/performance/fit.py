"""Fit a calibration profile to a team's own measurements (issue 14, ``procure calibrate``).

The data decide what is fitted: nccl-tests outputs give the fabric efficiency directly
(large-message bus bandwidth / line rate per GPU); step measurements identify the kernel
efficiency of the GPU generation, and each further point one more parameter where the points
tell it apart (the best-conditioned set, judged on the Jacobian): first, where runs in both
BF16 and FP8 were measured, the FP8 runs' own kernel efficiency (what sets an FP8 run apart
from a BF16 one is mostly its FP8 GEMMs' speed, which no other parameter stands for); the
element-wise work's
scale (the framework's kernel fusion) where the points' element-wise shares differ (models
of other hidden sizes, other sequences), at any scale; per-step overhead and collective
efficiency only from points at two or more scales (GPU counts), one fewer than the scales.
Each candidate is judged by the real estimator (``plan_and_estimate`` with
the candidate profile), and the parameters minimise the sum of squared relative residuals
(predicted / measured - 1) by a damped Gauss-Newton (Levenberg-Marquardt) search inside
physical bounds.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf import json_format

import optimizer
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.catalog.resolve import resolve_catalog
from optimizer.errors import InvalidInput, ProcurementError
from optimizer.performance import calibration
from optimizer.performance.calibration import CALIBRATED_GENERATIONS, generation
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.convert import request_from_proto
from optimizer.performance.estimator import Estimate
from optimizer.performance.fabrics import DEFAULT_FABRICS, FabricTable
from optimizer.performance.options import ModelOptions
from optimizer.performance.plan import PartialPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.profile import (
    METRICS,
    CalibratedFabric,
    CalibrationPoint,
    CalibrationProfile,
)
from optimizer.request_json import parse_json
from optimizer.request_limits import RANGES, check_estimate
from optimizer.workload.flops import model_flops_per_step
from optimizer.workload.model import Workload

KERNEL = "kernel_efficiency"
FP8 = "fp8_kernel_efficiency"
ELEMENTWISE = "elementwise_scale"
OVERHEAD = "step_overhead_s"
COLLECTIVE = "collective_efficiency"
FABRIC = "fabric_efficiency"
# Parameters only runs at several scales (GPU counts) can tell from the kernel efficiency; the
# element-wise scale needs runs whose element-wise shares differ (other hidden sizes or
# sequences), at any scale.
SCALE_PARAMETERS = (OVERHEAD, COLLECTIVE)
# Smallest singular value (of the column-normalised Jacobian) a parameter set needs to be fitted:
# below it the points cannot tell the parameters apart (e.g. overhead vs kernel efficiency at
# the same per-GPU batch).
MIN_CONDITION = 0.05
# Large messages: rows within this factor of the largest size give the plateau bus bandwidth.
LARGE_MESSAGE_FRACTION = 0.25
PLATEAU_BYTES = 64 * 2**20  # below this largest size the plateau may not be reached (a note)


@dataclass(frozen=True)
class Measurement:
    """One measured run: what ran, and the value of ``metric`` it reached."""

    label: str
    workload: Workload
    cluster: ClusterSpec
    fixed: PartialPlan
    metric: str
    measured: float
    fabrics: FabricTable = field(default_factory=lambda: DEFAULT_FABRICS, hash=False)
    # The entry's place in its file (``measurements[i]``), which errors name; else the label.
    where: str = ""

    @property
    def entry(self) -> str:
        """What an error about this measurement names: its place in the file, or its label."""
        return self.where or self.label

    def estimate(self, profile: CalibrationProfile | None) -> Estimate:
        """The run as the estimator predicts it under ``profile``; a request the estimator
        refuses names the entry's field."""
        try:
            return plan_and_estimate(
                self.workload, self.cluster, self.fixed, self.fabrics, ModelOptions(profile)
            )
        except InvalidInput as e:  # PlanInfeasible included
            path = f"{self.entry}.request" + (f".{e.field}" if e.field else "")
            raise InvalidInput(e.problem, field=path) from None

    def predict(self, profile: CalibrationProfile | None) -> float:
        """The metric as the estimator predicts it under ``profile``."""
        value: float = getattr(self.estimate(profile), self.metric)
        return value


@dataclass(frozen=True)
class NcclRow:
    """One line of an nccl-tests table (out-of-place and in-place results)."""

    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int
    out_of_place_time_us: float
    out_of_place_algbw_gbytes_per_s: float
    out_of_place_busbw_gbytes_per_s: float
    in_place_time_us: float
    in_place_algbw_gbytes_per_s: float
    in_place_busbw_gbytes_per_s: float

    @property
    def busbw_gbytes_per_s(self) -> float:
        return max(self.out_of_place_busbw_gbytes_per_s, self.in_place_busbw_gbytes_per_s)


@dataclass(frozen=True)
class NcclMeasurement:
    """An nccl-tests output and the cluster it ran on (its fabric and line rate)."""

    label: str
    rows: tuple[NcclRow, ...]
    cluster: ClusterSpec
    where: str = ""  # as Measurement.where

    @property
    def entry(self) -> str:
        """As Measurement.entry."""
        return self.where or self.label


def parse_nccl_tests(text: str, where: str) -> tuple[NcclRow, ...]:
    """The result rows of an nccl-tests output (``all_reduce_perf`` and friends).

    Columns: size count type redop root, then time algbw busbw #wrong out-of-place and the
    same in-place; older versions have no ``root`` and tests without a reduction print
    ``none`` as redop. Comment lines (``#``) and the banner are skipped; a row that starts
    with a number but does not parse is an error naming its line.
    """
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens or line.lstrip().startswith("#") or not tokens[0].isdigit():
            continue
        try:
            head, tail = tokens[:-8], tokens[-8:]
            if len(head) not in (4, 5):
                raise ValueError(f"expected 12 or 13 columns, got {len(tokens)}")
            root = int(head[4]) if len(head) == 5 else -1
            oop = [float(tail[i]) for i in (0, 1, 2)]
            inp = [float(tail[i]) for i in (4, 5, 6)]
            if not all(math.isfinite(v) and v >= 0 for v in (*oop, *inp)):
                raise ValueError("times and bandwidths must be finite numbers >= 0")
            rows.append(NcclRow(int(head[0]), int(head[1]), head[2], head[3], root, *oop, *inp))
        except ValueError as e:
            raise InvalidInput(
                f"line {number}: not an nccl-tests result row ({e}): {line.strip()!r}",
                field=where,
            ) from None
    if not rows:
        raise InvalidInput("no nccl-tests result rows (size count type ... busbw)", field=where)
    return tuple(rows)


def fabric_efficiency(m: NcclMeasurement, where: str) -> tuple[float, list[str]]:
    """Delivered / line-rate bandwidth of the run's fabric: the median bus bandwidth of the
    large messages (within LARGE_MESSAGE_FRACTION of the largest) over the NIC line rate per
    GPU. The run must cross the network: inside one node nccl-tests measures NVLink."""
    c = m.cluster
    domain = max(c.gpus_per_node, c.scale_up_domain_gpus)
    if c.gpus <= domain:
        raise InvalidInput(
            f"{c.gpus} GPUs fit in one scale-up domain of {domain}: nccl-tests then measures "
            "the scale-up fabric (NVLink), not the network; give the run's cluster across "
            "domains",
            field=f"{where}.request.cluster.gpus",
        )
    largest = max(r.size_bytes for r in m.rows)
    large = [
        r.busbw_gbytes_per_s for r in m.rows if r.size_bytes >= largest * LARGE_MESSAGE_FRACTION
    ]
    line_gbytes_per_s = c.nic_bytes_per_s_per_gpu / 1e9
    ratio = statistics.median(large) / line_gbytes_per_s
    notes = []
    if largest < PLATEAU_BYTES:
        notes.append(
            f"{m.label}: largest message {largest / 2**20:.0f} MiB; bus bandwidth may not have "
            "reached its plateau (run nccl-tests up to -e 1G or more)"
        )
    if ratio > 1.0:
        notes.append(
            f"{m.label}: bus bandwidth {statistics.median(large):.1f} GB/s exceeds the line rate "
            f"{line_gbytes_per_s:.1f} GB/s per GPU (in-network reduction or a wrong "
            "nic_gbps_per_node?); capped at 1"
        )
    if ratio <= 0:
        raise InvalidInput("the large messages' bus bandwidth is 0", field=f"{where}.nccl_tests")
    return min(1.0, ratio), notes


@dataclass
class _Problem:
    """The points, the fixed part of the profile, and the parameters being fitted."""

    points: Sequence[Measurement]
    base: CalibrationProfile
    names: list[str]
    kernel_builtin: float

    def profile(self, x: np.ndarray) -> CalibrationProfile:
        values = dict(zip(self.names, (float(v) for v in x), strict=True))
        changes: dict[str, float] = {}
        if KERNEL in values:
            changes["kernel_efficiency_scale"] = values[KERNEL]
        if FP8 in values:
            changes["fp8_kernel_efficiency_scale"] = values[FP8]
        if ELEMENTWISE in values:
            changes[ELEMENTWISE] = values[ELEMENTWISE]
        if OVERHEAD in values:
            changes[OVERHEAD] = values[OVERHEAD]
        if COLLECTIVE in values:
            changes[COLLECTIVE] = values[COLLECTIVE]
        return replace(self.base, **changes)  # type: ignore[arg-type]

    def residuals(self, x: np.ndarray) -> np.ndarray:
        profile = self.profile(x)
        return np.array([p.predict(profile) / p.measured - 1 for p in self.points])


def _bounds(name: str, kernel_builtin: float, step_s: float) -> tuple[float, float, float]:
    """(lower, upper, finite-difference step) of a parameter, inside the range a request's
    calibration field accepts (request_limits.RANGES), so every profile written is usable."""
    lo, hi = RANGES[f"procurement.v1.CalibrationProfile.{_PROFILE_FIELDS[name]}"]
    if name in (KERNEL, FP8):  # scales: the calibrated efficiency stays at most 1
        return lo, min(hi, 1.0 / kernel_builtin), 1e-3
    if name == OVERHEAD:
        return lo, min(hi, 10 * step_s), 1e-3 * step_s
    if name == ELEMENTWISE:  # from the fully fused passes up to three times the built-in
        floor = calibration.ELEMENTWISE_PASSES / calibration.COMPUTE.elementwise_passes
        return max(lo, floor), min(hi, 3.0), 1e-3
    return max(lo, 0.02), hi, 1e-3  # collective efficiency


# The profile field each fitted parameter is written to.
_PROFILE_FIELDS = {
    KERNEL: "kernel_efficiency_scale",
    FP8: "fp8_kernel_efficiency_scale",
    ELEMENTWISE: "elementwise_scale",
    OVERHEAD: "step_overhead_s",
    COLLECTIVE: "collective_efficiency",
}


def _jacobian(
    f: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    r: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    steps: np.ndarray,
) -> np.ndarray:
    """Finite differences, stepping inward from a bound."""
    cols = []
    for j in range(len(x)):
        h = steps[j] if x[j] + steps[j] <= upper[j] else -steps[j]
        xj = x.copy()
        xj[j] += h
        cols.append((f(xj) - r) / h)
    return np.column_stack(cols)


def _least_squares(
    f: Callable[[np.ndarray], np.ndarray],
    x0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    steps: np.ndarray,
    iterations: int = 40,
) -> np.ndarray:
    """Minimise |f(x)|^2 inside [lower, upper] by Levenberg-Marquardt with projection."""
    x: np.ndarray = np.clip(x0, lower, upper)
    r = f(x)
    cost = float(r @ r)
    damping = 1e-3
    for _ in range(iterations):
        jac = _jacobian(f, x, r, lower, upper, steps)
        a, g = jac.T @ jac, jac.T @ r
        improved = False
        while damping < 1e10:
            dx = np.linalg.solve(a + damping * np.diag(np.diag(a) + 1e-12), -g)
            xn = np.clip(x + dx, lower, upper)
            rn = f(xn)
            cn = float(rn @ rn)
            if cn < cost:
                improved = cost - cn > 1e-14
                x, r, cost = xn, rn, cn
                damping = max(damping / 3, 1e-9)
                break
            damping *= 10
        if not improved:
            break
    return x


def _condition(jac: np.ndarray) -> float:
    """Smallest / largest singular value of the column-normalised Jacobian (0: some
    parameter has no effect or two have the same effect on every point)."""
    norms = np.linalg.norm(jac, axis=0)
    if np.any(norms < 1e-9):
        return 0.0
    s = np.linalg.svd(jac / norms, compute_uv=False)
    return float(s[-1] / s[0])


def _choose(
    problem: _Problem,
    candidates: list[str],
    scales: int,
    step_s: float,
    first: Sequence[str] = (),
) -> list[str]:
    """The parameters the points can identify: kernel efficiency, then each of ``first`` the
    points tell apart from those before it, then the best-conditioned set of ``candidates``
    (see module doc)."""
    all_names = [KERNEL, *first, *candidates]
    probe = _Problem(problem.points, problem.base, all_names, problem.kernel_builtin)
    bounds = [_bounds(n, problem.kernel_builtin, step_s) for n in all_names]
    x0 = np.array([_start(n, problem.base) for n in all_names])
    lower, upper, steps = (np.array(v) for v in zip(*bounds, strict=True))
    r0 = probe.residuals(x0)
    # Larger probe steps than the fit's: the conditioning asks how each parameter moves the
    # points over its plausible range, not at one kink.
    jac = _jacobian(probe.residuals, x0, r0, lower, upper, steps * 50)
    base = [KERNEL]
    for name in first:
        cols = [all_names.index(n) for n in (*base, name)]
        if len(base) < len(problem.points) and _condition(jac[:, cols]) >= MIN_CONDITION:
            base.append(name)
    best = base
    max_extra = min(len(candidates), len(problem.points) - len(base))
    for extra in range(1, max_extra + 1):
        options = []
        for combo in itertools.combinations(candidates, extra):
            if sum(n in SCALE_PARAMETERS for n in combo) > scales - 1:
                continue  # one scale cannot tell them from the kernel efficiency
            cols = [all_names.index(n) for n in (*base, *combo)]
            options.append((_condition(jac[:, cols]), [*base, *combo]))
        good = [o for o in options if o[0] >= MIN_CONDITION]
        if not good:
            break
        best = max(good, key=lambda o: o[0])[1]
    return best


def _start(name: str, base: CalibrationProfile) -> float:
    if name in (KERNEL, FP8):
        return 1.0
    if name == OVERHEAD:
        return base.step_overhead_s or 0.0
    return 1.0


def fit_profile(
    points: Sequence[Measurement],
    nccl: Sequence[NcclMeasurement] = (),
    notes_in: Sequence[str] = (),
) -> CalibrationProfile:
    """The profile the measurements support, with every point's residual (module doc);
    ``notes_in`` (e.g. from reading the file) come first in the profile's notes."""
    if not points and not nccl:
        raise InvalidInput(
            "no measurements: give at least one run or nccl-tests output", field="measurements"
        )
    notes: list[str] = list(notes_in)
    fitted: list[str] = []
    by_fabric: dict[str, list[float]] = {}
    for m in nccl:
        eff, more = fabric_efficiency(m, m.entry)
        by_fabric.setdefault(m.cluster.fabric, []).append(eff)
        notes.extend(more)
    fabrics = tuple(
        CalibratedFabric(name, statistics.median(values))
        for name, values in sorted(by_fabric.items())
    )
    if fabrics:
        fitted.append(FABRIC)
        notes.append(
            "fabric efficiency from nccl-tests: "
            + ", ".join(f"{f.fabric} {f.efficiency:.3f}" for f in fabrics)
        )
    base = CalibrationProfile(fabrics=fabrics, tool_version=optimizer.__version__)
    if not points:
        notes.append(
            "no step measurements: kernel efficiency, overhead and collective "
            "efficiency keep their built-in values"
        )
        return replace(base, fitted=tuple(fitted), notes=tuple(notes), residual_spread=0.0)

    gen = generation(points[0].cluster.gpu_model)
    for p in points:
        other = generation(p.cluster.gpu_model)
        if other.name == "default":  # a profile scales a named generation (convert.py)
            known = ", ".join(CALIBRATED_GENERATIONS)
            named = f"GPU {p.cluster.gpu_model!r}" if p.cluster.gpu_model else "The GPU"
            raise InvalidInput(
                f"{named} is no calibrated generation, so no profile can say which GPUs its "
                f"kernel scale applies to; name one of {known}",
                field=f"{p.entry}.request.cluster.gpu_model",
            )
        if other is not gen:
            raise InvalidInput(
                f"the runs use several GPU generations ({gen.name}, {other.name}); calibrate "
                "each generation from its own runs",
                field=f"{p.entry}.request.cluster.gpu_model",
            )
    base = replace(base, gpu_generation=gen.name)
    for p in points:
        if p.metric not in METRICS:
            raise InvalidInput(f"expected one of {', '.join(METRICS)}", field=f"{p.entry}.measured")
    step_s = max(p.estimate(base).step_time_s for p in points)
    scales = len({p.cluster.gpus for p in points})
    problem = _Problem(points, base, [KERNEL], gen.kernel_efficiency)
    fp8 = sum(1 for p in points if p.workload.precision == "fp8")
    first = [FP8] if 0 < fp8 < len(points) else []
    names = _choose(problem, [ELEMENTWISE, *SCALE_PARAMETERS], scales, step_s, first)
    problem.names = names
    bounds = [_bounds(n, gen.kernel_efficiency, step_s) for n in names]
    lower, upper, steps = (np.array(v) for v in zip(*bounds, strict=True))
    x = _least_squares(
        problem.residuals, np.array([_start(n, base) for n in names]), lower, upper, steps
    )
    profile = problem.profile(x)
    fitted += names
    notes.extend(_why(names, scales, len(points)))
    notes.extend(_precision_notes(points, FP8 in names))
    for name, value, lo, hi in zip(names, x, lower, upper, strict=True):
        if math.isclose(value, lo, rel_tol=1e-6, abs_tol=1e-9) or math.isclose(
            value, hi, rel_tol=1e-6
        ):
            notes.append(
                f"{name} stopped at its bound {value:.4g}: the points ask for a value "
                "outside its physical range"
            )
    residuals = problem.residuals(x)
    calibrated = tuple(
        CalibrationPoint(
            p.label,
            p.metric,
            p.measured,
            p.measured * (1 + float(r)),
            float(r),
            p.cluster.gpus,
            p.estimate(profile).step_time_s,
        )
        for p, r in zip(points, residuals, strict=True)
    )
    overhead_s = profile.step_overhead_s or 0.0
    if OVERHEAD in names and overhead_s > calibration.COMPUTE.step_overhead_s:
        notes.append(_overhead_note(overhead_s, [p.step_time_s for p in calibrated]))
    return replace(
        profile,
        kernel_efficiency=gen.kernel_efficiency * float(x[0]),
        fitted=tuple(fitted),
        points=calibrated,
        residual_spread=min(0.5, float(np.max(np.abs(residuals)))),
        notes=tuple(notes),
    )


def _overhead_note(overhead_s: float, steps_s: list[float]) -> str:
    """What a fitted fixed cost per step means for steps shorter than the measured ones."""
    shortest, longest = min(steps_s), max(steps_s)
    return (
        f"step_overhead_s {overhead_s:.3g} s is {overhead_s / longest:.1%}-"
        f"{overhead_s / shortest:.1%} of the calibrated steps ({shortest:.3g}-{longest:.3g} s); "
        "as a fixed cost it weighs more on shorter steps (more GPUs on the same global batch), "
        "where the estimates say so and their low end takes the built-in overhead"
    )


def _why(names: list[str], scales: int, count: int) -> list[str]:
    """Sentences saying which parameters the points determined and why the others not."""
    out = [f"kernel efficiency: fitted on {count} point(s)"]
    if ELEMENTWISE in names:
        out.append(
            f"{ELEMENTWISE}: fitted, the points' element-wise (memory-bound) shares of the step "
            "differ: the framework's kernel fusion"
        )
    elif len(names) >= count:
        out.append(
            f"{ELEMENTWISE}: not fitted, {count} point(s) identify at most {count} "
            f"parameter(s) and these are {', '.join(names)}"
        )
    else:
        out.append(
            f"{ELEMENTWISE}: not fitted, the points' element-wise shares of the step are alike "
            f"or its effect cannot be told apart from that of {', '.join(names)}"
        )
    if scales < 2:
        out.append(
            "one scale (GPU count): step overhead and collective efficiency change every "
            "point alike, so neither is identifiable"
        )
    else:
        for name in SCALE_PARAMETERS:
            if name in names:
                out.append(f"{name}: fitted, its effect differs between the {scales} scales")
            else:
                out.append(
                    f"{name}: not fitted, at these {scales} scales its effect is nil or "
                    f"cannot be told apart from that of {', '.join(names)}"
                )
    return out


def _precision_notes(points: Sequence[Measurement], fp8_fitted: bool) -> list[str]:
    """What the kernel efficiency scales mean for runs in FP8. Fitted apart (``fp8_fitted``):
    FP8 estimates take both, BF16 ones the first alone. One scale: it times their FP8 layer
    GEMMs too (at the built-in share of the BF16 efficiency on the FP8 peak, the one fitted on
    the visible FP8 runs), so a profile fitted on FP8 runs alone speeds BF16 estimates alike."""
    fp8 = sum(1 for p in points if p.workload.precision == "fp8")
    if not fp8:
        return []
    ratio = calibration.COMPUTE.fp8_gemm_efficiency_ratio
    if fp8_fitted:
        return [
            f"{FP8}: fitted, {fp8} of {len(points)} points run FP8 and the rest BF16: FP8 "
            "estimates take this scale on top of the kernel efficiency's (their FP8 layer "
            f"GEMMs' speed over the built-in {ratio:g} of the BF16 efficiency on the FP8 "
            "peak), BF16 estimates the kernel efficiency's alone"
        ]
    if fp8 == len(points):
        return [
            "every point runs FP8: the kernel efficiency scale carries their FP8 layer GEMMs' "
            f"speed (kept at the built-in {ratio:g} of the BF16 efficiency on the FP8 peak), "
            "so a BF16 estimate under this profile assumes its GEMMs gained as much; "
            "calibrate BF16 runs on their own profile"
        ]
    return [
        f"{fp8} of {len(points)} points run FP8, but the points cannot tell the FP8 runs' own "
        "kernel scale apart: one kernel efficiency scale serves both precisions (FP8 layer "
        f"GEMMs at the built-in {ratio:g} of the BF16 efficiency on the FP8 peak); the "
        "residuals show whether the two differ"
    ]


@dataclass(frozen=True)
class MeasurementSet:
    """What a measurements file holds: step measurements, nccl-tests runs, reading notes."""

    points: tuple[Measurement, ...]
    nccl: tuple[NcclMeasurement, ...]
    notes: tuple[str, ...]


def _label(entry: dict[str, Any], where: str, labels: dict[str, str]) -> str:
    """The entry's label (its place in the file when it gives none): a string no other entry
    gives, as it names the entry's row of the residual table and of the profile."""
    label = entry.get("label")
    if label is None or label == "":
        return where
    if not isinstance(label, str):
        raise InvalidInput(f"expected a string, got {label!r}", field=f"{where}.label")
    first = labels.setdefault(label, where)
    if first != where:
        raise InvalidInput(
            f"{label!r} labels {first} too; each label names one row of the residual table",
            field=f"{where}.label",
        )
    return label


def _request(entry: dict[str, Any], where: str) -> estimate_pb2.EstimateRequest:
    raw = entry.get("request")
    if not isinstance(raw, dict):
        raise InvalidInput("required: an EstimateRequest object", field=f"{where}.request")
    try:
        req = parse_json(raw, estimate_pb2.EstimateRequest(), f"{where}.request.")
    except json_format.ParseError as e:
        raise InvalidInput(" ".join(str(e).split()), field=f"{where}.request") from None
    try:  # the limits `procure estimate` applies, before any work
        check_estimate(req)
    except InvalidInput as e:
        path = f"{where}.request" + (f".{e.field}" if e.field else "")
        raise InvalidInput(e.problem, field=path) from None
    return req


def _decoded(
    req: estimate_pb2.EstimateRequest, where: str, data_dir: str | None, tenant: str
) -> tuple[Any, ...]:
    """``request_from_proto`` (``cluster.server_sku`` looked up in the request's catalog, as
    ``procure estimate`` does) with the failing field's path prefixed by the entry's."""
    catalog = None
    if req.cluster.server_sku and req.catalog:
        try:
            catalog = resolve_catalog(req.catalog, data_dir=data_dir, tenant=tenant)
        except ProcurementError as e:
            raise InvalidInput(str(e), field=f"{where}.request.catalog") from None
    try:
        return request_from_proto(req, catalog)
    except InvalidInput as e:
        field_path = f"{where}.request" + (f".{e.field}" if e.field else "")
        raise InvalidInput(e.problem, field=field_path) from None


def _measured(entry: dict[str, Any], where: str) -> tuple[str, float]:
    measured = entry.get("measured")
    if not isinstance(measured, dict) or len(measured) != 1:
        raise InvalidInput(
            f"expected an object with one of {', '.join(METRICS)}", field=f"{where}.measured"
        )
    ((metric, value),) = measured.items()
    if metric not in METRICS:
        raise InvalidInput(
            f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}",
            field=f"{where}.measured",
        )
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidInput(
            f"expected a number > 0, got {value!r}", field=f"{where}.measured.{metric}"
        )
    if not math.isfinite(value):
        raise InvalidInput(
            f"expected a finite number, got {value!r}", field=f"{where}.measured.{metric}"
        )
    return metric, float(value)


# Least share of the GPU's peak a measured run is taken to reach: below it a point is a unit
# slip (PFLOP/s for TFLOP/s, milliseconds for seconds), not a training run. The slowest
# published run in optimizer/performance/data reaches 14 % of its peak (llm-foundry's MPT-3B
# in FP8 at 32K tokens), a hundred times this.
MIN_PEAK_SHARE = 1e-3


def _plausible(metric: str, value: float, w: Workload, c: ClusterSpec, field: str) -> None:
    """Refuse a measurement no GPU reaches, or one below MIN_PEAK_SHARE of that: a rate per
    GPU above its peak (at the run's precision), a step shorter than the model's FLOPs take
    at that peak on all the cluster's GPUs, or a thousandth of either. Such a point only
    drives the fit to a bound, overflows it, or is outweighed and ignored."""
    fp8_peak = c.gpu_peak_fp8_tflops if w.precision == "fp8" else None
    peak = fp8_peak or c.gpu_peak_tflops
    name = (
        "FP8 peak (cluster.gpu_peak_fp8_tflops)"
        if fp8_peak
        else "BF16 peak (cluster.gpu_peak_tflops)"
    )
    where = f"the GPU's {peak:g} TFLOP/s {name}"
    if metric != "step_time_s":
        share, expected = value / peak, "expected TFLOP/s (1e12 FLOP/s) per GPU"
        fast = f"{value:g} TFLOP/s per GPU is above {where}"
        slow = f"{value:g} TFLOP/s per GPU is {share:.2g} of {where}"
    else:
        fastest_s = model_flops_per_step(w) / (c.gpus * peak * 1e12)
        share, expected = fastest_s / value, "expected seconds per optimizer step"
        fast = (
            f"a step of {value:g} s is shorter than the model's FLOPs per step take at {where} "
            f"on all {c.gpus} GPUs ({fastest_s:.3g} s)"
        )
        slow = (
            f"a step of {value:g} s runs the model's FLOPs at {share:.2g} of {where} on "
            f"{c.gpus} GPUs"
        )
    if share > 1:
        raise InvalidInput(f"{fast}; {expected}", field=field)
    if share < MIN_PEAK_SHARE:
        raise InvalidInput(
            f"{slow}, below the {MIN_PEAK_SHARE:g} any training run reaches; {expected}",
            field=field,
        )


def load_measurements(
    path: Path, data_dir: str | None = None, tenant: str = "default"
) -> MeasurementSet:
    """Read a measurements file (a JSON list; docs/performance-model.md, "Calibration from
    your measurements"); nccl-tests paths are relative to the file, catalogs named by the
    requests are resolved in ``data_dir`` for ``tenant``. Errors name the entry
    (``measurements[i]``) and its field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:  # JSON files are UTF-8
        raise InvalidInput(f"{path.name}: not UTF-8 JSON ({e})", field="measurements") from None
    if not isinstance(data, list):
        raise InvalidInput(f"{path.name}: expected a JSON list of entries", field="measurements")
    points: list[Measurement] = []
    nccl: list[NcclMeasurement] = []
    notes: list[str] = []
    labels: dict[str, str] = {}  # each label given, by the entry that gave it first
    for i, entry in enumerate(data):
        where = f"measurements[{i}]"
        if not isinstance(entry, dict):
            raise InvalidInput("expected an object", field=where)
        unknown = sorted(set(entry) - {"request", "measured", "nccl_tests", "label"})
        if unknown:
            raise InvalidInput(
                f"unknown key {unknown[0]!r}; expected request, measured, nccl_tests, label",
                field=where,
            )
        if ("measured" in entry) == ("nccl_tests" in entry):
            raise InvalidInput("expected exactly one of 'measured' or 'nccl_tests'", field=where)
        label = _label(entry, where, labels)
        req = _request(entry, where)
        w, c, fixed, fabrics = _decoded(req, where, data_dir, tenant)
        if "nccl_tests" in entry:
            name = entry["nccl_tests"]
            if not isinstance(name, str) or not name:
                raise InvalidInput("expected a file path", field=f"{where}.nccl_tests")
            file = path.parent / name
            try:
                text = file.read_text(encoding="utf-8", errors="replace")
            except OSError as e:
                raise InvalidInput(
                    f"cannot read {file}: {e.strerror or e}", field=f"{where}.nccl_tests"
                ) from None
            rows = parse_nccl_tests(text, f"{where}.nccl_tests")
            nccl.append(NcclMeasurement(label, rows, c, where))
            continue
        metric, value = _measured(entry, where)
        _plausible(metric, value, w, c, f"{where}.measured.{metric}")
        if fixed.settled(w.is_moe).complete() is None:
            notes.append(
                f"{label}: the request leaves part of the plan open; the planner's "
                "choice is assumed to be what ran"
            )
        points.append(Measurement(label, w, c, fixed, metric, value, fabrics, where))
    return MeasurementSet(tuple(points), tuple(nccl), tuple(notes))
