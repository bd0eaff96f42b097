"""GPU memory per rank for a workload under a parallel plan.

Model states follow ZeRO (Rajbhandari et al., SC'20): mixed-precision Adam keeps 2 bytes of
bf16 weights, 2 of bf16 gradients and 12 of fp32 master weights, momentum and variance per
parameter (16 B/param); stage 1/2/3 shard the optimizer states / gradients / weights over the
data-parallel group. Activations follow Korthikanti et al. (2022, "Reducing Activation
Recomputation in Large Transformer Models", sec. 4), with sequence parallelism so every term is
divided by the tensor-parallel degree, generalised to grouped-query attention, gated FFNs and
top-k experts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from optimizer.performance.plan import ParallelPlan
from optimizer.workload.model import Workload

WEIGHT_BYTES = 2.0
GRADIENT_BYTES = 2.0
OPTIMIZER_BYTES = 12.0
LOGIT_BYTES = 2.0  # bf16 logits into a fused, vocabulary-parallel cross-entropy (Megatron-LM)


@dataclass(frozen=True)
class MemoryBreakdown:
    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float

    @property
    def total_gb(self) -> float:
        return self.weights_gb + self.gradients_gb + self.optimizer_gb + self.activations_gb


def activation_bytes_per_layer(
    w: Workload, micro_batch: int, tensor: int, context: int = 1
) -> float:
    """Bytes one layer stores for one micro-batch (Korthikanti et al. 2022, eq. 1-2).

    Per token: attention 2h (QKV input) + 2h (Q) + 4h*r (K, V) + 2h (AV output) + h (dropout
    mask) = (7 + 4r)h; FFN 2h input + (2 or 3) x 2f intermediates + h mask, times k experts;
    2 layer norms 4h; without recomputation the softmax and its dropout add 5 a s bytes per
    token. Selective recomputation drops exactly that 5as term (and so does flash attention);
    full recomputation keeps only the layer input (2h). Without dropout (``w.dropout`` False:
    Llama, MPT, Mixtral) the two h masks and the softmax dropout's 3as are absent.
    """
    # issue 14 (context): context parallelism splits each sequence over ``context`` ranks.
    tokens_per_rank = micro_batch * w.sequence_length / (tensor * context)
    if w.activation_recompute == "full":
        return 2.0 * w.hidden_size * tokens_per_rank
    keeps_scores = w.activation_recompute == "none" and not w.flash_attention
    return materialised_bytes_per_token_layer(w, attention_matrix=keeps_scores) * tokens_per_rank


@lru_cache(maxsize=1024)
def materialised_bytes_per_token_layer(w: Workload, attention_matrix: bool) -> float:
    """Activation bytes one token creates in one layer (Korthikanti et al. 2022 sec. 4.1):
    what the forward writes to GPU memory, whether or not it is kept for the backward."""
    h = w.hidden_size
    intermediates = (3 if w.gated_ffn else 2) * 2.0 * w.ffn_hidden_size
    # issue 14 (dropout): the 1-byte masks of the attention-output and FFN-output dropouts
    # (h each) and, with the score matrix kept, the softmax dropout's mask and output (3 of
    # the 5 a s bytes: softmax output 2, mask 1, dropout output 2) exist only with dropout.
    mask = 1.0 if w.dropout else 0.0
    per_token = (
        (6 + mask + 4 * w.kv_ratio) * h
        + w.experts_per_token * ((2 + mask) * h + intermediates)
        + 4 * h
    )
    if attention_matrix:
        per_token += (2.0 + 3.0 * mask) * w.attention_heads * w.sequence_length
    return per_token


@lru_cache(maxsize=65536)
def memory_per_gpu(w: Workload, plan: ParallelPlan) -> MemoryBreakdown:
    """Peak memory of the first pipeline stage, the one that holds the most activations.

    Cached: the optimizer asks for the same (workload, plan) on many candidate clusters."""
    t, p, d, e = plan.tensor, plan.pipeline, plan.data, plan.expert
    cp = plan.context  # issue 14 (context)
    dense_params = (w.parameters - w.expert_parameters) / (t * p)
    expert_params = w.expert_parameters / (t * p * e)
    # issue 14 (context): context ranks hold the same weights; ZeRO shards over data x context
    # (Megatron's distributed optimizer over the dp-cp group).
    dense_shard, expert_shard = d * cp, d * cp // e

    def sharded(bytes_per_param: float, stage: int) -> float:
        if plan.zero_stage >= stage:
            return bytes_per_param * (dense_params / dense_shard + expert_params / expert_shard)
        return bytes_per_param * (dense_params + expert_params)

    micro_batches = w.global_batch_size // (d * plan.micro_batch_size)
    in_flight = min(p, micro_batches) * w.layers / p
    if plan.virtual_pipeline > 1:  # interleaving holds extra stages (Korthikanti sec. 4.2.3)
        in_flight *= 1 + (p - 1) / (p * plan.virtual_pipeline)
    activations = in_flight * activation_bytes_per_layer(
        w, plan.micro_batch_size, t, cp
    ) + LOGIT_BYTES * plan.micro_batch_size * w.sequence_length * w.vocab_size / (t * cp)
    return MemoryBreakdown(
        weights_gb=sharded(WEIGHT_BYTES, 3) / 1e9,
        gradients_gb=sharded(GRADIENT_BYTES, 2) / 1e9,
        optimizer_gb=sharded(OPTIMIZER_BYTES, 1) / 1e9,
        activations_gb=activations / 1e9,
    )
