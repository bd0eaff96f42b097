"""Named workloads as data, each with the source of its architecture and training figures.

Where a source gives no batch or token count, the value is a modelling default and says so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from optimizer.errors import InvalidInput
from optimizer.workload.model import Workload

_MEGATRON = "Narayanan et al., SC'21, arXiv:2104.04473, Table 1 (weak scaling)"
_MEGATRON_SHAPE: dict[str, Any] = dict(
    sequence_length=2048, vocab_size=51200, activation_recompute="full", training_tokens=300e9
)  # dropout kept: Megatron-LM's defaults are hidden_dropout 0.1 and attention_dropout 0.1
_MPT = (
    "mosaicml/llm-foundry scripts/train/benchmarking yamls (d_model, n_heads, n_layers; "
    "expansion_ratio 4, vocab 50368, tied embeddings)"
)
_MPT_SHAPE: dict[str, Any] = dict(
    sequence_length=2048,
    vocab_size=50368,
    tied_embeddings=True,
    training_tokens=300e9,
    global_batch_size=512,
    activation_recompute="none",
    # llm-foundry config_defaults.py: attn_pdrop 0.0; MPTConfig resid_pdrop / emb_pdrop 0.0.
    dropout=False,
)
_LLAMA3 = "Llama Team, 'The Llama 3 Herd of Models', arXiv:2407.21783, Table 3"
_LLAMA3_SHAPE: dict[str, Any] = dict(
    sequence_length=8192,
    vocab_size=128256,
    kv_heads=8,
    gated_ffn=True,
    training_tokens=15e12,
    # No dropout: the Llama architecture has no hidden dropout and the released config.json
    # (meta-llama/Llama-3.1-*) sets attention_dropout 0.0.
    dropout=False,
)


def _megatron(
    params_b: str, heads: int, hidden: int, layers: int, batch: int, tokens: float = 300e9
) -> dict[str, Any]:
    return dict(
        name=f"megatron-{params_b}",
        layers=layers,
        hidden_size=hidden,
        ffn_hidden_size=4 * hidden,
        attention_heads=heads,
        kv_heads=heads,
        global_batch_size=batch,
        source=_MEGATRON,
        **{**_MEGATRON_SHAPE, "training_tokens": tokens},
    )


def _mpt(size: str, hidden: int, heads: int, layers: int) -> dict[str, Any]:
    return dict(
        name=f"mpt-{size}",
        layers=layers,
        hidden_size=hidden,
        ffn_hidden_size=4 * hidden,
        attention_heads=heads,
        kv_heads=heads,
        source=_MPT,
        **_MPT_SHAPE,
    )


PRESETS: dict[str, dict[str, Any]] = {
    str(p["name"]): p
    for p in (
        dict(
            name="bert-large",
            layers=24,
            hidden_size=1024,
            ffn_hidden_size=4096,
            attention_heads=16,
            kv_heads=16,
            sequence_length=512,
            vocab_size=30522,
            global_batch_size=256,
            training_tokens=256 * 512 * 1e6,
            tied_embeddings=True,
            activation_recompute="none",
            # An encoder: bidirectional attention (no causal mask); dropout 0.1 on every layer
            # (Devlin et al. sec. A.2; hidden_dropout_prob / attention_probs_dropout_prob 0.1).
            causal=False,
            source="Devlin et al., NAACL 2019 (BERT-Large: L=24, H=1024, A=16; batch 256 x 512 "
            "tokens; 1M steps, taken here all at length 512)",
        ),
        dict(
            name="gpt3-175b",
            layers=96,
            hidden_size=12288,
            ffn_hidden_size=4 * 12288,
            attention_heads=96,
            kv_heads=96,
            sequence_length=2048,
            vocab_size=51200,
            global_batch_size=1536,
            training_tokens=300e9,
            activation_recompute="full",  # dropout kept (GPT-3 follows GPT-2: dropout 0.1)
            source="Brown et al. 2020 Table 2.1 (96 layers, d=12288, 96 heads, 300B tokens); batch "
            "1536 and vocabulary 51200 as in Narayanan et al. SC'21 sec. 5.1",
        ),
        dict(
            name="llama3-8b",
            layers=32,
            hidden_size=4096,
            ffn_hidden_size=14336,
            attention_heads=32,
            global_batch_size=512,
            source=_LLAMA3 + "; batch 4M tokens is a "
            "modelling default (the paper gives the 405B schedule only)",
            **_LLAMA3_SHAPE,
        ),
        dict(
            name="llama3-70b",
            layers=80,
            hidden_size=8192,
            ffn_hidden_size=28672,
            attention_heads=64,
            # 16M tokens, the batch Llama 3 trained with on 16K GPUs (the 405B schedule's final
            # stage, sec. 3.4.1). With 4M tokens (512 sequences) data x tensor parallelism stops
            # at 4,096 GPUs (one sequence per replica) and a pipeline cannot fill with one
            # micro-batch, so 15T tokens would take at least 1,300 h on any H100 cluster.
            global_batch_size=2048,
            source=_LLAMA3 + "; batch 16M tokens (the 405B schedule's final stage on 16K GPUs, "
            "sec. 3.4.1) is a modelling default",
            **_LLAMA3_SHAPE,
        ),
        dict(
            name="llama3-405b",
            layers=126,
            hidden_size=16384,
            ffn_hidden_size=53248,
            attention_heads=128,
            global_batch_size=2048,
            source=_LLAMA3 + "; 15.6T tokens, final batch 16M tokens (sec. 3.4.1)",
            **{**_LLAMA3_SHAPE, "training_tokens": 15.6e12},
        ),
        _megatron("1.7b", 24, 2304, 24, 512),
        _megatron("3.6b", 32, 3072, 30, 512),
        _megatron("7.5b", 32, 4096, 36, 512),
        _megatron("18.4b", 48, 6144, 40, 1024),
        _megatron("39.1b", 64, 8192, 48, 1536),
        _megatron("76.1b", 80, 10240, 60, 1792),
        _megatron("145.6b", 96, 12288, 80, 2304),
        _megatron("310.1b", 128, 16384, 96, 2160),
        _megatron("529.6b", 128, 20480, 105, 2520),
        _megatron("1t", 160, 25600, 128, 3072, tokens=450e9),
        _mpt("125m", 768, 12, 12),
        _mpt("350m", 1024, 16, 24),
        _mpt("760m", 1536, 12, 24),
        _mpt("1b", 2048, 16, 24),
        _mpt("3b", 2560, 20, 32),
        _mpt("7b", 4096, 32, 32),
        _mpt("13b", 5120, 40, 40),
        _mpt("30b", 7168, 64, 48),
        _mpt("70b", 8192, 64, 80),
        dict(
            name="mixtral-8x7b",
            layers=32,
            hidden_size=4096,
            ffn_hidden_size=14336,
            attention_heads=32,
            kv_heads=8,
            sequence_length=4096,
            vocab_size=32000,
            experts=8,
            experts_per_token=2,
            gated_ffn=True,
            dropout=False,  # HF config.json of Mixtral-8x7B-v0.1: attention_dropout 0.0
            global_batch_size=1024,
            training_tokens=1e12,
            source="Jiang et al., 'Mixtral of Experts', arXiv:2401.04088, Table 1 (32 layers, "
            "dim 4096, FFN 14336, 32/8 heads, 8 experts, top-2, vocab 32000); sequence "
            "4096, batch and 1T tokens are modelling defaults (not published)",
        ),
        dict(
            name="mixtral-8x22b",
            layers=56,
            hidden_size=6144,
            ffn_hidden_size=16384,
            attention_heads=48,
            kv_heads=8,
            sequence_length=4096,
            vocab_size=32768,
            experts=8,
            experts_per_token=2,
            gated_ffn=True,
            dropout=False,  # HF config.json of Mixtral-8x22B-v0.1: attention_dropout 0.0
            global_batch_size=1024,
            training_tokens=2e12,
            source="Mistral AI model card (params.json of Mixtral-8x22B-v0.1: 56 layers, dim "
            "6144, hidden 16384, 48/8 heads, 8 experts, top-2); batch and tokens are "
            "modelling defaults",
        ),
        dict(
            name="deepseek-v3",
            layers=61,
            hidden_size=7168,
            ffn_hidden_size=2048,
            attention_heads=128,
            kv_heads=128,
            head_dim=128,
            kv_lora_rank=512,
            q_lora_rank=1536,
            qk_rope_head_dim=64,
            v_head_dim=128,
            sequence_length=4096,
            vocab_size=129280,
            experts=256,
            experts_per_token=8,
            shared_expert_ffn_hidden_size=2048,
            dense_layers=3,
            dense_ffn_hidden_size=18432,
            mtp_layers=1,
            optimizer_moments="bf16",  # sec. 3.3.3: AdamW's moments in BF16, master weights FP32
            gated_ffn=True,
            dropout=False,  # HF config.json of DeepSeek-V3: attention_dropout 0.0
            global_batch_size=15360,
            training_tokens=14.8e12,
            source="DeepSeek-AI, 'DeepSeek-V3 Technical Report', arXiv:2412.19437, sec. 4.2 "
            "(61 layers, d 7168, MLA with 128 heads, 1 shared and 256 routed experts of width "
            "2048, top-8, vocab 129K, 4K sequence, batch 15360, 14.8T tokens); MLA's widths "
            "from its config.json (kv_lora_rank 512, q_lora_rank 1536, qk_nope_head_dim 128, "
            "qk_rope_head_dim 64, v_head_dim 128; first_k_dense_replace 3, intermediate_size "
            "18432); multi-token prediction at depth 1 (sec. 2.2 and 4.2; num_nextn_predict_"
            "layers 1): 671B total and 37.6B active here without the MTP module, against 671B "
            "and 37B published (682.6B and 38.2B trained with it); AdamW's first and second "
            "moments stored in BF16 (sec. 3.3.3)",
        ),
        dict(
            name="kimi-k2",
            layers=61,
            hidden_size=7168,
            ffn_hidden_size=2048,
            attention_heads=64,
            kv_heads=64,
            head_dim=128,
            kv_lora_rank=512,
            q_lora_rank=1536,
            qk_rope_head_dim=64,
            v_head_dim=128,
            sequence_length=4096,
            vocab_size=163840,
            experts=384,
            experts_per_token=8,
            shared_expert_ffn_hidden_size=2048,
            dense_layers=1,
            dense_ffn_hidden_size=18432,
            gated_ffn=True,
            dropout=False,  # Megatron-Bridge's KimiK2Provider: attention and hidden dropout 0.0
            global_batch_size=16384,
            training_tokens=15.5e12,
            source="Moonshot AI, Kimi-K2 model card (1T parameters, 32B activated, 61 layers of "
            "which 1 dense, d 7168, MLA with 64 heads, 384 experts of 2048, top-8, 1 shared, "
            "pre-trained on 15.5T tokens); widths from Megatron-Bridge's KimiK2Provider "
            "(src/megatron/bridge/models/kimi/kimi_provider.py: q_lora_rank 1536, kv_lora_rank "
            "512, qk 128 + 64, v 128, dense FFN 18432, vocab 163840, sequence 4096); batch "
            "16384 sequences (67M tokens) a modelling default (1.03T total and 32.9B active "
            "here)",
        ),
    )
}

_ARCH_FIELDS = {"source"}


def preset_names() -> tuple[str, ...]:
    return tuple(sorted(PRESETS))


def preset_source(name: str) -> str:
    return str(_lookup(name)["source"])


def _lookup(name: str) -> dict[str, Any]:
    try:
        return PRESETS[name.lower()]
    except KeyError:
        msg = f"unknown preset {name!r}; expected one of {', '.join(preset_names())}"
        raise InvalidInput(msg, field="workload.model") from None


def preset(name: str, **overrides: Any) -> Workload:
    """The named preset, with any field replaced by ``overrides``."""
    fields = {k: v for k, v in _lookup(name).items() if k not in _ARCH_FIELDS}
    return replace(Workload(**fields), **overrides) if overrides else Workload(**fields)
