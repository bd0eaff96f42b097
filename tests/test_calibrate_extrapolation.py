"""A team measures two small runs and predicts the large ones (issue 14's bar).

For each published scaling series in the bundled data, calibrate on its two smallest runs and
predict the others: median |error| <= 8 %, worst <= 20 %. A series is one configuration scaled
over GPU counts: the MosaicML H100 rows of one model with the same micro-batch, recompute and
ZeRO stage (16 -> 512 GPUs); Megatron-LM SC'21 Table 2 per model (strong scaling, 384 -> 1536
and 560 -> 2240 GPUs); Table 1 (weak scaling, 32 -> 3072 GPUs); a paper configuration's runs of
one model and (tensor, pipeline, context) degrees (MT-NLG 530B, 2240 -> 3360 GPUs, held out of
the uncalibrated fit's runs); the MosaicML A100 rows of one model and GPU memory with the same
micro-batch, recompute and ZeRO stage (16 -> 128 GPUs, out of the fit: their software is
newer than the Megatron runs that set A100's kernel efficiency). Run with ``-s`` to print the
table that docs/performance-model.md ("Calibration from your measurements") shows.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from functools import cache
from typing import NamedTuple

from optimizer.performance.fit import Measurement, fit_profile
from optimizer.performance.options import ModelOptions
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import (
    PublishedCase,
    calibration_cases,
    load_records,
    mosaic_a100_cases,
    paper_config_cases,
)

MEDIAN_BAR = 0.08
WORST_BAR = 0.20


def scaling_series() -> dict[str, list[PublishedCase]]:
    """Published series with at least three runs (two to fit, one or more to predict)."""
    series: dict[str, list[PublishedCase]] = defaultdict(list)
    for c in calibration_cases():
        if c.id.startswith("llmfoundry-"):
            w, p = c.workload, c.fixed
            name = (
                f"MosaicML {w.name} mb {p.micro_batch_size} {w.activation_recompute} "
                f"ZeRO-{p.zero_stage}"
            )
        elif c.id.startswith("megatron-sc21-t2-"):
            name = f"Megatron Table 2 {c.workload.name}"
        elif c.id.startswith("megatron-sc21-t1-"):
            name = "Megatron Table 1 (weak scaling)"
        else:
            continue
        series[name].append(c)
    for c in paper_config_cases():
        p = c.fixed
        name = f"{c.workload.name} TP{p.tensor} CP{p.context or 1} PP{p.pipeline}"
        series[name].append(c)
    for c in mosaic_a100_cases(load_records()):
        w, p = c.workload, c.fixed
        name = (
            f"MosaicML A100 {c.cluster.gpu_memory_gb:g} GB {w.name} mb {p.micro_batch_size} "
            f"{w.activation_recompute} ZeRO-{p.zero_stage}"
        )
        series[name].append(c)
    return {k: sorted(v, key=lambda c: c.cluster.gpus) for k, v in series.items() if len(v) >= 3}


class Prediction(NamedTuple):
    """One run predicted from its series' two smallest runs (errors: predicted / measured - 1)."""

    series: str
    case: PublishedCase
    uncalibrated_error: float
    calibrated_error: float
    fitted: str
    # the calibrated low and high training times / its expected one - 1
    calibrated_range: tuple[float, float]


@cache
def extrapolation() -> list[Prediction]:
    """Every run beyond the two smallest of each series, predicted after calibrating on them."""
    rows = []
    for name, cases in scaling_series().items():
        profile = fit_profile(
            [
                Measurement(
                    c.id,
                    c.workload,
                    c.cluster,
                    c.fixed,
                    "hardware_tflops_per_gpu",
                    c.measured_hardware_tflops_per_gpu,
                )
                for c in cases[:2]
            ]
        )
        fitted = ", ".join(profile.fitted)
        for c in cases[2:]:
            measured = c.measured_hardware_tflops_per_gpu
            plain = plan_and_estimate(c.workload, c.cluster, c.fixed)
            calibrated = plan_and_estimate(
                c.workload, c.cluster, c.fixed, options=ModelOptions(profile)
            )
            rows.append(
                Prediction(
                    name,
                    c,
                    plain.hardware_tflops_per_gpu / measured - 1,
                    calibrated.hardware_tflops_per_gpu / measured - 1,
                    fitted,
                    (
                        calibrated.training_time_hours_low / calibrated.training_time_hours - 1,
                        calibrated.training_time_hours_high / calibrated.training_time_hours - 1,
                    ),
                )
            )
    return rows


def _print_table() -> None:
    rows = extrapolation()
    print(
        "\n| series (fitted on the two smallest runs) | GPUs | measured TFLOP/s "
        "| uncalibrated | calibrated | fitted |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for name, c, plain, calibrated, fitted, _ in rows:
        print(
            f"| {name} | {c.cluster.gpus} | {c.measured_hardware_tflops_per_gpu:.1f} "
            f"| {plain:+.1%} | {calibrated:+.1%} | {fitted} |"
        )
    for label, errors in (
        ("uncalibrated", [abs(r.uncalibrated_error) for r in rows]),
        ("calibrated", [abs(r.calibrated_error) for r in rows]),
    ):
        print(
            f"{label}: {len(errors)} predictions, median |error| "
            f"{statistics.median(errors):.1%}, worst {max(errors):.1%}"
        )


def test_calibrating_on_two_small_runs_predicts_the_large_ones_within_the_bar() -> None:
    _print_table()
    errors = [abs(r.calibrated_error) for r in extrapolation()]
    assert len(errors) >= 15  # every series above contributes
    assert statistics.median(errors) <= MEDIAN_BAR
    assert max(errors) <= WORST_BAR


def test_calibrating_lowers_the_median_error_of_the_large_runs() -> None:
    """Over every series: 4.4 % uncalibrated, 2.9 % calibrated. Not in each: Megatron Table
    1's two smallest models are both 7.5 % low, so calibrating on them lifts the larger ones
    to +16 %. Without the A100 series (10-16 % low uncalibrated: newer software than A100's
    kernel efficiency was fitted on) the calibrated median was the worse, 5.4 % to 3.5 %."""
    rows = extrapolation()
    assert statistics.median(abs(r.calibrated_error) for r in rows) < statistics.median(
        abs(r.uncalibrated_error) for r in rows
    )


def test_the_calibrated_range_holds_every_extrapolated_run() -> None:
    """The measured run takes predicted TFLOP/s / measured TFLOP/s of the calibrated expected
    time (the same work), so its relative time is the calibrated error; it must lie in the
    calibrated low/high range. The tightest: Megatron Table 1 at 1,024 GPUs, 16.1 % over, in
    a range of +16.8 % at profile.MIN_RESIDUAL_SPREAD 22 % (at 10 %, five runs fell out)."""
    outside = [
        f"{r.series} at {r.case.cluster.gpus} GPUs: {r.calibrated_error:+.1%} outside "
        f"{r.calibrated_range[0]:+.1%}..{r.calibrated_range[1]:+.1%}"
        for r in extrapolation()
        if not r.calibrated_range[0] <= r.calibrated_error <= r.calibrated_range[1]
    ]
    assert not outside
