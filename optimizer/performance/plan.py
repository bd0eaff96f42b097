"""Parallel plans: how a workload is split over the GPUs of a cluster."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ParallelPlan:
    """A complete plan. ``tensor * pipeline * data`` is the GPU count; expert parallel ranks
    are taken from the data-parallel ranks (Megatron-LM / DeepSpeed-MoE convention), so
    ``expert`` divides ``data``. ``zero_stage`` 0 replicates the optimizer, 1 shards its states
    (distributed optimizer), 2 also gradients, 3 also weights (FSDP FULL_SHARD)."""

    tensor: int
    pipeline: int
    data: int
    expert: int = 1
    virtual_pipeline: int = 1
    zero_stage: int = 1
    micro_batch_size: int = 1

    @property
    def gpus(self) -> int:
        return self.tensor * self.pipeline * self.data


@dataclass(frozen=True)
class PartialPlan:
    """What the user fixed; ``None`` fields are chosen by the planner."""

    tensor: int | None = None
    pipeline: int | None = None
    data: int | None = None
    expert: int | None = None
    virtual_pipeline: int | None = None
    zero_stage: int | None = None
    micro_batch_size: int | None = None

    def complete(self) -> ParallelPlan | None:
        """The plan, when the request fixes every degree (nothing left to choose)."""
        values = (
            self.tensor,
            self.pipeline,
            self.data,
            self.expert,
            self.virtual_pipeline,
            self.zero_stage,
            self.micro_batch_size,
        )
        if any(v is None for v in values):
            return None
        return ParallelPlan(*values)  # type: ignore[arg-type]
