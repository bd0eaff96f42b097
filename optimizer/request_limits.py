"""Every number and name of a request, checked once where the request enters (CLI, service).

The core trusts its inputs to be finite and physically sensible: an infinite peak TFLOP/s, a
1e308 budget or a version number SQLite cannot hold must never reach it (it would fail with
an assertion, an overflow or a division by zero: INTERNAL instead of the caller's mistake).
Each check raises InvalidInput naming the field and the accepted range, so the embedded run
and a remote call fail with the same code and the same field (docs/service.md, "Limits").
"""

from __future__ import annotations

import math
import re

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.cost.tco import COST_MODEL_LIMITS
from optimizer.errors import InvalidInput
from optimizer.request_json import INTEGER_TYPES

MAX_REQUEST_ID_CHARS = 128
MAX_CATALOG_REF_CHARS = 200
"""A catalog reference: a name, ``name@version``, an id or id prefix (64 hex digits)."""
MAX_CATALOG_NAME_CHARS = 128
MAX_CATALOG_VERSION = 2**31 - 1
"""Versions are int32 on the wire (CatalogInfo.version)."""
CATALOG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]*")
"""Letters, digits, ``.``, ``_``, ``-`` and spaces, starting with a letter or digit; never
``@`` (it separates the version in a reference) nor ``/`` (a reference is never a path)."""
MAX_LIST_LENGTH = 1000
"""Most entries of any repeated request field (fabrics, vendors, fabric profiles)."""
MAX_STRING_CHARS = 1000
"""Longest string field of an Estimate or Optimize request."""

# Accepted ranges (inclusive, ``None`` for an open end) per message field, by the field's full
# protobuf name. Fields not listed must be finite and within DEFAULT_RANGE.
DEFAULT_RANGE: tuple[float, float] = (0.0, 1e15)
_POSITIVE_TINY = 1e-9
RANGES: dict[str, tuple[float, float]] = {
    # Workload
    "procurement.v1.Workload.parameters": (1.0, 1e15),
    "procurement.v1.Workload.layers": (1, 100_000),
    "procurement.v1.Workload.hidden_size": (1, 1_000_000),
    "procurement.v1.Workload.ffn_hidden_size": (1, 10_000_000),
    "procurement.v1.Workload.attention_heads": (1, 100_000),
    "procurement.v1.Workload.kv_heads": (1, 100_000),
    "procurement.v1.Workload.sequence_length": (1, 10_000_000),
    "procurement.v1.Workload.vocab_size": (1, 100_000_000),
    "procurement.v1.Workload.training_tokens": (1.0, 1e16),
    "procurement.v1.Workload.global_batch_size": (1, 100_000_000),
    "procurement.v1.Workload.micro_batch_size": (1, 1_000_000),
    "procurement.v1.Workload.experts": (1, 100_000),
    "procurement.v1.Workload.experts_per_token": (1, 100_000),
    "procurement.v1.Workload.expert_capacity_factor": (0.0, 100_000),
    "procurement.v1.Workload.sliding_window_tokens": (0, 10_000_000),
    "procurement.v1.Workload.sliding_window_layers": (0, 100_000),
    "procurement.v1.Workload.shared_expert_ffn_hidden_size": (0, 10_000_000),
    "procurement.v1.Workload.dense_layers": (0, 100_000),
    "procurement.v1.Workload.dense_ffn_hidden_size": (0, 10_000_000),
    "procurement.v1.Workload.mtp_layers": (0, 64),
    "procurement.v1.Workload.kv_lora_rank": (0, 1_000_000),
    "procurement.v1.Workload.q_lora_rank": (0, 1_000_000),
    "procurement.v1.Workload.qk_rope_head_dim": (0, 100_000),
    "procurement.v1.Workload.v_head_dim": (0, 100_000),
    # Parallelism
    "procurement.v1.Parallelism.tensor": (1, 1_000_000),
    "procurement.v1.Parallelism.pipeline": (1, 1_000_000),
    "procurement.v1.Parallelism.data": (1, 100_000_000),
    "procurement.v1.Parallelism.expert": (1, 100_000),
    "procurement.v1.Parallelism.expert_tensor": (1, 100_000),
    "procurement.v1.Parallelism.virtual_pipeline": (1, 1000),
    "procurement.v1.Parallelism.zero_stage": (0, 3),
    "procurement.v1.Parallelism.micro_batch_size": (1, 1_000_000),
    # Cluster
    "procurement.v1.Cluster.gpus": (0, 10_000_000),
    "procurement.v1.Cluster.gpus_per_node": (1, 1024),
    "procurement.v1.Cluster.gpu_peak_tflops": (0.001, 100_000.0),
    "procurement.v1.Cluster.gpu_peak_fp8_tflops": (0.001, 100_000.0),
    "procurement.v1.Cluster.gpu_memory_gb": (0.001, 100_000.0),
    "procurement.v1.Cluster.intra_node_gbytes_per_s": (0.001, 1e6),
    "procurement.v1.Cluster.nic_gbps_per_node": (0.001, 1e7),
    "procurement.v1.Cluster.oversubscription": (1.0, 1000.0),
    "procurement.v1.Cluster.nics_per_node": (1, 1024),
    "procurement.v1.Cluster.switch_radix": (2, 100_000),
    "procurement.v1.Cluster.switch_port_lanes": (1, 64),
    # FabricProfile
    "procurement.v1.FabricProfile.efficiency_low": (_POSITIVE_TINY, 1.0),
    "procurement.v1.FabricProfile.efficiency_expected": (_POSITIVE_TINY, 1.0),
    "procurement.v1.FabricProfile.efficiency_high": (_POSITIVE_TINY, 1.0),
    "procurement.v1.FabricProfile.base_latency_us_low": (0.0, 1e6),
    "procurement.v1.FabricProfile.base_latency_us_expected": (0.0, 1e6),
    "procurement.v1.FabricProfile.base_latency_us_high": (0.0, 1e6),
    "procurement.v1.FabricProfile.per_hop_latency_ns": (0.0, 1e9),
    "procurement.v1.FabricProfile.host_cpu_cycles_per_byte_low": (0.0, 1e6),
    "procurement.v1.FabricProfile.host_cpu_cycles_per_byte_expected": (0.0, 1e6),
    "procurement.v1.FabricProfile.host_cpu_cycles_per_byte_high": (0.0, 1e6),
    "procurement.v1.FabricProfile.host_network_cpu_ghz_per_node": (0.0, 1e4),
    # Constraints (budget_usd: optimizer.optimize.convert.MAX_BUDGET_CENTS / 100)
    "procurement.v1.Constraints.budget_usd": (0.01, 1e12),
    "procurement.v1.Constraints.target_training_hours": (_POSITIVE_TINY, 1e7),
    "procurement.v1.Constraints.max_power_kw": (_POSITIVE_TINY, 1e8),
    "procurement.v1.Constraints.rack_power_kw": (_POSITIVE_TINY, 1e5),
    "procurement.v1.Constraints.max_lead_time_days": (_POSITIVE_TINY, 1e5),
    "procurement.v1.Constraints.min_nic_gbps_per_gpu": (_POSITIVE_TINY, 1e6),
    "procurement.v1.Constraints.max_racks": (1, 10_000_000),
    "procurement.v1.Constraints.min_gpus": (1, 10_000_000),
    "procurement.v1.Constraints.max_gpus": (1, 10_000_000),
    # issue 17 (facility)
    "procurement.v1.Constraints.max_floor_positions": (1, 10_000_000),
    "procurement.v1.Constraints.max_rack_kw": (_POSITIVE_TINY, 1e5),
    # OptimizeRequest, SolverOptions (their upper limits are the optimizer's own)
    "procurement.v1.OptimizeRequest.top_k": (0, 1_000_000),
    "procurement.v1.SolverOptions.time_limit_s": (_POSITIVE_TINY, 1e6),
    "procurement.v1.SolverOptions.seed": (-(2**31), 2**31 - 1),
    # issue 17 (tco): the lifetime-cost cap and the cost model (optimizer.cost.tco)
    "procurement.v1.Constraints.max_tco_usd": (0.01, 1e12),
    **{f"procurement.v1.CostModel.{k}": lim for k, lim in COST_MODEL_LIMITS.items()},
    # issue 17 (portfolio): 0 means "not given"
    "procurement.v1.WorkloadTarget.target_training_hours": (0.0, 1e7),
    "procurement.v1.WorkloadTarget.runs_per_year": (0.0, 1e6),
    # issue 14 (calibrate): a profile's residuals are predicted / measured - 1 (may be < 0)
    "procurement.v1.CalibrationPoint.residual": (-1.0, 1e6),
    "procurement.v1.CalibrationPoint.step_time_s": (0.0, 1e9),
    # issue 14 (calibrate, goodput): a profile and the reliability figures stay physical, so
    # a wall-clock time stays within what the optimizer's exact arithmetic holds.
    "procurement.v1.CalibrationProfile.kernel_efficiency_scale": (0.1, 10.0),
    "procurement.v1.CalibrationProfile.elementwise_scale": (0.1, 10.0),
    "procurement.v1.CalibrationProfile.fp8_kernel_efficiency_scale": (0.1, 10.0),
    "procurement.v1.CalibrationProfile.collective_efficiency": (1e-3, 1.0),
    "procurement.v1.CalibrationProfile.step_overhead_s": (0.0, 60.0),
    "procurement.v1.Reliability.failures_per_gpu_hour": (0.0, 0.1),  # one per GPU each 10 h
    "procurement.v1.Reliability.storage_write_gbytes_per_s_per_gpu": (1e-3, 1e4),
    "procurement.v1.Reliability.storage_read_gbytes_per_s_per_gpu": (1e-3, 1e4),
    "procurement.v1.Reliability.restart_minutes": (0.0, 1440.0),
    "procurement.v1.Reliability.checkpoint_interval_minutes": (1.0, 1e6),
}
_NUMERIC = INTEGER_TYPES | {FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT}


def _number(path: str, full_name: str, value: float) -> None:
    """``value`` against its field's range; the wording of the optimizer's own checks (``got
    -8.0, expected a positive number``) where they overlap, so messages do not depend on
    which check saw the value first."""
    lo, hi = RANGES.get(full_name, DEFAULT_RANGE)
    finite = math.isfinite(value)
    if finite and value == 0 and full_name not in RANGES:
        return  # proto3 default: the field was not given
    if not finite or value < lo:
        if lo > 0 and (not finite or value <= 0):
            expected = "a positive number"
        elif not finite:
            expected = f"a finite number from {lo:g} to {hi:g}"
        else:
            expected = f"at least {lo:g}"
        raise InvalidInput(f"got {value}, expected {expected}", field=path)
    if value > hi:
        raise InvalidInput(f"got {value:g}, expected at most {hi:g}", field=path)


def check_message(message: Message, prefix: str = "") -> None:
    """Every set field of ``message`` and its sub-messages: numbers finite and in range
    (RANGES), strings and lists bounded. Errors name the field as ``a.b[2].c``."""
    for fd, value in message.ListFields():
        path = f"{prefix}{fd.name}"
        repeated = fd.is_repeated
        values = list(value) if repeated else [value]
        if repeated and len(values) > MAX_LIST_LENGTH:
            raise InvalidInput(f"has {len(values)} entries; at most {MAX_LIST_LENGTH}", field=path)
        for i, item in enumerate(values):
            where = f"{path}[{i}]" if repeated else path
            if fd.type == FieldDescriptor.TYPE_MESSAGE:
                check_message(item, f"{where}.")
            elif fd.type in _NUMERIC:
                _number(where, fd.full_name, item)
            elif fd.type == FieldDescriptor.TYPE_STRING and len(item) > MAX_STRING_CHARS:
                raise InvalidInput(
                    f"has {len(item)} characters; at most {MAX_STRING_CHARS}", field=where
                )


def check_catalog_ref(ref: str, field: str = "catalog") -> None:
    """A catalog reference's shape: bounded, and a version after ``@`` that fits an int32."""
    if len(ref) > MAX_CATALOG_REF_CHARS:
        raise InvalidInput(
            f"has {len(ref)} characters; expected a catalog name, name@version or id of at "
            f"most {MAX_CATALOG_REF_CHARS}",
            field=field,
        )
    name, at, version = ref.rpartition("@")
    if at and name and version.isdigit() and int(version) > MAX_CATALOG_VERSION:
        raise InvalidInput(
            f"version {version} does not exist; versions are 1 to {MAX_CATALOG_VERSION}",
            field=field,
        )


def check_catalog_name(name: str, field: str = "name") -> None:
    """A name a catalog may be stored under (see CATALOG_NAME)."""
    if not name or len(name) > MAX_CATALOG_NAME_CHARS or not CATALOG_NAME.fullmatch(name):
        shown = name if len(name) <= 40 else f"{name[:40]}... ({len(name)} characters)"
        raise InvalidInput(
            f"got {shown!r}; expected 1 to {MAX_CATALOG_NAME_CHARS} letters, digits, '.', '_', "
            "'-' or spaces, starting with a letter or digit",
            field=field,
        )


def check_request_id(request_id: str, field: str = "request_id") -> None:
    if len(request_id) > MAX_REQUEST_ID_CHARS:
        raise InvalidInput(f"expected at most {MAX_REQUEST_ID_CHARS} characters", field=field)


def _check_micro_batch(
    workload: estimate_pb2.Workload, parallelism: estimate_pb2.Parallelism, prefix: str
) -> None:
    """A fixed micro-batch must divide the global batch (Megatron-LM's rule): the planner
    splits the global batch into whole micro-batches."""
    if parallelism.HasField("micro_batch_size"):
        micro, where = parallelism.micro_batch_size, f"{prefix}parallelism.micro_batch_size"
    elif workload.HasField("micro_batch_size"):
        micro, where = workload.micro_batch_size, f"{prefix}workload.micro_batch_size"
    else:
        return
    from optimizer.performance.convert import workload_from_proto  # the preset's batch size

    global_batch = workload_from_proto(workload).global_batch_size
    data = parallelism.data if parallelism.HasField("data") else 1
    if global_batch % (micro * data):
        raise InvalidInput(
            f"got {micro}; global_batch_size {global_batch} must be a multiple of "
            f"data ({data}) x micro_batch_size",
            field=where,
        )


def check_estimate(request: estimate_pb2.EstimateRequest) -> None:
    """An EstimateRequest, before any work (see the module docstring)."""
    check_message(request)
    if request.catalog:
        check_catalog_ref(request.catalog)
    _check_micro_batch(request.workload, request.parallelism, "")


def check_optimize(request: optimize_pb2.OptimizeRequest, prefix: str = "") -> None:
    """An OptimizeRequest (``prefix`` locates it in a batch, e.g. ``scenarios[3].``)."""
    check_message(request, prefix)
    check_request_id(request.request_id, f"{prefix}request_id")
    if request.catalog:
        check_catalog_ref(request.catalog, f"{prefix}catalog")
    for i, ref in enumerate(request.catalogs):
        check_catalog_ref(ref, f"{prefix}catalogs[{i}]")
    _check_micro_batch(request.workload, request.parallelism, prefix)
    _check_portfolio(request, prefix)  # issue 17 (portfolio)


# issue 17 (portfolio)
MAX_PORTFOLIO_WORKLOADS = 16
"""Most workloads of one request: each one multiplies the search's estimates."""


def _check_portfolio(request: optimize_pb2.OptimizeRequest, prefix: str) -> None:
    """The portfolio's size, and each workload's fixed micro-batch (the request's fixed
    parallelism is the first workload's)."""
    count = len(request.workloads) + request.HasField("workload")
    if count > MAX_PORTFOLIO_WORKLOADS:
        msg = f"got {count} workloads, expected at most {MAX_PORTFOLIO_WORKLOADS}"
        raise InvalidInput(msg, field=f"{prefix}workloads")
    for i, entry in enumerate(request.workloads):
        _check_micro_batch(entry.workload, estimate_pb2.Parallelism(), f"{prefix}workloads[{i}].")
