"""Issue 17 (tco): ``procure optimize`` with the lifetime-cost flags and columns."""

from __future__ import annotations

import csv
import io
import json

import pytest
from cli_support import SMALL_SCENARIO, run

TARGET = ("--target-hours", "4")


def test_min_tco_shows_a_tco_column_and_the_lifetime_cost_sentence(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    r = run(capsys, "optimize", *SMALL_SCENARIO, *TARGET, "--objective", "min-tco")
    assert r.code == 0, r.err
    header = next(line for line in r.out.splitlines() if "capex" in line)
    assert header.rstrip(" ┃").endswith("TCO")
    assert "TCO over 4 years $" in r.out


def test_without_tco_flags_the_table_keeps_its_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    r = run(capsys, "optimize", *SMALL_SCENARIO, *TARGET)
    assert r.code == 0, r.err
    assert "TCO" not in r.out


def test_cost_model_flags_reach_the_request(capsys: pytest.CaptureFixture[str]) -> None:
    flags = ("--years", "6", "--pue", "1.5", "--electricity-usd-per-kwh", "0.2")
    r = run(capsys, "optimize", *SMALL_SCENARIO, *TARGET, *flags, "--format", "json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    model = doc["cost_model"]
    assert (model["years"], model["pue"], model["electricity_usd_per_kwh"]) == (6, 1.5, 0.2)
    assert doc["designs"][0]["tco_usd"] > doc["designs"][0]["capex_usd"]


def test_csv_rows_carry_the_tco_and_its_terms(capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, "optimize", *SMALL_SCENARIO, *TARGET, "--format", "csv")
    assert r.code == 0, r.err
    row = next(csv.DictReader(io.StringIO(r.out)))
    terms = ("capex_usd", "tco_energy_usd", "tco_support_usd", "tco_space_usd")
    assert float(row["tco_usd"]) == pytest.approx(sum(float(row[t]) for t in terms), abs=0.02)


def test_a_bad_pue_names_the_request_field(capsys: pytest.CaptureFixture[str]) -> None:
    r = run(capsys, "optimize", *SMALL_SCENARIO, *TARGET, "--pue", "0.5")
    assert r.code != 0
    assert "cost_model.pue" in r.err
    assert "Traceback" not in r.err
