"""FLOPs of one training step: model FLOPs (what the math needs) and hardware FLOPs (what the
GPUs execute, counting activation recomputation).

Per token and layer, a forward pass costs 2 FLOPs per multiply-accumulate of every weight the
token passes through, plus the attention scores QK^T and AV: 2 x 2 x s x h (Narayanan et al.,
SC'21, sec. 5.1 / appendix, who count the full s x s product). Backward costs 2x forward. For
l layers of 12h^2 weights and f = 4h this gives Narayanan et al. eq. (3):
96 B s l h^2 (1 + s/6h + V/16lh) with full recomputation, and 72 B s l h^2 (1 + s/6h) + 6 B s h V
without; to first order both are the 6 N D rule of Kaplan et al. (2020).

Causal attention (issue 14): a decoder's token attends only to the tokens before it, so half
of the s x s product is masked. Flash attention skips the masked blocks (FlashAttention-2,
Dao 2023, sec. 3.1.1), so a causal model with flash attention computes 2 s h per token and
layer, not 4 s h; without flash attention the full product is computed and then masked, which
is what eq. (3) counts (SC'21 predates flash attention). Model FLOPs (MFU) follow the same
rule: the masked half is work the math does not need (the FlashAttention-2 convention; Megatron
SC'21 and PaLM count the full product, which gives a higher MFU at long sequences).

Sliding-window attention (issue 14): a query of a windowed layer attends to the last W tokens
only (Beltagy et al. 2020, Longformer; Mistral 7B, Jiang et al. 2023, sec. 2), W - W^2 / 2s
keys on average over a sequence of s (the first W queries see fewer), which flash kernels
compute alone (FlashAttention-2 skips the blocks outside the window as it skips the masked
ones); without flash attention the full product is computed and masked, as above.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from optimizer.workload.model import Workload

FORWARD_BACKWARD_FACTOR = 3  # backward = 2 x forward (weight and input gradients)


@dataclass(frozen=True)
class TokenFlops:
    """Forward FLOPs per token, by part."""

    layer_matmul: float  # all transformer blocks' weight GEMMs (active experts only; MTP's)
    attention_scores: float  # QK^T and AV over all blocks
    logits: float  # output projection to the vocabulary, once more per MTP module

    @property
    def layers(self) -> float:
        return self.layer_matmul + self.attention_scores

    @property
    def total(self) -> float:
        return self.layers + self.logits


@lru_cache(maxsize=1024)
def forward_flops_per_token(w: Workload) -> TokenFlops:
    """Forward FLOPs one token costs (Narayanan et al. SC'21 appendix, generalised to GQA,
    gated FFNs, top-k and shared experts, dense layers beside MoE ones, MTP modules: each a
    block, its projection and the output head once more)."""
    return TokenFlops(
        layer_matmul=2.0 * (w.active_parameters - w.embedding_parameters),
        attention_scores=attention_score_flops_per_token(w),
        logits=2.0 * w.hidden_size * w.vocab_size * (1 + w.mtp_layers),
    )


def attention_score_flops_per_token_layer(w: Workload) -> float:
    """Forward FLOPs of QK^T and AV for one token in one layer: 2 x s x heads x the query/key
    head width plus 2 x s x heads x the value head width (4 s h for the usual heads; Narayanan
    et al. SC'21; MLA's are 192 and 128 wide in DeepSeek-V3) for the full product, half of it
    for a causal model whose flash attention skips the masked blocks (Dao 2023,
    FlashAttention-2)."""
    full = 2.0 * w.sequence_length * (w.query_width + w.value_width)
    return full / 2 if w.causal and w.flash_attention else full


def attention_score_flops_per_token(w: Workload) -> float:
    """Forward FLOPs of QK^T and AV for one token over all blocks: the windowed layers
    (``w.windowed_layers``) at the keys their window leaves (causal_window_keys) when flash
    attention skips the others; an MTP block attends to the whole causal prefix."""
    per_layer = attention_score_flops_per_token_layer(w)
    windowed = w.windowed_layers if w.flash_attention else 0
    if not windowed:
        return per_layer * w.transformer_blocks
    s = w.sequence_length
    share = causal_window_keys(s, w.sliding_window_tokens) / (s / 2)
    return per_layer * (w.transformer_blocks - windowed + windowed * share)


def causal_window_keys(sequence: int, window: int) -> float:
    """Keys a query attends to on average under a causal mask limited to the last
    ``window`` tokens: W - W^2 / 2s, and s / 2 (the causal half) once the window spans the
    sequence."""
    if window >= sequence:
        return sequence / 2
    return window - window * window / (2 * sequence)


@lru_cache(maxsize=1024)
def model_flops_per_step(w: Workload) -> float:
    """Model FLOPs of one optimizer step (no recomputation): 3 x forward x tokens."""
    return FORWARD_BACKWARD_FACTOR * forward_flops_per_token(w).total * w.tokens_per_step


# FlashAttention's backward recomputes the scores S = QK^T from Q, K and the saved row
# log-sum-exp: one of its five GEMMs, half of the forward's two (Dao 2023, FlashAttention-2,
# Algorithm 2; the repository's benchmarks/benchmark_flash_attention.py counts the backward
# as 2.5 x the forward, the forward and backward as 3.5 x).
FLASH_BACKWARD_RECOMPUTE = 0.5


def attention_recompute_passes(w: Workload) -> float:
    """Forward passes of the attention scores recomputed per step, over the 3 of a forward
    and backward: a full recomputation's whole forward, plus flash attention's half pass in
    its backward; selective recomputation of an unfused attention (Korthikanti et al. 2022,
    sec. 4.2), one. Selective recomputation adds nothing to flash attention: the s x s
    activations it drops are never stored (Megatron-LM checkpoints the core attention only on
    its unfused path, ParallelAttention.forward)."""
    flash = FLASH_BACKWARD_RECOMPUTE if w.flash_attention else 0.0
    if w.activation_recompute == "full":
        return 1.0 + flash
    if w.flash_attention:
        return flash
    return 1.0 if w.activation_recompute == "selective" else 0.0


def recompute_flops_per_token(w: Workload) -> float:
    """Extra forward FLOPs per token spent recomputing activations.

    full: the whole forward of every layer again (Chen et al. 2016; Narayanan et al. eq. 3);
    selective under MLA: its up-projections' (Workload.recomputes_up_projections); the
    attention scores as ``attention_recompute_passes`` counts them (flash attention's
    backward recomputes half a forward of them whatever the recomputation).
    """
    f = forward_flops_per_token(w)
    layers = f.layer_matmul if w.activation_recompute == "full" else 0.0
    if w.recomputes_up_projections:
        up = sum(p.out_width * p.in_width for p in w.attention_projections if p.up)
        layers = 2.0 * up * w.transformer_blocks
    return layers + f.attention_scores * attention_recompute_passes(w)


@lru_cache(maxsize=1024)
def hardware_flops_per_step(w: Workload) -> float:
    """FLOPs the GPUs execute in one step, recomputation included (Megatron's convention)."""
    return model_flops_per_step(w) + recompute_flops_per_token(w) * w.tokens_per_step


def six_nd_flops(parameters: float, tokens: float) -> float:
    """The 6 N D rule (Kaplan et al. 2020): training FLOPs of N parameters over D tokens."""
    return 6.0 * parameters * tokens


def megatron_eq3_flops(w: Workload, batch: int) -> float:
    """Narayanan et al. SC'21 eq. (3), verbatim: 96 B s l h^2 (1 + s/6h + V/16lh).

    Valid for the GPT shape it was derived for (f = 4h, multi-head attention, full
    recomputation, the full s x s product: no flash attention); used to check the general
    formula above.
    """
    s, n, h, v = w.sequence_length, w.layers, w.hidden_size, w.vocab_size
    return 96.0 * batch * s * n * h * h * (1 + s / (6 * h) + v / (16 * n * h))
