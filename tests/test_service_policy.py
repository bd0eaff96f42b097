"""Issue 13's request fields over a real gRPC server: the bandwidth policy's validation and
optimising over several catalogs (``catalog`` plus the repeated ``catalogs``)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.catalog.canonical import content_hash
from optimizer.catalog.resolve import resolve_catalog
from optimizer.catalog.union import union_catalogs
from tests.catalog_files import SMALL
from tests.cli_support import run
from tests.service_support import Stubs, serving

BUNDLED = ("infiniband-ndr", "roce-spectrum")
SMALL_WORKLOAD = ("--workload", "bert-large", "--tokens", "1e9", "--target-hours", "24")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serving(tmp_path_factory.mktemp("service"))


@pytest.fixture(scope="module")
def stubs(server: str) -> Iterator[Stubs]:
    with grpc.insecure_channel(server) as channel:
        yield Stubs(channel)


def _request(**fields: Any) -> optimize_pb2.OptimizeRequest:
    constraints = fields.pop("constraints", {})
    return optimize_pb2.OptimizeRequest(
        workload=estimate_pb2.Workload(model="bert-large", training_tokens=1e9),
        constraints=optimize_pb2.Constraints(target_training_hours=24, **constraints),
        **{"catalog": BUNDLED[0], "top_k": 1, **fields},
    )


def _error(stubs: Stubs, request: optimize_pb2.OptimizeRequest) -> tuple[str, str]:
    with pytest.raises(grpc.RpcError) as e:
        stubs.optimizer.Optimize(request, timeout=60)
    return e.value.code().name, e.value.details()


@pytest.mark.parametrize("value", [0.0, -400.0, math.nan, math.inf])
def test_a_bad_policy_is_invalid_argument_naming_the_field(stubs: Stubs, value: float) -> None:
    code, details = _error(stubs, _request(constraints={"min_nic_gbps_per_gpu": value}))
    assert code == "INVALID_ARGUMENT"
    assert details.startswith("constraints.min_nic_gbps_per_gpu: got ")


def test_the_policy_holds_for_the_served_designs(stubs: Stubs) -> None:
    resp = stubs.optimizer.Optimize(
        _request(top_k=3, constraints={"min_nic_gbps_per_gpu": 400}), timeout=60
    )
    assert resp.designs
    assert all(d.scale_out_gbps_per_gpu >= 400 for d in resp.designs)


def test_catalogs_are_optimised_as_their_union(stubs: Stubs) -> None:
    resp = stubs.optimizer.Optimize(_request(catalogs=[BUNDLED[1]]), timeout=60)
    union = union_catalogs([("", ref, resolve_catalog(ref)) for ref in BUNDLED])
    assert resp.catalog_id == content_hash(union)
    assert resp.designs and {b.catalog for b in resp.designs[0].bom} <= set(BUNDLED)


def test_a_catalog_named_twice_is_invalid_argument(stubs: Stubs) -> None:
    code, details = _error(stubs, _request(catalogs=[BUNDLED[0]]))
    assert code == "INVALID_ARGUMENT" and details.startswith("catalogs[0]: ")


def test_an_unknown_catalog_among_several_is_not_found(stubs: Stubs) -> None:
    code, details = _error(stubs, _request(catalogs=["no-such-quote"]))
    assert code == "NOT_FOUND" and "no-such-quote" in details


def test_the_cli_sends_every_catalog_to_the_server(
    capsys: pytest.CaptureFixture[str], server: str
) -> None:
    """``procure --server`` with two --catalog flags, one a local folder (uploaded first):
    the same union, the same answer as embedded."""
    args = ("optimize", "--catalog", str(SMALL), "--catalog", BUNDLED[1], *SMALL_WORKLOAD)
    embedded = run(capsys, *args, "--format", "json")
    remote = run(capsys, "--server", server, *args, "--format", "json")
    assert embedded.code == remote.code == 0, remote.err
    local = json_format.Parse(embedded.out, optimize_pb2.OptimizeResponse())
    served = json_format.Parse(remote.out, optimize_pb2.OptimizeResponse())
    assert served.catalog_id == local.catalog_id
    assert [b.catalog for b in served.designs[0].bom] == [b.catalog for b in local.designs[0].bom]


def test_a_batch_scenario_naming_several_catalogs_runs_against_their_union(
    stubs: Stubs,
) -> None:
    """Once refused with INVALID_ARGUMENT; issue 13 asks for the union, as Optimize gives."""
    from optimizer._pb.procurement.v1 import service_pb2

    request = _request(catalogs=[BUNDLED[1]])
    call = service_pb2.BatchOptimizeRequest(scenarios=[request])
    (result,) = list(stubs.optimizer.BatchOptimize(call, timeout=60))
    assert not result.error_code, result.error_message
    assert result.catalog == f"{BUNDLED[0]} + {BUNDLED[1]}"
    alone = stubs.optimizer.Optimize(request, timeout=60)
    assert result.response.catalog_id == alone.catalog_id
    assert result.response.designs[0].bom == alone.designs[0].bom
