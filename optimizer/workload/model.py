"""The workload record: a dense or mixture-of-experts transformer and how it is trained.

Everything the estimator needs per workload (parameter counts, FLOPs per token, activation
bytes) is derived here once and cached on the frozen instance, because the optimizer asks for
thousands of estimates of the same workload.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import gcd
from typing import Literal, NamedTuple

from optimizer.errors import InvalidInput
from optimizer.hashed import hashed_once

RECOMPUTE_MODES = ("none", "selective", "full")
PRECISIONS = ("bf16", "fp8")
# issue 14 (framework): whose pipeline engine and ZeRO-3 run the plan. "megatron": Megatron-LM's
# schedules (interleaved or not) and PyTorch FSDP; "deepspeed": DeepSpeed's PipelineEngine
# (Megatron-DeepSpeed, GPT-NeoX, MT-NLG) and its ZeRO-3.
FRAMEWORKS = ("megatron", "deepspeed")
# MoE load imbalance: the busiest expert-parallel rank gets this many times the mean tokens.
# Switch Transformer trains at capacity factor 1.0-1.25 (Fedus et al., JMLR 2022, sec. 2.2);
# DeepSpeed-MoE (Rajbhandari et al., ICML 2022) and Mixtral's routing analysis report
# similar skew; dropless MoE (MegaBlocks) runs the whole skew. Benchmarks that force-balance
# the routing (NVIDIA's Megatron-Bridge tables) run at 1.
DEFAULT_EXPERT_LOAD_IMBALANCE = 1.2
# How the expert all-to-all moves a token's k routed copies. "all_to_all": an NCCL all-to-all,
# every copy crosses the network on its own (Megatron-Core's alltoall dispatcher);
# "node_deduplicated": a token crosses the network once per destination node and is forwarded
# over NVLink there (DeepEP, HybridEP; DeepSeek-V3 report, arXiv:2412.19437, sec. 3.2.2).
EXPERT_DISPATCHES = ("all_to_all", "node_deduplicated")
# issue 14 (attention kernel): whose fused (flash) attention kernel runs the scores. "flash":
# FlashAttention-2-class CUDA kernels (flash-attn, PyTorch SDPA), what Llama 3's stack and
# TorchTitan run; "triton": the Triton FlashAttention with an ALiBi bias that MPT's
# llm-foundry runs (attn_impl: triton); "cudnn": cuDNN's fused attention, which Transformer
# Engine (Megatron-Core, NeMo, Megatron-Bridge) prefers on Hopper and later GPUs.
# calibration.attention_efficiency times each (docs/performance-model.md, "Attention kernels").
ATTENTION_KERNELS = ("flash", "triton", "cudnn")
# issue 14 (optimizer states): how Adam's first and second moments are stored, bytes a value:
# fp32 (mixed-precision Adam, ZeRO's 12 B/parameter of optimizer states with the fp32 master
# weights) or bf16 (Megatron-Core's --use-precision-aware-optimizer --exp-avg-dtype bf16
# --exp-avg-sq-dtype bf16; DeepSeek-V3 report, arXiv:2412.19437, sec. 3.3.3). The master
# weights stay fp32 either way.
OPTIMIZER_MOMENTS = {"fp32": 4.0, "bf16": 2.0}
# issue 14 (pipeline schedule): how the pipeline runs its micro-batches. "1f1b": the
# framework's one-forward-one-backward schedule, interleaved at virtual_pipeline > 1
# (Megatron-LM; DeepSpeed's PipelineEngine). "dualpipe": DeepSeek's bidirectional DualPipe
# (DeepSeek-V3 report, arXiv:2412.19437, sec. 3.2.1, Table 2; github.com/deepseek-ai/
# DualPipe): each rank holds two stages, micro-batches enter from both ends, and each paired
# forward and backward chunk runs its all-to-all and pipeline sends beside the other's
# compute. "combined_1f1b": Megatron-Core's Combined 1F1B (overlap_moe_expert_parallel_comm,
# Megatron-Bridge's moe_a2a_overlap; Megatron-LM megatron/core/pipeline_parallel/
# combined_1f1b.py): the interleaved 1F1B schedule whose steady state runs each forward chunk
# beside another micro-batch's backward chunk, so the expert all-to-all of each runs beside
# the other's compute. pipeline_layout.bubble_fraction, memory.FamilyLoads,
# estimator.StepModel.
PIPELINE_SCHEDULES = ("1f1b", "dualpipe", "combined_1f1b")
# How a tensor-parallel rank holds an attention projection (Megatron-Core): "column", its
# output split over the ranks; "row", its input split; "duplicated", whole on every rank, run on
# the rank's sequence shard (MLA's down-projections, TELinear parallel_mode "duplicated").
ProjectionSplit = Literal["column", "row", "duplicated"]
_MLA_FIELDS = ("q_lora_rank", "qk_rope_head_dim", "v_head_dim")
# Widths and counts whose 0 means none (no shared expert, no MLA, no dense layers, no MTP).
_NONE_AT_ZERO = (
    "shared_expert_ffn_hidden_size",
    "kv_lora_rank",
    *_MLA_FIELDS,
    "dense_layers",
    "dense_ffn_hidden_size",
    "mtp_layers",
)


class Projection(NamedTuple):
    """One weight GEMM of the attention: ``out_width`` x ``in_width`` weights a token passes
    through, held as ``split`` says (ProjectionSplit); ``up``: one of MLA's up-projections
    (every head's Q, K and V from the latents, or Q from h), which selective recomputation
    runs again in the backward (Workload.recomputes_up_projections)."""

    out_width: int
    in_width: int
    split: ProjectionSplit
    up: bool = False


# Units of a parameter count as model names write them (BERT-Large 340M, Llama 3 70B, 1.6T),
# largest first; a count below a million is still said in M.
_PARAMETER_UNITS = ((1e12, "T"), (1e9, "B"), (1e6, "M"))


def parameter_count(n: float) -> str:
    """``n`` parameters as notes and errors say it: 57.9M, 8.03B, 405B, 1.6T. Three significant
    digits, so counts 2 % apart (workload.parameters' tolerance) never read the same, in the
    largest unit that keeps the number at 1 or more once rounded (0.9996e9 is 1B)."""
    scale, unit = next(
        ((s, u) for s, u in _PARAMETER_UNITS if float(f"{n / s:.3g}") >= 1.0),
        _PARAMETER_UNITS[-1],
    )
    value = n / scale
    # Past 999T (the request limit is 1e15) ".3g" would switch to exponent notation.
    return f"{value:.3g}{unit}" if value < 1000 else f"{value:,.0f}{unit}"


@hashed_once
@dataclass(frozen=True)
class Workload:
    """A transformer (decoder or encoder stack) and its training run.

    ``ffn_hidden_size`` is the width of one expert's FFN for MoE models; ``gated_ffn`` marks
    SwiGLU-style FFNs with three weight matrices instead of two; ``flash_attention`` (Dao et
    al. 2022) never materialises the s x s score matrix and recomputes it in the backward pass.
    """

    name: str
    layers: int
    hidden_size: int
    ffn_hidden_size: int
    attention_heads: int
    kv_heads: int
    sequence_length: int
    vocab_size: int
    training_tokens: float
    global_batch_size: int
    activation_recompute: str = "selective"
    precision: str = "bf16"
    experts: int = 1
    experts_per_token: int = 1
    gated_ffn: bool = False
    tied_embeddings: bool = False
    flash_attention: bool = True
    # issue 14: dropout layers (their masks take activation memory); Llama and MPT have none.
    dropout: bool = True
    # issue 14 (inputs): a causal (decoder) mask; with flash attention only the unmasked half
    # of the s x s scores is computed (flops.py). False for encoders (BERT).
    causal: bool = True
    # issue 14 (framework): FRAMEWORKS; what it changes is in compute.pipeline_engine_slowdown,
    # pipeline_layout.deepest_depth and memory.FamilyLoads (docs/performance-model.md,
    # "Frameworks").
    framework: str = "megatron"
    # issue 14 (MoE): the busiest expert rank's load over the mean at wide expert parallelism
    # (busiest_expert_load), how the all-to-all dispatches (EXPERT_DISPATCHES) and, with
    # node_deduplicated, node-limited routing: at most this many nodes a token (0: no limit;
    # DeepSeek-V3 routes to at most 4, sec. 2.1.2). estimator.expert_collective times them.
    expert_load_imbalance: float = DEFAULT_EXPERT_LOAD_IMBALANCE
    expert_dispatch: str = "all_to_all"
    expert_node_limit: int = 0
    # issue 14 (MoE): token dropping (Megatron-Core's moe_expert_capacity_factor; 0: dropless):
    # each expert takes at most this many times its even share of the routed tokens, and with
    # pad_expert_input_to_capacity exactly that many (busiest_expert_load,
    # expert_token_share).
    expert_capacity_factor: float = 0.0
    pad_expert_input_to_capacity: bool = False
    # issue 14 (inputs): the width of one attention head where heads x head_dim is not the
    # hidden size (Qwen3: 64 heads of 128 on h 4096; GPT-OSS: 64 of 64 on 2880); 0: h / heads.
    # Under MLA, each head's query and key width without the RoPE part (qk_nope_head_dim).
    head_dim: int = 0
    # issue 14 (attention): multi-head latent attention (MLA; DeepSeek-V2, Liu et al.
    # arXiv:2405.04434, sec. 2.1; Megatron-Core's MLASelfAttention): K and V up-projected per
    # head from a ``kv_lora_rank``-wide latent (0: no MLA), Q from a ``q_lora_rank``-wide one
    # (0: from h directly); each head's query and key ``qk_rope_head_dim`` wider for the
    # decoupled RoPE (the key's part one per token, shared by the heads); values
    # ``v_head_dim`` wide (0: head_dim). DeepSeek-V3: 512, 1,536, 64, 128 (config.json).
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    # issue 14 (attention kernel): ATTENTION_KERNELS; flash_attention only.
    attention_kernel: str = "flash"
    # issue 14 (tensor overlap): the stack overlaps each tensor-parallel all-gather and
    # reduce-scatter with the GEMM beside it (Megatron-Core's --tp-comm-overlap, Transformer
    # Engine's userbuffers; NVIDIA's NeMo / Megatron-Bridge recipes). estimator.StepModel.
    tp_comm_overlap: bool = False
    # issue 14 (attention): sliding-window attention, a query attending to the last
    # ``sliding_window_tokens`` tokens only (0: the whole causal prefix), on
    # ``sliding_window_layers`` of the layers (0: all of them; Mistral 7B: all, window 4,096;
    # GPT-OSS: 18 of 36, window 128; Gemma 3: 5 of every 6). flops.py, compute.py.
    sliding_window_tokens: int = 0
    sliding_window_layers: int = 0
    # issue 14 (MoE): the shared experts' FFN width, all of them together (0: none): a dense
    # FFN every token of an MoE layer passes through beside its routed experts, split over the
    # tensor ranks like any dense FFN and never dispatched (Megatron-Core's
    # --moe-shared-expert-intermediate-size; DeepSeekMoE, Dai et al. arXiv:2401.06066, sec.
    # 3.2; DeepSeek-V3: 1 of 2,048; Qwen2-57B-A14B: 20,480).
    shared_expert_ffn_hidden_size: int = 0
    # issue 14 (MoE): the first ``dense_layers`` layers of an MoE model have a dense FFN of
    # ``dense_ffn_hidden_size`` instead of experts (HF config.json first_k_dense_replace and
    # intermediate_size; Megatron-Core's --moe-layer-freq; DeepSeek-V3: 3 of 18,432, Kimi K2:
    # 1). What differs by layer is timed and sized as the layers' mean (memory.py, compute.py).
    dense_layers: int = 0
    dense_ffn_hidden_size: int = 0
    # issue 14 (MTP): multi-token prediction, ``mtp_layers`` sequential modules after the
    # decoder, each predicting one token further (DeepSeek-V3 report, arXiv:2412.19437, sec.
    # 2.2: depth 1; Megatron-Core's --mtp-num-layers). A module is one transformer block of the
    # decoder's routed kind (an MoE layer in an MoE model), a projection of [h; embedding] (2h)
    # to h, and the shared output head's logits and loss once more; it sits on the last
    # pipeline stage with the output layer (Megatron-Core's MultiTokenPredictionBlock).
    mtp_layers: int = 0
    # issue 14 (optimizer states): OPTIMIZER_MOMENTS; memory.py, compute.optimizer_step_bytes
    # and goodput's checkpoint read it through adam_moment_bytes.
    optimizer_moments: str = "fp32"
    # issue 14 (pipeline schedule): PIPELINE_SCHEDULES.
    pipeline_schedule: str = "1f1b"
    # issue 14 (pipeline layout): the layers of each pipeline stage, first to last, as the
    # request states them (EstimateRequest parallelism.stage_layers: Megatron-Core's
    # num_layers_in_first/last_pipeline_stage or pipeline_model_parallel_layout, or its even
    # default); () lets pipeline_layout balance the stages. Carried here, not on the plan,
    # because it fixes the pipeline degree and everything cached per workload reads it.
    stage_layers: tuple[int, ...] = ()
    # issue 14 (inputs): what the request conversion inferred rather than read (e.g. gated_ffn
    # from workload.parameters), said in the estimate's notes; never silent.
    inferred: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in (
            "layers",
            "hidden_size",
            "ffn_hidden_size",
            "attention_heads",
            "kv_heads",
            "sequence_length",
            "vocab_size",
            "global_batch_size",
            "experts",
            "experts_per_token",
        ):
            if getattr(self, name) < 1:
                raise InvalidInput(
                    f"must be >= 1, got {getattr(self, name)}", field=f"workload.{name}"
                )
        if not self.training_tokens > 0:
            raise InvalidInput(
                f"must be > 0, got {self.training_tokens}", field="workload.training_tokens"
            )
        for name in _NONE_AT_ZERO:
            if getattr(self, name) < 0:
                raise InvalidInput(
                    f"must be >= 1 (or 0: none), got {getattr(self, name)}",
                    field=f"workload.{name}",
                )
        if self.shared_expert_ffn_hidden_size and not self.is_moe:
            raise InvalidInput(
                "a shared expert sits beside routed experts: this workload is dense (experts 1); "
                "widen ffn_hidden_size instead",
                field="workload.shared_expert_ffn_hidden_size",
            )
        self._check_latent_attention()
        self._check_dense_layers()
        if self.head_dim < 0:
            raise InvalidInput(
                f"must be >= 1 (or 0: hidden_size / attention_heads), got {self.head_dim}",
                field="workload.head_dim",
            )
        if not self.head_dim and self.hidden_size % self.attention_heads:
            raise InvalidInput(
                f"hidden_size {self.hidden_size} is not a multiple of attention_heads "
                f"{self.attention_heads} (or state workload.head_dim)",
                field="workload.attention_heads",
            )
        if self.attention_heads % self.kv_heads:
            raise InvalidInput(
                f"attention_heads {self.attention_heads} is not a multiple of "
                f"kv_heads {self.kv_heads}",
                field="workload.kv_heads",
            )
        if self.experts_per_token > self.experts:
            raise InvalidInput(
                f"experts_per_token {self.experts_per_token} exceeds experts {self.experts}",
                field="workload.experts_per_token",
            )
        if not 1.0 <= self.expert_load_imbalance <= max(self.experts, 2):
            raise InvalidInput(
                f"must be between 1 (balanced) and experts ({self.experts}: every token on "
                f"one rank), got {self.expert_load_imbalance:g}",
                field="workload.expert_load_imbalance",
            )
        for name, choices in (
            ("expert_dispatch", EXPERT_DISPATCHES),
            ("activation_recompute", RECOMPUTE_MODES),
            ("precision", PRECISIONS),
            ("framework", FRAMEWORKS),
            ("attention_kernel", ATTENTION_KERNELS),
            ("optimizer_moments", tuple(OPTIMIZER_MOMENTS)),
            ("pipeline_schedule", PIPELINE_SCHEDULES),
        ):
            value = getattr(self, name)
            if value not in choices:
                raise InvalidInput(
                    f"expected one of {', '.join(choices)}, got {value!r}", field=f"workload.{name}"
                )
        if self.attention_kernel != "flash" and not self.flash_attention:
            raise InvalidInput(
                f"{self.attention_kernel!r} is a fused attention kernel; this workload's "
                "attention is unfused (flash_attention false)",
                field="workload.attention_kernel",
            )
        self._check_sliding_window()
        self._check_stage_layers()
        if self.dualpipe and self.framework == "deepspeed":
            raise InvalidInput(
                "DualPipe is DeepSeek's schedule; DeepSpeed's PipelineEngine runs its own 1F1B: "
                "expected 1f1b with framework deepspeed",
                field="workload.pipeline_schedule",
            )
        self._check_combined_1f1b()
        if self.expert_node_limit < 0:
            raise InvalidInput(
                f"must be >= 1 (or 0: no limit), got {self.expert_node_limit}",
                field="workload.expert_node_limit",
            )
        self._check_capacity()
        if self.expert_node_limit and self.expert_dispatch != "node_deduplicated":
            raise InvalidInput(
                "node-limited routing saves network bytes only when each node is sent a token "
                "once: set expert_dispatch to node_deduplicated",
                field="workload.expert_node_limit",
            )

    def _check_capacity(self) -> None:
        c = self.expert_capacity_factor
        if c and not self.is_moe:
            raise InvalidInput(
                "a capacity factor drops tokens past an expert's share: this workload is dense "
                "(experts 1)",
                field="workload.expert_capacity_factor",
            )
        most = self.experts / self.experts_per_token
        if not 0.0 <= c <= most:  # NaN fails both
            raise InvalidInput(
                f"must be > 0 and at most experts / experts_per_token = {most:g} (an expert "
                f"then takes every token), or 0: dropless; got {c:g}",
                field="workload.expert_capacity_factor",
            )
        if self.pad_expert_input_to_capacity and not c:
            raise InvalidInput(
                "pads each expert's input to the capacity workload.expert_capacity_factor sets: "
                "state it (> 0); a dropless layer has no capacity",
                field="workload.pad_expert_input_to_capacity",
            )

    def capped_expert_load(self, dropless: float) -> float:
        """An expert's load, over a dropless balanced layer's, whose dropless load is
        ``dropless``: under token dropping at most the capacity factor c, and exactly c when
        padded to it (Megatron-Core's moe_pad_expert_input_to_capacity)."""
        c = self.expert_capacity_factor
        if not c:
            return dropless
        return c if self.pad_expert_input_to_capacity else min(dropless, c)

    @property
    def expert_token_share(self) -> float:
        """The routed tokens an expert rank's dispatch and buffers carry over a dropless,
        balanced layer's, on the mean rank: an even share capped (capped_expert_load)."""
        return self.capped_expert_load(1.0)

    def busiest_expert_load(self, expert: int) -> float:
        """The busiest of ``expert`` expert-parallel ranks' load over a dropless balanced
        layer's mean: ``expert_load_imbalance`` in proportion to 1 - 1/e (no rank to wait for
        without expert parallelism). Under token dropping no expert takes more than the
        capacity factor c times its share (Megatron-Core's moe_expert_capacity_factor), so the
        busiest rank's load is at most c; padded to capacity every rank's is c, however
        balanced the routing (capped_expert_load). That rank computes its experts' GEMMs on
        it (compute.compute_s_per_token) and receives and sends it in the all-to-all
        (estimator.expert_collective): the others wait for it at the next all-to-all. Its
        memory is the mean rank's (memory._blocks_ffns, at expert_token_share): the busiest
        rank of one layer and micro-batch is seldom that of the next, and a rank holds the
        activations of many."""
        return self.capped_expert_load(
            1.0 + (self.expert_load_imbalance - 1.0) * (1.0 - 1.0 / expert)
        )

    def _check_stage_layers(self) -> None:
        if not self.stage_layers:
            return
        if min(self.stage_layers) < 1:
            raise InvalidInput(
                f"every stage holds a layer: expected each >= 1, got {list(self.stage_layers)}",
                field="parallelism.stage_layers",
            )
        if sum(self.stage_layers) != self.layers:
            raise InvalidInput(
                f"the stages' layers must add up to workload.layers = {self.layers}; "
                f"{' + '.join(map(str, self.stage_layers))} = {sum(self.stage_layers)}",
                field="parallelism.stage_layers",
            )

    def _check_dense_layers(self) -> None:
        if not self.dense_layers:
            if self.dense_ffn_hidden_size:
                raise InvalidInput(
                    "the width of the dense layers' FFN needs their count: set "
                    "workload.dense_layers too",
                    field="workload.dense_ffn_hidden_size",
                )
            return
        if not self.is_moe:
            raise InvalidInput(
                "dense layers sit beside MoE layers: this workload is dense (experts 1), "
                "every layer already is",
                field="workload.dense_layers",
            )
        if self.dense_layers >= self.layers:
            raise InvalidInput(
                f"must leave an MoE layer: at most layers - 1 ({self.layers - 1}), got "
                f"{self.dense_layers} (a model without one is dense: experts 1)",
                field="workload.dense_layers",
            )
        if not self.dense_ffn_hidden_size:
            raise InvalidInput(
                f"the {self.dense_layers} dense layers need their FFN's width (DeepSeek-V3: "
                "18432, its config.json intermediate_size)",
                field="workload.dense_ffn_hidden_size",
            )

    def _check_latent_attention(self) -> None:
        if self.kv_lora_rank:
            if self.kv_heads != self.attention_heads:
                raise InvalidInput(
                    f"multi-head latent attention up-projects K and V for every head: kv_heads "
                    f"must equal attention_heads ({self.attention_heads}), got {self.kv_heads}",
                    field="workload.kv_heads",
                )
            return
        stated = next((n for n in _MLA_FIELDS if getattr(self, n)), None)
        if stated:
            raise InvalidInput(
                "applies to multi-head latent attention only: set workload.kv_lora_rank (the "
                "K/V latent's width) too",
                field=f"workload.{stated}",
            )

    def _check_sliding_window(self) -> None:
        if self.sliding_window_tokens < 0:
            raise InvalidInput(
                f"must be >= 1 (or 0: no window), got {self.sliding_window_tokens}",
                field="workload.sliding_window_tokens",
            )
        if not 0 <= self.sliding_window_layers <= self.layers:
            raise InvalidInput(
                f"must be between 1 and layers ({self.layers}) (or 0: every layer), got "
                f"{self.sliding_window_layers}",
                field="workload.sliding_window_layers",
            )
        if self.sliding_window_layers and not self.sliding_window_tokens:
            raise InvalidInput(
                "the layers of a sliding window need its width: set workload.sliding_window_tokens",
                field="workload.sliding_window_layers",
            )
        if self.sliding_window_tokens and not self.causal:
            raise InvalidInput(
                "a sliding window is modelled for causal (decoder) attention only; this "
                "workload's attention is bidirectional (causal false)",
                field="workload.sliding_window_tokens",
            )

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @cached_property
    def tensor_split_widths(self) -> tuple[tuple[str, int], ...]:
        """What every tensor rank holds an equal share of, by field: Megatron-Core gives every
        tensor rank whole heads and query groups (K/V heads) and an equal share of the FFN
        columns (its ``divide`` asserts both in attention.py and the column-parallel linears);
        a shared expert's FFN and the dense layers' are split like any dense one (0: none,
        which every degree divides)."""
        return (
            ("attention_heads", self.attention_heads),
            ("kv_heads", self.kv_heads),
            ("ffn_hidden_size", self.ffn_hidden_size),
            ("shared_expert_ffn_hidden_size", self.shared_expert_ffn_hidden_size),
            ("dense_ffn_hidden_size", self.dense_ffn_hidden_size),
        )

    @cached_property
    def tensor_split(self) -> int:
        """What every tensor degree must divide: all of tensor_split_widths. Falcon sized its
        "multigroup" K/V groups to its tensor degree for this reason (Almazrouei et al.,
        arXiv:2311.16867)."""
        return gcd(*(n for _, n in self.tensor_split_widths))

    @cached_property
    def windowed_layers(self) -> int:
        """Layers whose attention is limited to the sliding window (0 without one)."""
        if not self.sliding_window_tokens:
            return 0
        return self.sliding_window_layers or self.layers

    @cached_property
    def kv_ratio(self) -> float:
        """K/V width relative to Q width (grouped-query attention; 1.0 = multi-head)."""
        return self.kv_heads / self.attention_heads

    @cached_property
    def latent_attention(self) -> bool:
        """Multi-head latent attention (MLA): K and V from a per-token latent."""
        return self.kv_lora_rank > 0

    @cached_property
    def head_width(self) -> int:
        """One head's query and key width (without MLA's RoPE part): head_dim, else h / heads."""
        return self.head_dim or self.hidden_size // self.attention_heads

    @cached_property
    def query_width(self) -> int:
        """Width of Q, heads x the query/key head width (with MLA's RoPE part): h unless
        head_dim says otherwise. K is this x kv_ratio."""
        return self.attention_heads * (self.head_width + self.qk_rope_head_dim)

    @cached_property
    def value_width(self) -> int:
        """Width of the attention output, heads x the value head width (MLA's v_head_dim, else
        the head width). V is this x kv_ratio."""
        return self.attention_heads * (self.v_head_dim or self.head_width)

    @cached_property
    def qkv_width(self) -> float:
        """Q's, K's and V's widths a token: q + kv_ratio x (q + v)."""
        return self.query_width + self.kv_ratio * (self.query_width + self.value_width)

    @cached_property
    def attention_projections(self) -> tuple[Projection, ...]:
        """The attention's weight GEMMs. Multi-head and grouped-query: one QKV (column split;
        q + 2 x kv_ratio x q wide) and the output projection (row split). MLA (Megatron-Core's
        MLASelfAttention): the Q down-projection to q_lora_rank (duplicated) and its
        up-projection (column), or Q from h directly (column); the K/V down-projection to
        kv_lora_rank plus the shared RoPE key (duplicated) and its up-projection to every
        head's key and value (column); the output projection (row)."""
        h, q = self.hidden_size, self.query_width
        output = Projection(h, self.value_width, "row")
        if not self.latent_attention:
            keys_values = self.kv_heads * (2 * self.head_width)
            return (Projection(q + keys_values, h, "column"), output)
        queries: tuple[Projection, ...]
        if self.q_lora_rank:
            queries = (
                Projection(self.q_lora_rank, h, "duplicated"),
                Projection(q, self.q_lora_rank, "column", up=True),
            )
        else:
            queries = (Projection(q, h, "column", up=True),)
        keys_values = self.attention_heads * self.head_width + self.value_width
        return (
            *queries,
            Projection(self.kv_lora_rank + self.qk_rope_head_dim, h, "duplicated"),
            Projection(keys_values, self.kv_lora_rank, "column", up=True),
            output,
        )

    @cached_property
    def recomputes_up_projections(self) -> bool:
        """Selective recomputation under MLA recomputes its up-projections in the backward and
        keeps the latents, not every head's Q, K and V (DeepSeek-V3 report, arXiv:2412.19437,
        sec. 3.2.3; Megatron-Bridge's DeepSeek-V3 recipes: recompute_modules mla_up_proj)."""
        return self.latent_attention and self.activation_recompute == "selective"

    @cached_property
    def attention_latent_width(self) -> int:
        """MLA's per-token latents (Q's, K/V's and the shared RoPE key), the outputs of its
        down-projections (0 without MLA)."""
        if not self.latent_attention:
            return 0
        return self.q_lora_rank + self.kv_lora_rank + self.qk_rope_head_dim

    @cached_property
    def attention_gather_width(self) -> int:
        """What a tensor rank all-gathers a token of before the attention's column-split
        GEMMs (sequence parallelism): h, or under MLA the latents (h for a Q projected from
        h), each down-projection having run on the rank's own sequence shard."""
        if not self.latent_attention:
            return self.hidden_size
        return (self.q_lora_rank or self.hidden_size) + self.kv_lora_rank + self.qk_rope_head_dim

    @cached_property
    def attention_parameters_per_layer(self) -> float:
        """The weights of the attention's projections (attention_projections)."""
        return float(sum(p.out_width * p.in_width for p in self.attention_projections))

    def _ffn_parameters(self, width: int) -> float:
        """Weights of an FFN of ``width``: 2 matrices, 3 when gated."""
        return (3 if self.gated_ffn else 2) * self.hidden_size * width

    @cached_property
    def expert_parameters_per_layer(self) -> float:
        """Weights of one FFN (one expert for MoE)."""
        return self._ffn_parameters(self.ffn_hidden_size)

    @cached_property
    def shared_expert_parameters_per_layer(self) -> float:
        """Weights of the shared experts' FFN (gated like the routed ones); 0 without."""
        return self._ffn_parameters(self.shared_expert_ffn_hidden_size)

    @cached_property
    def dense_ffn_parameters_per_layer(self) -> float:
        """Weights of a dense layer's FFN in an MoE model (gated like the experts); 0 without."""
        return self._ffn_parameters(self.dense_ffn_hidden_size)

    @cached_property
    def dualpipe(self) -> bool:
        return self.pipeline_schedule == "dualpipe"

    @cached_property
    def combined_1f1b(self) -> bool:
        return self.pipeline_schedule == "combined_1f1b"

    def _check_combined_1f1b(self) -> None:
        """What Megatron-Core's Combined 1F1B asserts of the model (transformer_config.py,
        overlap_moe_expert_parallel_comm): a mixture of experts, whose all-to-all it
        overlaps, and no full recomputation (a layer checkpointed whole has no separate
        dispatch and combine to schedule). Megatron's schedule, not DeepSpeed's."""
        if not self.combined_1f1b:
            return
        why = ""
        if not self.is_moe:
            why = f"{self.name} is dense: Combined 1F1B overlaps the expert all-to-all"
        elif self.activation_recompute == "full":
            why = (
                "activation_recompute full: Megatron-Core asserts no full recomputation with "
                "overlap_moe_expert_parallel_comm"
            )
        elif self.framework != "megatron":
            why = f"Combined 1F1B is Megatron-Core's schedule, not {self.framework}'s"
        if why:
            raise InvalidInput(f"{why}; expected 1f1b", field="workload.pipeline_schedule")

    @cached_property
    def stages_per_rank(self) -> int:
        """Pipeline stages a pipeline rank holds: two under DualPipe (stage r and stage
        p - 1 - r: its Table 2's 2x parameters), else one."""
        return 2 if self.dualpipe else 1

    @cached_property
    def adam_moment_bytes(self) -> float:
        """Bytes of each of Adam's two moments a parameter (OPTIMIZER_MOMENTS)."""
        return OPTIMIZER_MOMENTS[self.optimizer_moments]

    @cached_property
    def optimizer_state_bytes_per_parameter(self) -> float:
        """Adam's states a parameter: the fp32 master weights (4 B) and the two moments
        (ZeRO's 12 B with fp32 moments; 8 with bf16 ones)."""
        return 4.0 + 2.0 * self.adam_moment_bytes

    @cached_property
    def checkpoint_bytes_per_parameter(self) -> float:
        """What a checkpoint that resumes training holds a parameter: the bf16 weights (2 B)
        and the optimizer states (goodput.CHECKPOINT_BYTES_PER_PARAMETER, 14 B, with fp32
        moments)."""
        return 2.0 + self.optimizer_state_bytes_per_parameter

    @cached_property
    def checkpoint_size_bytes(self) -> float:
        """Bytes one checkpoint that resumes training writes (goodput.py times it)."""
        return self.parameters * self.checkpoint_bytes_per_parameter

    @cached_property
    def transformer_blocks(self) -> int:
        """The blocks (attention and FFN) a token passes in a forward: the decoder's layers
        and one per MTP module. The decoder's layers alone split over the pipeline stages;
        the MTP blocks sit on the last (pipeline_layout)."""
        return self.layers + self.mtp_layers

    @cached_property
    def expert_layers(self) -> int:
        """Blocks whose FFN is the experts' (every block of a dense model, its one expert): the
        decoder's MoE layers and the MTP modules' blocks, of the same kind."""
        return self.layers - self.dense_layers + self.mtp_layers

    @cached_property
    def expert_layer_share(self) -> float:
        """The share of the blocks that route to experts: what runs the expert all-to-all."""
        return self.expert_layers / self.transformer_blocks

    @cached_property
    def mtp_projection(self) -> Projection:
        """An MTP module's projection of [h; embedding] (2h) to h, column split."""
        return Projection(self.hidden_size, 2 * self.hidden_size, "column")

    @cached_property
    def mtp_projection_parameters(self) -> float:
        """The MTP modules' projections' weights (0 without)."""
        p = self.mtp_projection
        return float(self.mtp_layers * p.out_width * p.in_width)

    def _block_ffn_parameters(self, experts: int) -> float:
        """The weights of an expert block's FFN with ``experts`` of its routed experts (all
        of them, or the k a token passes through): with the router and the shared expert in
        an MoE model, the one FFN of a dense model."""
        return (
            self.router_parameters_per_layer
            + self.shared_expert_parameters_per_layer
            + experts * self.expert_parameters_per_layer
        )

    def _layer_parameters(self, experts: int) -> float:
        """All blocks' weights (the MTP modules' with their projections) with ``experts`` of
        each MoE block's."""
        return (
            self.transformer_blocks * self.attention_parameters_per_layer
            + self.expert_layers * self._block_ffn_parameters(experts)
            + self.dense_layers * self.dense_ffn_parameters_per_layer
            + self.mtp_projection_parameters
        )

    @cached_property
    def router_parameters_per_layer(self) -> float:
        return self.hidden_size * self.experts if self.is_moe else 0.0

    @cached_property
    def embedding_parameters(self) -> float:
        """Input embedding plus the output projection unless the two are tied."""
        return self.vocab_size * self.hidden_size * (1 if self.tied_embeddings else 2)

    @cached_property
    def expert_parameters(self) -> float:
        """Parameters that live in experts (sharded by expert parallelism); 0 when dense."""
        if not self.is_moe:
            return 0.0
        return self.expert_layers * self.experts * self.expert_parameters_per_layer

    @cached_property
    def parameters(self) -> float:
        """Total trainable parameters, the MTP modules' included (layer norms and biases
        neglected: < 0.1%)."""
        return self._layer_parameters(self.experts) + self.embedding_parameters

    @cached_property
    def main_model_parameters(self) -> float:
        """``parameters`` without the MTP modules' (their blocks and projections; they share
        the embedding and the output head): what model cards state, DeepSeek-V3's 671B of
        685B weights (its Hugging Face README: 671B main model, 14B MTP module)."""
        block = self.attention_parameters_per_layer + self._block_ffn_parameters(self.experts)
        return self.parameters - self.mtp_layers * block - self.mtp_projection_parameters

    @cached_property
    def active_parameters(self) -> float:
        """Parameters a token passes through (its top-k routed experts and the shared ones;
        the MTP modules' too)."""
        return self._layer_parameters(self.experts_per_token) + self.embedding_parameters

    @cached_property
    def tokens_per_step(self) -> int:
        return self.global_batch_size * self.sequence_length

    @cached_property
    def steps(self) -> float:
        """Optimizer steps = training tokens / (global batch x sequence length)."""
        return self.training_tokens / self.tokens_per_step
