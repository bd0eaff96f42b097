"""The visible published set (issue 14): published runs plus every configuration a paper states.

The data lives in the package (optimizer/performance/data/paper-configs.json, guide
paper-configs.md, beside published-runs.json), so these tests need nothing outside the
repository. Acceptance of the issue: on the visible set median |error| <= 5 % and worst <= 12 %
(hardware TFLOP/s per GPU); on the runs of >= 2,048 GPUs held out of the fit median <= 8 % and
worst <= 20 %.
"""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from benchmarks.estimator_accuracy import (
    HELD_OUT_MIN_GPUS,
    apply_parameters,
    constants_restored,
    estimate_or_refusal,
    fit,
    fit_cases,
    main,
    relative_error,
)
from optimizer.errors import InvalidInput
from optimizer.performance.validation import (
    PublishedCase,
    calibration_cases,
    convention_flops_per_token,
    load_paper_configs,
    load_records,
    paper_config_case,
    paper_config_cases,
    visible_cases,
)
from optimizer.workload.flops import hardware_flops_per_step, megatron_eq3_flops

RECORDS = load_paper_configs()
RECORD_IDS = [r["id"] for r in RECORDS]


def _record(record_id: str) -> dict[str, Any]:
    return copy.deepcopy(next(r for r in RECORDS if r["id"] == record_id))


@pytest.mark.parametrize("record", RECORDS, ids=RECORD_IDS)
def test_every_paper_configuration_states_its_source(record: dict[str, Any]) -> None:
    source = record["source"]
    assert source["short"].strip() and source["title"].strip() and source["locator"].strip()
    assert record["verification"].strip()


@pytest.mark.parametrize("record", RECORDS, ids=RECORD_IDS)
def test_every_paper_configuration_loads_into_a_case(record: dict[str, Any]) -> None:
    case = paper_config_case(record)
    assert case.id == record["id"] and case.cluster.gpus == record["gpus"]
    assert case.measured_hardware_tflops_per_gpu > 0
    assert case.source.startswith(record["source"]["short"])


def test_record_ids_are_unique_and_distinct_from_the_published_runs() -> None:
    published = {r["id"] for r in load_records()}
    assert len(set(RECORD_IDS)) == len(RECORD_IDS)
    assert not set(RECORD_IDS) & published


def test_a_record_drawn_from_published_runs_names_an_existing_record() -> None:
    published = {r["id"] for r in load_records()}
    named = {r["published_run_id"] for r in RECORDS if "published_run_id" in r}
    assert named and named <= published


def test_llama3_405b_table4_rows_are_all_there_with_their_plans() -> None:
    """Dubey et al. 2024 Table 4: (GPUs, TP, CP, PP, DP) = (8192, 8, 1, 16, 64),
    (16384, 8, 1, 16, 128), (16384, 8, 16, 16, 8)."""
    llama = [c for c in paper_config_cases() if c.id.startswith("llama3-405b-")]
    plans = {
        (c.cluster.gpus, c.fixed.tensor, c.fixed.context, c.fixed.pipeline, c.fixed.data)
        for c in llama
    }
    assert plans == {(8192, 8, 1, 16, 64), (16384, 8, 1, 16, 128), (16384, 8, 16, 16, 8)}


def test_the_long_context_row_loads_even_where_the_estimator_cannot_run_it_yet() -> None:
    case = next(c for c in paper_config_cases() if c.fixed.context == 16)
    assert case.workload.sequence_length == 131072
    assert case.workload.tokens_per_step == 128 * 131072


def test_visible_set_is_the_published_runs_plus_the_paper_configurations() -> None:
    visible = [c.id for c in visible_cases()]
    assert visible == [c.id for c in calibration_cases()] + RECORD_IDS


def test_a_measured_step_time_becomes_our_hardware_tflops_per_gpu() -> None:
    record = _record("bloom-176b-384gpu-tp4-pp12-dp8")
    record["measured"] = {"step_time_s": 100.0}
    case = paper_config_case(record)
    expected = hardware_flops_per_step(case.workload) / 384 / 100.0 / 1e12
    assert case.measured_hardware_tflops_per_gpu == pytest.approx(expected)


def test_megatron_ptd_p_runs_replicate_the_optimizer() -> None:
    """SC'21's PTD-P reduces gradients with a plain data-parallel all-reduce (sec. 5.9; Table 2
    sets it against ZeRO-3): no Megatron row, nor the planner's own GPT-3 175B plan, shards
    (the planner had given GPT-3 ZeRO-2 and come out 17 % fast)."""
    megatron = [c for c in visible_cases() if c.id.startswith("megatron-sc21")]
    assert megatron and all(c.fixed.zero_stage == 0 for c in megatron)
    gpt3 = next(c for c in megatron if c.id == "megatron-sc21-gpt3-175B-1024gpu-300Btok")
    est = estimate_or_refusal(gpt3)
    assert not isinstance(est, str) and est.plan.zero_stage == 0


def test_megatron_eq3_tflops_are_kept_as_printed_for_the_shape_eq3_was_derived_for() -> None:
    """GPT shape, f = 4h, full recompute: our hardware FLOPs equal eq. (3), so converting
    through tokens/s must give back the printed figure."""
    case = next(c for c in paper_config_cases() if c.id == "ds-azure-175b-256gpu-zero3")
    w = case.workload
    assert convention_flops_per_token(w, "megatron-eq3", 0.0) * w.tokens_per_step == (
        pytest.approx(megatron_eq3_flops(w, w.global_batch_size))
    )
    assert case.measured_hardware_tflops_per_gpu == pytest.approx(204.49, rel=1e-3)


def test_model_flop_tflops_are_recounted_in_our_hardware_flops() -> None:
    """Llama 3 reports model FLOPs (6N + 12lsh, the full attention square); the comparison
    recounts the same tokens/s in our hardware FLOPs (causal attention's half square plus the
    recomputed scores), so the figure is 430 x ours / theirs, not 430."""
    case = next(c for c in paper_config_cases() if c.id == "llama3-405b-8192gpu-tp8-pp16-dp64")
    w = case.workload
    theirs = convention_flops_per_token(w, "6N+12lsh", 405e9)
    ours = hardware_flops_per_step(w) / w.tokens_per_step
    assert case.measured_hardware_tflops_per_gpu == pytest.approx(430.0 * ours / theirs)


def test_a_record_missing_a_model_key_is_refused_naming_it() -> None:
    record = _record("bloom-176b-384gpu-tp4-pp12-dp8")
    del record["model"]["kv_heads"]
    with pytest.raises(InvalidInput, match="bloom-176b-384gpu-tp4-pp12-dp8") as info:
        paper_config_case(record)
    assert info.value.field == "paper-configs.model.kv_heads"


def test_an_unknown_system_is_refused_naming_the_known_ones() -> None:
    record = _record("bloom-176b-384gpu-tp4-pp12-dp8")
    record["system"] = "MYSTERY"
    with pytest.raises(InvalidInput, match="JEAN_ZAY_A100") as info:
        paper_config_case(record)
    assert info.value.field == "paper-configs.system"


def test_tflops_without_a_flop_convention_are_refused() -> None:
    record = _record("ds-azure-175b-256gpu-zero3")
    del record["measured"]["flop_convention"]
    with pytest.raises(InvalidInput) as info:
        paper_config_case(record)
    assert info.value.field == "paper-configs.measured.flop_convention"


def test_a_file_of_records_loads_from_any_path(tmp_path: Path) -> None:
    path = tmp_path / "configs.json"
    path.write_text(json.dumps([_record("bloom-176b-384gpu-tp4-pp12-dp8")]), encoding="utf-8")
    assert [c.id for c in paper_config_cases(path)] == ["bloom-176b-384gpu-tp4-pp12-dp8"]


def test_a_plan_the_estimator_refuses_is_reported_not_raised() -> None:
    case = paper_config_case(_record("bloom-176b-384gpu-tp4-pp12-dp8"))
    impossible = PublishedCase(
        id="impossible",
        source="test",
        workload=case.workload,
        cluster=case.cluster,
        fixed=type(case.fixed)(tensor=3),  # 112 heads do not split 3 ways
        measured_hardware_tflops_per_gpu=1.0,
    )
    refusal = estimate_or_refusal(impossible)
    assert isinstance(refusal, str) and refusal.startswith("not modelled yet: ")
    assert "tensor" in refusal


def _abs_error(case: PublishedCase) -> float:
    """|error| of hardware TFLOP/s; a refused case counts as an infinite error."""
    est = estimate_or_refusal(case)
    if isinstance(est, str):
        return float("inf")
    return abs(est.hardware_tflops_per_gpu / case.measured_hardware_tflops_per_gpu - 1)


def test_visible_set_median_error_at_most_5_percent_worst_at_most_12() -> None:
    """Issue 14's acceptance on the visible set. Llama 3 405B's 131K-token row was 16 % low
    (attention-bound, timed at MPT's Triton kernel's speed) until workload.attention_kernel
    told the Triton kernel from the FlashAttention-2-class kernels Llama 3 ran."""
    errors = [_abs_error(c) for c in visible_cases()]
    assert statistics.median(errors) <= 0.05
    assert max(errors) <= 0.12


@pytest.mark.timeout(900)  # one fit of the compute constants
def test_large_runs_held_out_of_the_fit_median_at_most_8_percent_worst_at_most_20() -> None:
    """Fit the compute constants on what the report's fit reads (``fit_cases``) without the
    runs of >= 2,048 GPUs, predict the visible runs of >= 2,048 GPUs. MT-NLG's three rows
    test the DeepSpeed engine's efficiency fitted on BLOOM and GPT-NeoX alone (they were
    16-21 % high before workload.framework; 1.0-5.0 % with it)."""
    cases = visible_cases()
    seen = [c for c in fit_cases(cases) if c.cluster.gpus < HELD_OUT_MIN_GPUS]
    held = [c for c in cases if c.cluster.gpus >= HELD_OUT_MIN_GPUS]
    result = fit(seen)
    errors: list[float] = []
    with constants_restored():
        apply_parameters(result.parameters)
        for c in held:
            refused = isinstance(estimate_or_refusal(c), str)
            errors.append(float("inf") if refused else abs(relative_error(c)))
    assert statistics.median(errors) <= 0.08
    assert max(errors) <= 0.20


@pytest.mark.timeout(1200)  # the report runs two fits (visible set, held-out check)
def test_the_accuracy_report_lists_every_visible_case_and_the_held_out_runs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.argv", ["estimator_accuracy"])
    main()
    out = capsys.readouterr().out
    for case in visible_cases():
        assert f"| {case.id} |" in out
    assert "Visible set: " in out and "Held-out runs: " in out
    assert "fit A100: kernel_efficiency=" in out  # the fit on visible data, without --fit
    held = [c for c in visible_cases() if c.cluster.gpus >= HELD_OUT_MIN_GPUS]
    assert f"the {len(held)} larger runs predicted with it" in out


def test_a_shape_the_workload_refuses_is_reported_against_the_record() -> None:
    record = _record("bloom-176b-384gpu-tp4-pp12-dp8")
    record["model"]["precision"] = "fp16"
    with pytest.raises(InvalidInput, match="bloom-176b-384gpu-tp4-pp12-dp8") as info:
        paper_config_case(record)
    assert info.value.field == "paper-configs.model.precision"


@pytest.mark.parametrize(
    "record", [r for r in RECORDS if "published_run_id" in r], ids=lambda r: r["id"]
)
def test_a_record_drawn_from_a_published_run_has_its_model_shape(record: dict[str, Any]) -> None:
    published = next(r for r in load_records() if r["id"] == record["published_run_id"])
    shape = published["model"]
    mine = record["model"]
    assert (mine["layers"], mine["hidden_size"], mine["attention_heads"]) == (
        shape["layers"],
        shape["hidden"],
        shape["heads"],
    )


@pytest.mark.parametrize("bad", ["8", 8.0, True])
def test_a_plan_degree_that_is_not_an_integer_is_refused_naming_it(bad: object) -> None:
    record = _record("bloom-176b-384gpu-tp4-pp12-dp8")
    record["plan"]["tensor"] = bad
    with pytest.raises(InvalidInput, match="expected an integer") as info:
        paper_config_case(record)
    assert info.value.field == "paper-configs.plan.tensor"
