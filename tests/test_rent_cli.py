"""`procure optimize` answers rent vs buy: a "Rent vs buy" block under the table, the same
in JSON, from the catalog's cloud_offers or else the bundled offer table."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_files import copy_small, write_rows
from cli_support import SMALL_SCENARIO, run, run_process
from google.protobuf import json_format

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.cost.rent import bundled_offers, rented_cost_cents

FEASIBLE = (*SMALL_SCENARIO, "--target-hours", "8", "--top-k", "2")
INFEASIBLE = (*SMALL_SCENARIO, "--target-hours", "4", "--budget-usd", "1e5", "--top-k", "1")


def _response(capsys: pytest.CaptureFixture[str], *args: str) -> optimize_pb2.OptimizeResponse:
    result = run(capsys, "optimize", *args, "--format", "json")
    assert result.code == 0, result.err
    return json_format.Parse(result.out, optimize_pb2.OptimizeResponse())


def test_the_table_output_prints_the_rent_vs_buy_block(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "optimize", *FEASIBLE)
    assert result.code == 0, result.err
    block = result.out[result.out.index("Rent vs buy: the same training run rented") :]
    # Sentences wrap at the terminal's width ($COLUMNS; 160 when piped): compare words.
    words = " ".join(block.split())
    for offer in bundled_offers():
        assert offer.instance in words
    assert "#1 owning beats renting its GPU-hours from" in words
    assert "break-even over 4 years" in words


def test_at_80_columns_every_offer_prints_whole() -> None:
    result = run_process("optimize", *FEASIBLE, env={"COLUMNS": "80"})
    assert result.code == 0, result.err
    block = result.out[result.out.index("Rent vs buy: the same training run rented") :]
    assert "…" not in block
    assert max(len(line) for line in block.splitlines()) <= 80
    flat = " ".join(block.split())
    for offer in bundled_offers():
        assert f"{offer.provider} {offer.instance}" in flat


def test_json_carries_each_offers_quote_priced_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    resp = _response(capsys, *FEASIBLE)
    assert len(resp.rent_quotes) == len(bundled_offers())
    assert "bundled offer table" in resp.rent_note
    timed = [q for q in resp.rent_quotes if q.HasField("training_time_hours")]
    assert timed
    for q in timed:
        assert q.gpus % 8 == 0 and q.gpus >= resp.designs[0].gpus
        for rate, cost in (
            ("on_demand_usd_per_gpu_hour", "on_demand_cost_usd"),
            ("committed_usd_per_gpu_hour", "committed_cost_usd"),
        ):
            assert q.HasField(rate) == q.HasField(cost)
            if q.HasField(rate):
                cents = rented_cost_cents(getattr(q, rate), q.gpus, q.training_time_hours)
                assert round(getattr(q, cost) * 100) == cents
    assert all(d.break_evens for d in resp.designs)


def test_a_catalogs_own_offers_replace_the_bundled_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = copy_small(tmp_path)
    header = "provider,instance,gpu_model,gpus_per_instance,interconnect,network_gbps_per_gpu,"
    header += "on_demand_usd_per_gpu_hour,committed_usd_per_gpu_hour,commitment_days,price_date,"
    header += "source"
    row = ["Neo", "h100x8", "H100", "8", "infiniband_ndr", "", "3.00", "2.00", "365"]
    write_rows(folder, "cloud_offers", [header.split(","), [*row, "2026-01-01", "quote 42"]])
    # Top 4: the one-node H100, the same node on a switch with either NIC, then an A100 design.
    args = ("--catalog", str(folder), *SMALL_SCENARIO[2:], "--target-hours", "7", "--top-k", "4")
    resp = _response(capsys, *args)
    assert [(q.provider, q.instance) for q in resp.rent_quotes] == [("Neo", "h100x8")]
    assert "the catalog's cloud_offers table" in resp.rent_note
    [quote] = resp.rent_quotes
    assert quote.commitment_days == 365 and quote.source == "quote 42"
    # Rank 4 is an A100 design: no offer of the catalog rents it, and the answer says so.
    assert [bool(d.break_evens) for d in resp.designs] == [True, True, True, False]
    assert "No offer rents A100 (rank 4)" in resp.rent_note


def test_an_infeasible_answer_says_there_is_nothing_to_compare(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "optimize", *INFEASIBLE, "--format", "json")
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert not resp.designs and not resp.rent_quotes
    assert resp.rent_note.startswith("Rent vs buy: no design to compare")
