"""``procure estimate SPEC.json``: how long would this run take on that cluster?"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from google.protobuf import json_format

from client.commands.calibrate import calibration_option, read_profile
from client.options import output_file, output_format
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.request_json import parse_json

if TYPE_CHECKING:
    from rich.table import Table


def read_request(path: str) -> estimate_pb2.EstimateRequest:
    """Parse the protobuf JSON form of an ``EstimateRequest`` (proto field names); an
    unknown or mistyped field (true in a number field too) is an error that names it."""
    text = Path(path).read_text()
    try:
        return parse_json(text, estimate_pb2.EstimateRequest())
    except json_format.ParseError as e:
        raise InvalidInput(" ".join(str(e).split()), field=Path(path).name) from None


def _render_table(resp: estimate_pb2.EstimateResponse) -> Table:
    from rich.table import Table

    from optimizer.workload.model import parameter_count
    from optimizer.workload.pipeline_layout import layers_text

    table = Table(title="training-time estimate", show_header=False)
    table.add_column("quantity")
    table.add_column("value", justify="right")
    p, b = resp.parallelism, resp.breakdown
    folded = p.HasField("expert_tensor") and p.expert_tensor != p.tensor
    rows = [
        (
            "training time (hours)",
            f"{resp.training_time_hours:,.1f}  "
            f"[{resp.training_time_hours_low:,.1f} .. "
            f"{resp.training_time_hours_high:,.1f}]",
        ),
        ("training time (days)", f"{resp.training_time_hours / 24:,.1f}"),
        (
            "productive training time, no failures (hours)",
            f"{resp.productive_training_time_hours:,.1f}",
        ),
        ("goodput (failures, checkpoints, restarts)", f"{resp.goodput:.1%}"),
        (
            "checkpoint interval (min) / interruptions expected",
            f"{resp.checkpoint_interval_minutes:,.1f} / {resp.expected_interruptions:,.1f}",
        ),
        ("step time (s)", f"{resp.step_time_s:.3f}"),
        ("steps", f"{resp.steps:,.0f}"),
        ("parameters", parameter_count(resp.parameters)),
        ("tokens/s", f"{resp.tokens_per_s:,.0f}"),
        ("model TFLOP/s per GPU", f"{resp.model_tflops_per_gpu:.1f}"),
        ("hardware TFLOP/s per GPU", f"{resp.hardware_tflops_per_gpu:.1f}"),
        ("MFU", f"{resp.mfu:.1%}"),
        # GiB beside GB: a GPU's memory is stated in GiB ("80 GB" H100: 85.9 GB)
        (
            "memory per GPU (GB / GiB)",
            f"{resp.memory_per_gpu_gb:.1f} / {resp.memory_per_gpu_gb * 1e9 / 2**30:.1f}",
        ),
        (
            "plan (tensor, pipeline, data, expert, context)",
            f"{p.tensor}, {p.pipeline}, {p.data}, {p.expert}, {p.context}",
        ),
        *([("experts folded: expert tensor", f"{p.expert_tensor}")] if folded else []),
        (
            "virtual pipeline / ZeRO stage / micro-batch",
            f"{p.virtual_pipeline} / {p.zero_stage} / {p.micro_batch_size}",
        ),
        *([("layers per pipeline stage", layers_text(p.stage_layers))] if p.pipeline > 1 else []),
        ("compute (s/step)", f"{b.compute_s:.3f}"),
        ("pipeline bubble (s/step)", f"{b.pipeline_bubble_s:.3f}"),
        ("tensor parallel (s/step)", f"{b.tensor_parallel_s:.3f}"),
        ("data parallel, before overlap (s/step)", f"{b.data_parallel_s:.3f}"),
        ("pipeline p2p (s/step)", f"{b.pipeline_p2p_s:.3f}"),
        ("MoE all-to-all (s/step)", f"{b.all_to_all_s:.3f}"),
        *(
            [("expert load skew, over balanced routing (s/step)", f"{resp.expert_skew_s:.3f}")]
            if resp.expert_skew_s
            else []
        ),
        *(
            [
                (
                    "step, groups inside power-of-two parts of domains (s)",
                    f"{resp.domain_tiled_step_time_s:.3f}",
                )
            ]
            if resp.domain_tiled_step_time_s
            else []
        ),
        ("context parallel, before overlap (s/step)", f"{b.context_parallel_s:.3f}"),
        ("exposed communication (s/step)", f"{b.exposed_communication_s:.3f}"),
        ("host CPU, TCP (s/step)", f"{b.host_cpu_overhead_s:.3f}"),
        ("optimizer step (s/step)", f"{b.optimizer_step_s:.3f}"),
        ("per-micro-batch overheads (s/step)", f"{b.micro_batch_overhead_s:.3f}"),
        ("fixed per-step overhead (s/step)", f"{b.step_overhead_s:.3f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


@click.command("estimate")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
@output_format("table", "json")
@output_file
@calibration_option
@click.pass_context
def estimate(
    ctx: click.Context, spec: str, fmt: str, output: str | None, calibration: str | None
) -> None:
    """Estimate the training time of the workload in SPEC (an EstimateRequest as JSON) on its
    cluster; the parallel plan is chosen when SPEC does not fix it."""
    from client.transport import transport_from

    request = read_request(spec)
    if calibration:  # issue 14: a profile from `procure calibrate`
        request.calibration.CopyFrom(read_profile(calibration))
    response = transport_from(ctx).estimate(request)
    if fmt == "json":
        text = json_format.MessageToJson(
            response, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        if output:
            Path(output).write_text(text + "\n")
        else:
            click.echo(text)
        return
    from rich.console import Console

    console = Console(file=open(output, "w") if output else None, width=100)  # noqa: SIM115
    console.print(_render_table(response))
    for note in response.notes:
        console.print(f"note: {note}")
    if output:
        console.file.close()
