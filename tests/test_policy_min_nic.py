"""The buyer's bandwidth policy (``--min-nic-gbps-per-gpu``, ``constraints.min_nic_gbps_per_gpu``)
and the columns that make a starved network visible: scale-out Gb/s per GPU and the network's
share of step time beside its share of capex (issue 13)."""

from __future__ import annotations

import json
import math

import pytest
from catalog_files import SMALL
from cli_support import run
from google.protobuf import json_format

from client.commands.optimize import request_from_flags
from client.exits import EXIT_INFEASIBLE
from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.catalog import load_catalog
from optimizer.errors import InvalidInput

# BERT-Large in 4 h on the small catalog needs two nodes: a real scale-out network.
SCENARIO = ("--catalog", str(SMALL), "--workload", "bert-large", "--tokens", "2e10")
TARGET = ("--target-hours", "4", "--top-k", "3")


def _request(**constraints: float) -> optimize_pb2.OptimizeRequest:
    return optimize_pb2.OptimizeRequest(
        catalog=str(SMALL),
        top_k=3,
        workload=estimate_pb2.Workload(model="bert-large", training_tokens=2e10),
        constraints=optimize_pb2.Constraints(target_training_hours=4, **constraints),
    )


def _bandwidth(design: optimize_pb2.Design) -> float:
    """NIC speed x NICs per node / GPUs per node, from the catalog (not from the response)."""
    catalog = load_catalog(SMALL)
    nic = next(n for n in catalog.nics if n.sku == design.nic_sku)
    server = next(s for s in catalog.servers if s.sku == design.server_sku)
    nics = next(b.quantity for b in design.bom if b.category == "nic")
    return nic.speed_gbps * nics / design.nodes / server.gpus_per_node


def test_without_the_policy_the_cheapest_design_is_starved() -> None:
    """The premise of the policy tests below: left free, rank 1 buys under 400 Gb/s per GPU."""
    resp = api.optimize(_request())
    assert resp.designs and _bandwidth(resp.designs[0]) < 400


def test_every_ranked_design_meets_the_policy() -> None:
    resp = api.optimize(_request(min_nic_gbps_per_gpu=400))
    assert resp.status == "OPTIMAL" and resp.designs
    assert all(_bandwidth(d) >= 400 for d in resp.designs)


def test_the_flag_restricts_designs_like_the_field(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys, "optimize", *SCENARIO, *TARGET, "--min-nic-gbps-per-gpu", "400", "--format", "json"
    )
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert result.code == 0 and resp.designs
    assert all(d.scale_out_gbps_per_gpu >= 400 for d in resp.designs)


def test_an_unreachable_policy_is_diagnosed_with_what_the_catalog_reaches() -> None:
    resp = api.optimize(_request(min_nic_gbps_per_gpu=800))
    assert not resp.designs and resp.status == "INFEASIBLE"
    assert "constraints.min_nic_gbps_per_gpu" in resp.diagnosis
    assert "the most the allowed parts reach is 400 Gb/s per GPU" in resp.diagnosis


def test_an_unreachable_policy_exits_infeasible_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(
        capsys, "optimize", *SCENARIO, *TARGET, "--min-nic-gbps-per-gpu", "800",
        "--fail-on-infeasible",
    )  # fmt: skip
    assert result.code == EXIT_INFEASIBLE, result.err
    assert "Traceback" not in result.err
    assert "800 Gb/s per GPU (constraints.min_nic_gbps_per_gpu)" in " ".join(result.out.split())


@pytest.mark.parametrize("value", [0.0, -400.0, math.nan, math.inf])
def test_a_policy_that_is_not_a_positive_number_names_the_field(value: float) -> None:
    with pytest.raises(InvalidInput) as e:
        api.optimize(_request(min_nic_gbps_per_gpu=value))
    assert e.value.field == "constraints.min_nic_gbps_per_gpu"


def test_require_fabric_flag_sets_the_request_field() -> None:
    assert request_from_flags(require_fabric=True).require_fabric
    assert not request_from_flags().require_fabric


def test_require_fabric_reaches_the_optimizer_spec() -> None:
    from optimizer.optimize.convert import spec_from_proto

    req = _request()
    req.require_fabric = True
    assert spec_from_proto(req).require_fabric
    assert not spec_from_proto(_request()).require_fabric


def test_design_reports_scale_out_bandwidth_and_network_time_share() -> None:
    """Each design carries its scale-out Gb/s per GPU and exposed communication / step time,
    both derived from the catalog and the design's own step breakdown."""
    resp = api.optimize(_request())
    for d in resp.designs:
        b = d.estimate.breakdown
        step_s = d.estimate.step_time_s  # every term, the issue-14 ones included
        assert d.scale_out_gbps_per_gpu == pytest.approx(_bandwidth(d))
        assert d.network_time_share == pytest.approx(b.exposed_communication_s / step_s)
        assert 0.0 <= d.network_time_share < 1.0


def test_table_shows_both_network_shares_and_bandwidth_per_gpu(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the wide layout (the narrow one: the next test)
    result = run(capsys, "optimize", *SCENARIO, *TARGET, "--min-nic-gbps-per-gpu", "400")
    assert result.code == 0, result.err
    for header in ("net capex", "net time", "Gb/s/GPU"):
        assert header in result.out
    assert " 400 " in result.out  # the design's 400 Gb/s per GPU


def test_narrow_table_keeps_both_network_shares_and_bandwidth(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = run(capsys, "optimize", *SCENARIO, *TARGET, "--min-nic-gbps-per-gpu", "400")
    assert result.code == 0, result.err
    assert "capex/time" in result.out and "Gb/s/GPU" in result.out
    assert max(len(line) for line in result.out.splitlines()) <= 80


def test_sweep_applies_the_policy_to_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys, "sweep", *SCENARIO, "--targets", "4,8", "--min-nic-gbps-per-gpu", "400",
        "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    scenarios = json.loads(result.out)["scenarios"]
    designs = [d for s in scenarios for d in s["response"]["designs"]]
    assert len(scenarios) == 2 and designs
    assert all(d["scale_out_gbps_per_gpu"] >= 400 for d in designs)


def test_a_policy_out_of_reach_only_through_the_lead_time_cap_names_the_cap() -> None:
    """Every roce-spectrum server ships in more than 45 days: the cap, not the catalog's
    NICs, is what keeps 100 Gb/s per GPU out of reach, and the diagnosis says how to lift it."""
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="roce-spectrum",
            top_k=1,
            workload=estimate_pb2.Workload(model="llama3-8b", training_tokens=1e12),
            constraints=optimize_pb2.Constraints(
                target_training_hours=200, max_lead_time_days=45, min_nic_gbps_per_gpu=100
            ),
        )
    )
    assert not resp.designs
    assert "offers no NIC" not in resp.diagnosis
    assert "raise constraints.max_lead_time_days to 120" in resp.diagnosis
    assert resp.diagnosis.endswith(
        "(among designs with at least 100 Gb/s per GPU (constraints.min_nic_gbps_per_gpu))"
    )
