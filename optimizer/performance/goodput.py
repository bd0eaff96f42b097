"""Goodput: the share of wall-clock time a training run makes progress (issue 14).

A synchronous job stops whenever one of its GPUs (or their hosts, links, switches) fails. It
then loses the work done since the last checkpoint, waits for detection, rescheduling and the
reload of the checkpoint, and pays for every checkpoint it writes. With the job's failure rate
λ = failures per GPU-hour x GPUs used, the checkpoint write time δ, the interval τ between
checkpoints and the restart time R, the first-order model (Young 1974; Daly, FGCS 2006, eq. 1
to first order) charges, per second of productive work,

    δ/τ          checkpoint writes,
    λ τ/2        work redone after a failure (on average half an interval is lost),
    λ R          restarts,

so goodput = productive / wall = 1 / (1 + δ/τ + λ (τ/2 + R)). The interval that minimises the
loss is Young's τ* = sqrt(2 δ M) with M = 1/λ, exactly the minimum of this expression
(docs/performance-model.md, "Goodput (issue 14)").

Pure functions; every time is in seconds unless its name says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import NamedTuple

from optimizer.errors import InvalidInput
from optimizer.hashed import hashed_once

SECONDS_PER_HOUR = 3600.0
SECONDS_PER_MINUTE = 60.0

# Llama 3 (Dubey et al., "The Llama 3 Herd of Models", 2024, sec. 3.3.4): 419 unexpected
# interruptions in a 54-day snapshot of pre-training on 16,384 H100 GPUs (one every ~3 h).
LLAMA3_FAILURES_PER_GPU_HOUR = 419 / (54 * 24 * 16_384)

# Llama 3 (sec. 3.3.1, "Storage"): Tectonic serves the 16K-GPU cluster at 2 TB/s sustained
# (7 TB/s peak). The default is the sustained figure's per-GPU share; a storage system is
# sized with its cluster, so the aggregate bandwidth scales with the GPUs the job uses.
LLAMA3_STORAGE_SUSTAINED_GBYTES_PER_S = 2_000.0
LLAMA3_STORAGE_PEAK_GBYTES_PER_S = 7_000.0
LLAMA3_CLUSTER_GPUS = 16_384
STORAGE_GBYTES_PER_S_PER_GPU = LLAMA3_STORAGE_SUSTAINED_GBYTES_PER_S / LLAMA3_CLUSTER_GPUS

# Detection, rescheduling and process start-up after a failure, before the checkpoint reload.
# A modelling default bounded by Llama 3 (sec. 3.3.4): >90% effective training time at
# λ = 0.32/h on 16,384 GPUs leaves at most ~16 minutes per interruption once checkpoints are
# paid for; 10 minutes is an automated restart (manual ones, as in OPT-175B's logbook, take
# hours: give restart_minutes).
RESTART_MINUTES = 10.0

# What a checkpoint must hold to resume mixed-precision Adam (ZeRO, Rajbhandari et al. SC'20):
# bf16 weights (2 B) + fp32 master weights (4 B) + Adam first and second moments (4 + 4 B) =
# 14 B/parameter. The gradients (the other 2 B of ZeRO's 16 B/parameter) are recomputed by the
# next step and are not saved; bf16 weights alone (2 B/parameter) export the model but cannot
# resume training (Adam's moments and the fp32 master copy would be lost).
CHECKPOINT_BYTES_PER_PARAMETER = 14.0


@hashed_once
@dataclass(frozen=True)
class Reliability:
    """What the request says (or the sourced defaults) about failures and checkpoints.

    ``checkpoint_interval_minutes`` None: the interval that minimises lost work (Young)."""

    failures_per_gpu_hour: float = LLAMA3_FAILURES_PER_GPU_HOUR
    storage_write_gbytes_per_s_per_gpu: float = STORAGE_GBYTES_PER_S_PER_GPU
    storage_read_gbytes_per_s_per_gpu: float = STORAGE_GBYTES_PER_S_PER_GPU
    restart_minutes: float = RESTART_MINUTES
    checkpoint_interval_minutes: float | None = None

    def __post_init__(self) -> None:
        check_reliability(self)


_POSITIVE = (
    "storage_write_gbytes_per_s_per_gpu",
    "storage_read_gbytes_per_s_per_gpu",
    "checkpoint_interval_minutes",
)


def check_reliability(r: Reliability) -> None:
    """Refuse figures no cluster has, naming ``reliability.<field>``: a rate or a time below
    zero, a bandwidth or an interval of zero, anything not finite."""
    for f in fields(r):
        value = getattr(r, f.name)
        if value is None:
            continue
        field = f"reliability.{f.name}"
        if not math.isfinite(value):
            raise InvalidInput(f"must be a finite number, got {value}", field=field)
        if f.name in _POSITIVE and value <= 0:
            raise InvalidInput(f"must be > 0, got {value:g}", field=field)
        if value < 0:
            raise InvalidInput(f"must be >= 0, got {value:g}", field=field)


class Goodput(NamedTuple):
    """How a run's productive time stretches into wall-clock time (a NamedTuple: the
    optimizer builds one per estimate, tens of thousands a second)."""

    goodput: float  # productive / wall, in (0, 1]
    checkpoint_interval_s: float  # productive seconds between two checkpoints
    checkpoint_write_s: float  # δ: one checkpoint, the job stopped while it is written
    restart_s: float  # R: detection + rescheduling + reload of the last checkpoint
    failures_per_hour: float  # λ of the whole job
    expected_interruptions: float  # failures expected over the wall-clock run
    optimal_interval: bool  # True: Young's interval; False: the request fixed it


class _Job(NamedTuple):
    """What depends on the job alone (model size, GPUs, reliability), not on its step time."""

    failures_per_s: float
    write_s: float
    restart_s: float
    interval_s: float  # Young's (or the request's), before the step and run bounds
    note_tail: str


def checkpoint_bytes(parameters: float) -> float:
    """Bytes one checkpoint writes: weights and optimizer states (14 B/parameter; a
    workload's own, with BF16 Adam moments 10: Workload.checkpoint_size_bytes)."""
    return parameters * CHECKPOINT_BYTES_PER_PARAMETER


def checkpoint_write_s(checkpoint_size_bytes: float, gpus: int, r: Reliability) -> float:
    """δ: every GPU writes its shard at its share of the storage bandwidth."""
    return checkpoint_size_bytes / (gpus * r.storage_write_gbytes_per_s_per_gpu * 1e9)


def restart_s(checkpoint_size_bytes: float, gpus: int, r: Reliability) -> float:
    """R: the fixed restart minutes plus reading the checkpoint back."""
    reload_s = checkpoint_size_bytes / (gpus * r.storage_read_gbytes_per_s_per_gpu * 1e9)
    return r.restart_minutes * SECONDS_PER_MINUTE + reload_s


def optimal_interval_s(write_s: float, failures_per_s: float) -> float:
    """Young's τ* = sqrt(2 δ M), M = 1/λ: the minimum of δ/τ + λτ/2 (inf without failures)."""
    if failures_per_s <= 0:
        return math.inf
    return math.sqrt(2.0 * write_s / failures_per_s)


def goodput_fraction(
    write_s: float, interval_s: float, failures_per_s: float, restart_s: float
) -> float:
    """1 / (1 + δ/τ + λ (τ/2 + R)): productive seconds per wall-clock second."""
    lost = write_s / interval_s + failures_per_s * (interval_s / 2.0 + restart_s)
    return 1.0 / (1.0 + lost)


@lru_cache(maxsize=4096)
def _job(checkpoint_size_bytes: float, gpus: int, r: Reliability) -> _Job:
    rate_per_s = r.failures_per_gpu_hour * gpus / SECONDS_PER_HOUR
    write = checkpoint_write_s(checkpoint_size_bytes, gpus, r)
    restart = restart_s(checkpoint_size_bytes, gpus, r)
    fixed = r.checkpoint_interval_minutes
    if fixed is not None:
        interval, how = fixed * SECONDS_PER_MINUTE, "the request's"
    else:
        interval, how = optimal_interval_s(write, rate_per_s), "Young's sqrt(2 x write x MTBF)"
    tail = (
        f"({how}) taking {write:,.1f} s to write; {restart / SECONDS_PER_MINUTE:,.1f} min per "
        f"restart (detect, reschedule, reload); {rate_per_s * SECONDS_PER_HOUR:.3g} failures/h "
        f"for the job"
    )
    return _Job(rate_per_s, write, restart, interval, tail)


def run_goodput(
    checkpoint_size_bytes: float,
    gpus: int,
    productive_s: float,
    r: Reliability,
    step_s: float = 0.0,
) -> Goodput:
    """Goodput of a run of ``productive_s`` seconds of steps on ``gpus`` GPUs.

    The interval is Young's optimum (or the request's), never shorter than one step (a
    checkpoint is taken between steps) and never longer than the run (the final checkpoint
    is taken anyway), so without failures goodput is 1 / (1 + δ/run). A checkpoint holds
    ``checkpoint_size_bytes`` (Workload.checkpoint_size_bytes)."""
    job = _job(checkpoint_size_bytes, gpus, r)
    interval = max(job.interval_s, step_s, 1e-9)
    if productive_s > 0:
        interval = min(interval, max(productive_s, step_s))
    fraction = goodput_fraction(job.write_s, interval, job.failures_per_s, job.restart_s)
    # positional: the optimizer builds one per estimate
    return Goodput(
        fraction,
        interval,
        job.write_s,
        job.restart_s,
        job.failures_per_s * SECONDS_PER_HOUR,
        job.failures_per_s * productive_s / fraction,
        r.checkpoint_interval_minutes is None,
    )


def wall_step_s(
    checkpoint_size_bytes: float, gpus: int, steps: float, step_s: float, r: Reliability
) -> float:
    """Wall-clock seconds per step once failures, checkpoints and restarts are paid: what the
    planner ranks plans on, so a plan on more GPUs (a higher failure rate) wins only when it
    is faster in wall-clock time. Never below ``step_s`` (goodput <= 1)."""
    job = _job(checkpoint_size_bytes, gpus, r)
    productive_s = steps * step_s
    interval = max(job.interval_s, step_s, 1e-9)  # as run_goodput, without building a Goodput
    if productive_s > 0:
        interval = min(interval, max(productive_s, step_s))
    return step_s / goodput_fraction(job.write_s, interval, job.failures_per_s, job.restart_s)


def describe(g: Goodput, checkpoint_size_bytes: float, gpus: int, r: Reliability) -> str:
    """The note an estimate carries: what goodput was made of (the job's part is cached, and
    no ``%`` or ``,`` format: this runs once per estimate)."""
    return (
        f"goodput {g.goodput * 100:.1f}%: {g.expected_interruptions:.1f} interruptions "
        f"expected, a checkpoint every {g.checkpoint_interval_s / SECONDS_PER_MINUTE:.1f} min "
        + _job(checkpoint_size_bytes, gpus, r).note_tail
    )
