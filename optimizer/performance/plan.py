"""Parallel plans: how a workload is split over the GPUs of a cluster."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from optimizer.hashed import hashed_once

# A ParallelPlan's fields in order (``ParallelPlan(*degrees)`` is the plan): the planner's
# candidate lists hold these, not plans, which its caches kept by the hundred thousand for the
# garbage collector's full passes to walk (a tuple of numbers it stops tracking).
Degrees = tuple[int, int, int, int, int, int, int, int, bool, int]


@hashed_once
@dataclass(frozen=True)
class ParallelPlan:
    """A complete plan. ``tensor * pipeline * data`` is the GPU count; expert parallel ranks
    are taken from the data-parallel ranks (Megatron-LM / DeepSpeed-MoE convention), so
    ``expert`` divides ``data``. ``zero_stage`` 0 replicates the optimizer, 1 shards its states
    (distributed optimizer), 2 also gradients, 3 also weights (FSDP FULL_SHARD).

    issue 14: ``context`` splits each sequence over that many ranks (context parallelism,
    Megatron-LM ``--context-parallel-size``), so ``tensor * pipeline * context * data`` is the
    GPU count; ``reshard_after_forward`` False under ZeRO 3 is FSDP without re-sharding
    (SHARD_GRAD_OP: one all-gather and one reduce-scatter per step).

    MoE parallel folding (Liu et al., "MoE Parallel Folding", arXiv:2504.14960; Megatron-Core
    ``--expert-tensor-parallel-size``): ``expert_tensor`` is the tensor degree of the expert
    layers: 0 for the tensor degree (Megatron's default; a plan keeps that form, so that
    replacing its tensor degree keeps the experts on it), else a degree of their own, 1. At 1
    the experts get their own grid over the same GPUs: each expert whole on its rank, the
    expert ranks consecutive GPUs, so ``expert * expert_tensor`` divides ``tensor * data``
    (an expert degree may span the tensor ranks), and the MoE layers run no tensor
    collective (each tensor rank routes its own sequence shard)."""

    tensor: int
    pipeline: int
    data: int
    expert: int = 1
    virtual_pipeline: int = 1
    zero_stage: int = 1
    micro_batch_size: int = 1
    context: int = 1
    reshard_after_forward: bool = True
    expert_tensor: int = 0

    def __post_init__(self) -> None:
        if self.expert_tensor == self.tensor:  # one plan, one form (0: the tensor degree)
            object.__setattr__(self, "expert_tensor", 0)

    @cached_property
    def gpus(self) -> int:
        return self.tensor * self.pipeline * self.context * self.data

    @property
    def folded(self) -> bool:
        """The expert layers run on a grid of their own (a degree other than the tensor's)."""
        return self.expert_tensor != 0

    @property
    def family(self) -> tuple[int, int, int, int, int, int, int]:
        """(tensor, pipeline, data, expert, micro-batch, context, expert tensor): what the
        planner prices once for every depth and ZeRO stage of a plan (memory.FamilyLoads)."""
        return (
            self.tensor,
            self.pipeline,
            self.data,
            self.expert,
            self.micro_batch_size,
            self.context,
            self.expert_tensor,
        )

    @property
    def expert_tensor_degree(self) -> int:
        """The expert layers' tensor degree."""
        return self.expert_tensor or self.tensor


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
    context: int | None = None
    reshard_after_forward: bool | None = None
    expert_tensor: int | None = None

    def settled(self, is_moe: bool) -> PartialPlan:
        """These degrees with those that can take one value only filled in: a dense model's
        expert degree and a one-stage pipeline's depth are 1 whatever the request says, so
        leaving them out leaves the planner nothing to choose."""
        return replace(
            self,
            expert=1 if self.expert is None and not is_moe else self.expert,
            virtual_pipeline=(
                1 if self.virtual_pipeline is None and self.pipeline == 1 else self.virtual_pipeline
            ),
        )

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
        return ParallelPlan(
            *values,  # type: ignore[arg-type]
            context=1 if self.context is None else self.context,
            reshard_after_forward=(
                True if self.reshard_after_forward is None else self.reshard_after_forward
            ),
            expert_tensor=self.expert_tensor or 0,
        )


def plan_text(plan: ParallelPlan) -> str:
    """A plan as an error message names it: every degree, by its request field's name."""
    fsdp = (
        " (FSDP without re-sharding)"
        if plan.zero_stage == 3 and not plan.reshard_after_forward
        else ""
    )
    folded = f", expert_tensor {plan.expert_tensor}" if plan.folded else ""
    return (
        f"tensor {plan.tensor}, pipeline {plan.pipeline}, context {plan.context}, data "
        f"{plan.data}, expert {plan.expert}{folded}, virtual_pipeline {plan.virtual_pipeline}, "
        f"zero_stage {plan.zero_stage}{fsdp}, micro_batch_size {plan.micro_batch_size}"
    )
