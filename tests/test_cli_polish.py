"""Bad flag values are refused up front with the field and what was expected (exit 3, never
an internal error), vendor names match the catalog's whatever their case, and ``procure
workloads`` lists the presets ``--workload`` accepts."""

from __future__ import annotations

import json

import pytest
from cli_support import SMALL_SCENARIO, run

from optimizer.workload.presets import preset_names

FEASIBLE = (*SMALL_SCENARIO, "--target-hours", "8", "--top-k", "1", "--format", "json")
SMALL_VENDORS = "Dihuni, Generic, Intel, NVIDIA, Supermicro"


def test_workloads_table_lists_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "workloads")
    assert result.code == 0
    for name in preset_names():
        assert name in result.out


def test_workloads_json_gives_each_preset_with_its_size(capsys: pytest.CaptureFixture[str]) -> None:
    records = json.loads(run(capsys, "workloads", "--format", "json").out)
    assert [r["name"] for r in records] == list(preset_names())
    llama = next(r for r in records if r["name"] == "llama3-70b")
    assert 70e9 < llama["parameters"] < 71e9 and llama["training_tokens"] == 15e12


@pytest.mark.parametrize("command", ["optimize", "sweep"])
@pytest.mark.parametrize("top_k", ["0", "-2"])
def test_top_k_below_one_is_refused(
    capsys: pytest.CaptureFixture[str], command: str, top_k: str
) -> None:
    axis = ("--target-hours", "8") if command == "optimize" else ("--targets", "8")
    result = run(capsys, command, *SMALL_SCENARIO, *axis, "--top-k", top_k)
    assert result.code == 3
    assert result.err == f"error: top_k: got {top_k}, expected 1 to 20\n"


@pytest.mark.parametrize("flag", ["--budgets", "--targets"])
def test_sweep_refuses_a_negative_budget_or_target_like_optimize(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    result = run(capsys, "sweep", *SMALL_SCENARIO, f"{flag}=1e6,-5")
    assert result.code == 3 and result.out == ""
    assert result.err == f"error: {flag}: got -5, expected a positive number\n"


@pytest.mark.parametrize("tokens", ["1e300", "inf", "nan"])
def test_an_absurd_token_count_is_a_validation_error(
    capsys: pytest.CaptureFixture[str], tokens: str
) -> None:
    args = ("--catalog", SMALL_SCENARIO[1], "--workload", "bert-large", "--target-hours", "8")
    result = run(capsys, "optimize", *args, "--tokens", tokens)
    assert result.code == 3
    assert result.err.startswith("error: workload.training_tokens: got ")
    assert "internal error" not in result.err


@pytest.mark.parametrize("flag", ["--vendor", "--exclude-vendor"])
def test_an_unknown_vendor_is_refused_with_the_catalogs_vendors(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    result = run(capsys, "optimize", *FEASIBLE, flag, "Acme")
    assert result.code == 3
    assert "'Acme'" in result.err and SMALL_VENDORS in result.err


def test_vendor_names_match_without_regard_to_case(capsys: pytest.CaptureFixture[str]) -> None:
    every = SMALL_VENDORS.split(", ")
    exact = run(capsys, "optimize", *FEASIBLE, *(f"--vendor={v}" for v in every))
    lower = run(capsys, "optimize", *FEASIBLE, *(f"--vendor={v.lower()}" for v in every))
    assert exact.code == lower.code == 0
    designs = json.loads(lower.out)["designs"]
    assert designs and designs == json.loads(exact.out)["designs"]


def test_an_excluded_vendor_matches_without_regard_to_case(
    capsys: pytest.CaptureFixture[str],
) -> None:
    kept = json.loads(run(capsys, "optimize", *FEASIBLE).out)["designs"][0]["bom"]
    vendor = next(line["vendor"] for line in kept if line["category"] == "server")
    result = run(capsys, "optimize", *FEASIBLE, "--exclude-vendor", vendor.upper())
    assert result.code == 0
    for design in json.loads(result.out)["designs"]:
        assert vendor not in {line["vendor"] for line in design["bom"]}


def test_workloads_table_counts_small_presets_in_millions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = run(capsys, "workloads").out.splitlines()

    mpt = next(row for row in rows if "mpt-125m" in row)
    assert "124M" in mpt
