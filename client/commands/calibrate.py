"""``procure calibrate MEASUREMENTS.json -o PROFILE.json``: fit the time model to a team's own
measured runs; ``procure estimate|optimize --calibration PROFILE.json`` then use the profile."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from google.protobuf import json_format

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.performance.profile import MIN_RESIDUAL_SPREAD

if TYPE_CHECKING:
    from rich.console import Console

    from optimizer.performance.profile import CalibrationProfile


def read_profile(path: str) -> estimate_pb2.CalibrationProfile:
    """The profile file (protobuf JSON of ``CalibrationProfile``), checked the way a server
    checks the request field, so a bad file fails before anything is sent."""
    from optimizer.performance.convert import calibration_from_proto
    from optimizer.request_json import parse_json
    from optimizer.request_limits import check_message

    try:
        text = Path(path).read_text(encoding="utf-8")
        msg = parse_json(text, estimate_pb2.CalibrationProfile(), "calibration.")
    except (json_format.ParseError, UnicodeDecodeError) as e:
        raise InvalidInput(" ".join(str(e).split()), field=f"--calibration {path}") from None
    check_message(msg, "calibration.")  # the ranges a server applies to the request field
    calibration_from_proto(msg)
    return msg


calibration_option = click.option(
    "--calibration",
    "calibration",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A profile from `procure calibrate` (sets the request's calibration field).",
)


def profile_json(profile: CalibrationProfile) -> str:
    from optimizer.performance.convert import calibration_to_proto

    return json_format.MessageToJson(
        calibration_to_proto(profile),
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )


def _print_profile(profile: CalibrationProfile, console: Console) -> None:
    from rich.table import Table

    params = Table(title="fitted parameters", show_header=False)
    params.add_column("parameter")
    params.add_column("value", justify="right")
    if profile.kernel_efficiency_scale is not None:
        params.add_row(
            f"kernel efficiency ({profile.gpu_generation})",
            f"{profile.kernel_efficiency:.3f}  (x{profile.kernel_efficiency_scale:.3f} built-in)",
        )
    if profile.fp8_kernel_efficiency_scale is not None:
        params.add_row(
            f"FP8 runs' kernel efficiency ({profile.gpu_generation})",
            f"x{profile.fp8_kernel_efficiency_scale:.3f} the above",
        )
    if profile.elementwise_scale is not None:
        params.add_row(
            f"element-wise work ({profile.gpu_generation})",
            f"x{profile.elementwise_scale:.3f} built-in",
        )
    for fabric in profile.fabrics:
        params.add_row(f"fabric efficiency ({fabric.fabric})", f"{fabric.efficiency:.3f}")
    if profile.collective_efficiency is not None:
        params.add_row("collective efficiency", f"{profile.collective_efficiency:.3f}")
    if profile.step_overhead_s is not None:
        params.add_row("step overhead (s)", f"{profile.step_overhead_s:.3f}")
    params.add_row("fitted", ", ".join(profile.fitted) or "nothing")
    params.add_row(
        "low/high efficiency spread",
        f"{profile.range_spread:.1%}  (largest residual {profile.residual_spread:.1%}, "
        f"at least {MIN_RESIDUAL_SPREAD:.0%})",
    )
    console.print(params)
    if profile.points:
        points = Table(title="points (residual = predicted / measured - 1)")
        for name in ("point", "GPUs", "metric", "measured", "predicted", "residual", "step (s)"):
            points.add_column(name, justify="left" if name in ("point", "metric") else "right")
        for p in profile.points:
            points.add_row(
                p.label,
                str(p.gpus),
                p.metric,
                f"{p.measured:.4g}",
                f"{p.predicted:.4g}",
                f"{p.residual:+.1%}",
                f"{p.step_time_s:.4g}" if p.step_time_s else "-",
            )
        console.print(points)
    for note in profile.notes:
        console.print(f"note: {note}")


@click.command("calibrate")
@click.argument("measurements", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--output",
    "-o",
    "output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the profile (protobuf JSON) to FILE, for --calibration FILE.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON, not tables.")
@click.pass_context
def calibrate(ctx: click.Context, measurements: str, output: str | None, as_json: bool) -> None:
    """Fit the time model to your own measured runs (a profile for --calibration).

    Fits kernel efficiency, element-wise work (the framework's kernel fusion), fabric and
    collective efficiency and per-step overhead to MEASUREMENTS (a JSON list of
    {"request": EstimateRequest, "measured":
    {"step_time_s" | "model_tflops_per_gpu" | "hardware_tflops_per_gpu": value}} and
    {"request": ..., "nccl_tests": "PATH"} entries). Only what the data can identify is
    fitted; every point's residual is shown. The fit runs here (also with --server): the
    profile travels in later requests."""
    from optimizer.performance.fit import fit_profile, load_measurements

    obj = ctx.obj or {}
    data = load_measurements(
        Path(measurements), data_dir=obj.get("data_dir"), tenant=obj.get("tenant") or "default"
    )
    profile = fit_profile(data.points, data.nccl, data.notes)
    text = profile_json(profile)
    if output:
        Path(output).write_text(text + "\n")
    if as_json:
        click.echo(text)
        return
    from rich.console import Console

    console = Console(width=110)
    _print_profile(profile, console)
    if output:
        console.print(f"wrote {output}")
