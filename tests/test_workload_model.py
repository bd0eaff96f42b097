"""The workload record: parameter counts against published figures, and input validation."""

from __future__ import annotations

import pytest

from optimizer.errors import InvalidInput
from optimizer.performance.validation import load_records
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset, preset_names, preset_source

# Published totals: Llama 3 paper Table 3 (8B/70B/405B), Brown et al. 2020 (175B), Mixtral
# paper (46.7B total, 12.9B active), Devlin et al. 2019 (BERT-Large 340M incl. pooler/heads),
# the DeepSeek-V3 report (671B, sec. 4.2, its MTP module aside: the count the presets compare)
# and the Kimi-K2 model card (1T total, 32B activated).
PUBLISHED_PARAMETERS = [
    ("llama3-8b", 8.0e9),
    ("llama3-70b", 70.6e9),
    ("llama3-405b", 405.8e9),
    ("gpt3-175b", 175.0e9),
    ("mixtral-8x7b", 46.7e9),
    ("bert-large", 0.34e9),
    ("deepseek-v3", 671e9),
    ("kimi-k2", 1.0e12),
]


@pytest.mark.parametrize(("name", "published"), PUBLISHED_PARAMETERS)
def test_preset_parameters_match_the_published_total(name: str, published: float) -> None:
    assert preset(name).main_model_parameters == pytest.approx(published, rel=0.03)


def test_mixtral_active_parameters_match_the_paper() -> None:
    # Jiang et al. 2024: "47B parameters, 13B active per token".
    assert preset("mixtral-8x7b").active_parameters == pytest.approx(12.9e9, rel=0.02)


def test_kimi_k2_active_parameters_match_the_model_card() -> None:
    # Moonshot AI's Kimi-K2 model card: "32 billion activated parameters" (MLA, 1 shared and 8
    # of 384 routed experts, the first layer dense).
    assert preset("kimi-k2").active_parameters == pytest.approx(32e9, rel=0.03)


def _mpt_records() -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    for r in load_records():
        model = r.get("model", {})
        if model.get("name", "").startswith("MPT-") and model.get("seq_len") == 2048:
            # Some rows count extra position-embedding weights; the smallest is the ALiBi model.
            name = model["name"].lower()
            seen[name] = min(seen.get(name, model["params"]), model["params"])
    return sorted(seen.items())


@pytest.mark.parametrize(("name", "params"), _mpt_records())
def test_mpt_presets_match_llm_foundry_parameter_counts(name: str, params: int) -> None:
    """Source: mosaicml/llm-foundry benchmarking README via published-runs.json."""
    assert preset(name).parameters == pytest.approx(params, rel=0.015)  # norms neglected


def test_every_preset_names_its_source() -> None:
    assert all(preset_source(n) for n in preset_names())


def test_overrides_replace_preset_fields() -> None:
    w = preset("llama3-8b", sequence_length=4096, global_batch_size=1024)
    assert (w.sequence_length, w.global_batch_size, w.layers) == (4096, 1024, 32)


def test_steps_are_tokens_over_batch_tokens() -> None:
    w = preset("gpt3-175b")
    assert w.steps == pytest.approx(300e9 / (1536 * 2048))


def test_unknown_preset_names_the_field() -> None:
    with pytest.raises(InvalidInput, match=r"workload.model"):
        preset("gpt-5")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("layers", 0),
        ("activation_recompute", "sometimes"),
        ("precision", "fp4"),
        ("kv_heads", 7),
        ("experts_per_token", 9),
        ("training_tokens", 0.0),
    ],
)
def test_invalid_fields_are_named(field: str, value: object) -> None:
    fields = dict(
        name="x",
        layers=2,
        hidden_size=64,
        ffn_hidden_size=256,
        attention_heads=8,
        kv_heads=8,
        sequence_length=128,
        vocab_size=1000,
        training_tokens=1e9,
        global_batch_size=8,
        experts=8,
    )
    fields[field] = value
    with pytest.raises(InvalidInput, match=f"workload.{field}"):
        Workload(**fields)  # type: ignore[arg-type]
