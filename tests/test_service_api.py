"""The service over a real channel: every RPC's happy path, bad requests with their exact codes
and messages, authentication and tenant isolation, and what the log lines may contain."""

from __future__ import annotations

import io
import json
import logging
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optimizer._pb.procurement.v1 import catalog_pb2, estimate_pb2, optimize_pb2, service_pb2
from optimizer.batch import LocalEngine, run_batch
from optimizer.batch.spec import BatchSpec, SpecRow
from optimizer.batch.writer import read_results
from optimizer.optimize.convert import MAX_TOP_K
from optimizer.service import limits
from tests.service_support import (
    SMALL_CATALOG,
    TOKEN_A,
    TOKEN_B,
    Stubs,
    bearer,
    catalog_files,
    health_status,
    serving,
    small_estimate,
    small_optimize,
    upload_messages,
    write_tokens,
)

A, B = bearer(TOKEN_A), bearer(TOKEN_B)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("service")
    yield from serving(tmp, tokens_file=write_tokens(tmp))


@pytest.fixture(scope="module")
def stubs(server: str) -> Iterator[Stubs]:
    with grpc.insecure_channel(server) as channel:
        yield Stubs(channel)


@pytest.fixture(scope="module")
def stored(stubs: Stubs) -> catalog_pb2.CatalogInfo:
    """The small test catalog, uploaded by tenant A."""
    reply = stubs.catalogs.UploadCatalog(
        upload_messages(catalog_files(), request_id="first"), metadata=A, timeout=30
    )
    return reply.catalog


def _code(call: Any, *args: Any, **kwargs: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as e:
        result = call(*args, **kwargs)
        if isinstance(result, Iterator):
            list(result)
    return e.value.code(), e.value.details()


# --------------------------------------------------------------------------- happy paths
def test_health_is_serving_without_credentials(stubs: Stubs) -> None:
    assert health_status(stubs) == "SERVING"
    assert health_status(stubs, "procurement.v1.OptimizerService") == "SERVING"


def test_health_of_an_unknown_service_is_not_found(stubs: Stubs) -> None:
    code, _ = _code(health_status, stubs, "bogus")
    assert code is grpc.StatusCode.NOT_FOUND


def test_an_upload_is_stored_as_version_one_of_its_name(stored: catalog_pb2.CatalogInfo) -> None:
    assert (stored.name, stored.version, stored.ref) == ("small-test", 1, "small-test@1")
    assert len(stored.id) == 64 and stored.row_count == 12


def test_a_retried_upload_returns_the_first_version(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    again = stubs.catalogs.UploadCatalog(
        upload_messages(catalog_files(), request_id="first"), metadata=A, timeout=30
    )
    assert again.catalog == stored
    listed = stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(), metadata=A, timeout=5)
    assert [c.id for c in listed.catalogs].count(stored.id) == 1


def test_list_shows_the_tenants_catalogs_and_the_bundled_ones(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    listed = stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(), metadata=A, timeout=5)
    assert stored in listed.catalogs
    assert "infiniband-ndr" in listed.bundled


def test_get_returns_metadata_and_every_table(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    bare = stubs.catalogs.GetCatalog(
        catalog_pb2.GetCatalogRequest(ref="small-test"), metadata=A, timeout=5
    )
    assert bare.catalog == stored and not bare.tables
    full = stubs.catalogs.GetCatalog(
        catalog_pb2.GetCatalogRequest(ref=stored.id[:10], include_tables=True),
        metadata=A,
        timeout=5,
    )
    tables = {t.name: t for t in full.tables}
    assert {"servers", "nics", "switches", "links", "metadata"} <= set(tables)
    assert "price_usd" in tables["servers"].header and tables["servers"].rows


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "parquet"])
def test_an_exported_catalog_uploads_back_to_the_same_version(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo, fmt: str
) -> None:
    files: dict[str, bytes] = {}
    for chunk in stubs.catalogs.ExportCatalog(
        catalog_pb2.ExportCatalogRequest(ref="small-test@1", format=fmt), metadata=A, timeout=30
    ):
        files[chunk.file_name] = files.get(chunk.file_name, b"") + chunk.data
    assert all(name.endswith(f".{fmt}") for name in files)
    again = stubs.catalogs.UploadCatalog(
        upload_messages(files, chunk_bytes=4096), metadata=A, timeout=30
    )
    assert again.catalog.id == stored.id


def test_delete_removes_only_the_named_version(stubs: Stubs) -> None:
    made = stubs.catalogs.UploadCatalog(
        upload_messages(catalog_files(), name="scratch"), metadata=A, timeout=30
    ).catalog
    gone = stubs.catalogs.DeleteCatalog(
        catalog_pb2.DeleteCatalogRequest(ref="scratch"), metadata=A, timeout=5
    )
    assert [c.id for c in gone.deleted] == [made.id]
    code, _ = _code(
        stubs.catalogs.GetCatalog,
        catalog_pb2.GetCatalogRequest(ref="scratch"),
        metadata=A,
        timeout=5,
    )
    assert code is grpc.StatusCode.NOT_FOUND


def test_estimate_returns_a_training_time(stubs: Stubs) -> None:
    reply = stubs.optimizer.Estimate(small_estimate(), metadata=A, timeout=30)
    assert reply.training_time_hours > 0 and reply.parallelism.data >= 1


def test_optimize_returns_a_verified_design(stubs: Stubs, stored: catalog_pb2.CatalogInfo) -> None:
    reply = stubs.optimizer.Optimize(small_optimize(), metadata=A, timeout=60)
    assert reply.status == "OPTIMAL"
    assert reply.designs[0].capex_usd > 0 and reply.catalog_id == stored.id


def test_optimize_against_a_bundled_catalog_needs_no_upload(stubs: Stubs) -> None:
    reply = stubs.optimizer.Optimize(small_optimize("infiniband-ndr"), metadata=B, timeout=60)
    assert reply.status == "OPTIMAL" and reply.designs[0].fabric == "infiniband"


def test_an_infeasible_scenario_is_ok_with_a_status(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    request = small_optimize()
    request.constraints.budget_usd = 1000
    reply = stubs.optimizer.Optimize(request, metadata=A, timeout=60)
    assert reply.status == "INFEASIBLE" and not reply.designs and reply.diagnosis


def test_optimize_stream_sends_progress_then_one_result(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    events = list(stubs.optimizer.OptimizeStream(small_optimize(), metadata=A, timeout=60))
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "progress" and kinds[-1] == "result" and kinds.count("result") == 1
    assert events[-1].result.status == "OPTIMAL"


def test_batch_streams_one_result_per_scenario_and_catalog(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    request = service_pb2.BatchOptimizeRequest(
        scenarios=[small_optimize(request_id="s0"), small_optimize(request_id="s1", top_k=2)],
        catalogs=["small-test", "infiniband-ndr", "missing"],
    )
    results = list(stubs.optimizer.BatchOptimize(request, metadata=A, timeout=120))
    got = {(r.scenario_index, r.catalog): r for r in results}
    assert len(results) == 6 and len(got) == 6
    assert got[(1, "infiniband-ndr")].response.status == "OPTIMAL"
    assert got[(1, "infiniband-ndr")].request_id == "s1"
    assert got[(0, "missing")].error_code == "NOT_FOUND"
    assert got[(0, "missing")].error_message == "catalog 'missing' not found"


@pytest.mark.slow
def test_a_batch_result_is_the_procure_batch_row_of_the_same_scenario(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo, tmp_path: Path
) -> None:
    """The RPC plans and solves through the batch runner: the same scenario ids as
    ``procure batch`` (catalog content + request) and the same rank-1 designs."""
    scenarios = [
        small_optimize(request_id="p0"),
        small_optimize(
            request_id="p1",
            objective="min_time",
            constraints=optimize_pb2.Constraints(budget_usd=5e6),
        ),
    ]
    request = service_pb2.BatchOptimizeRequest(
        scenarios=scenarios, catalogs=["small-test", "infiniband-ndr"]
    )
    served = list(stubs.optimizer.BatchOptimize(request, metadata=A, timeout=120))
    rows = [
        SpecRow(ref, s, "") for s in scenarios for ref in (str(SMALL_CATALOG), "infiniband-ndr")
    ]
    run_batch(BatchSpec(tuple(rows)), tmp_path, engine=LocalEngine(1), report=False)
    table = read_results(tmp_path).set_index("scenario_id")
    assert sorted(r.scenario_id for r in served) == sorted(table.index)
    for result in served:
        row, top = table.loc[result.scenario_id], result.response.designs[0]
        assert not result.error_code and result.response.status == row["status"]
        assert (top.gpus, top.nodes, top.server_sku, top.nic_sku, top.fabric, top.topology) == (
            row["gpus"],
            row["nodes"],
            row["server_sku"],
            row["nic_sku"],
            row["fabric"],
            row["topology"],
        )
        assert (top.capex_usd, top.training_time_hours) == pytest.approx(
            (row["capex_usd"], row["training_time_hours"])
        )


def test_runs_of_the_same_scenario_are_solved_once_and_reported_for_each(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    before = stubs.optimizer.GetMetrics(
        service_pb2.GetMetricsRequest(), metadata=A, timeout=5
    ).solves
    request = service_pb2.BatchOptimizeRequest(
        scenarios=[small_optimize(request_id="twice")],
        catalogs=["small-test", "small-test@1", stored.id],
    )
    results = list(stubs.optimizer.BatchOptimize(request, metadata=A, timeout=120))
    assert sorted(r.catalog for r in results) == sorted(request.catalogs)
    assert len({r.scenario_id for r in results}) == 1
    assert len({r.response.SerializeToString() for r in results}) == 1
    after = stubs.optimizer.GetMetrics(
        service_pb2.GetMetricsRequest(), metadata=A, timeout=5
    ).solves
    assert after == before + 1


def test_a_batch_can_name_neither_a_server_path_nor_another_tenants_catalog(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    refs = [str(SMALL_CATALOG), "/etc", "small-test", stored.id]
    request = service_pb2.BatchOptimizeRequest(scenarios=[small_optimize()], catalogs=refs)
    results = list(stubs.optimizer.BatchOptimize(request, metadata=B, timeout=60))
    assert [
        (r.catalog, r.error_code, r.error_message, r.HasField("response")) for r in results
    ] == [(ref, "NOT_FOUND", f"catalog {ref!r} not found", False) for ref in refs]


def test_metrics_count_calls_by_method_and_status(stubs: Stubs) -> None:
    _code(
        stubs.catalogs.GetCatalog, catalog_pb2.GetCatalogRequest(ref="nope"), metadata=A, timeout=5
    )
    reply = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), metadata=A, timeout=5)
    methods = {m.method: m for m in reply.methods}
    getting = methods["/procurement.v1.CatalogService/GetCatalog"]
    assert getting.codes["NOT_FOUND"] >= 1 and getting.errors >= 1
    assert reply.workers == 1 and reply.queue_capacity == 2 and reply.solves >= 1


def test_metrics_show_only_the_callers_own_calls(stubs: Stubs) -> None:
    delete = "/procurement.v1.CatalogService/DeleteCatalog"

    def calls_seen_by(tenant: Any) -> int:
        reply = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), metadata=tenant)
        return {m.method: m.requests for m in reply.methods}.get(delete, 0)

    a_before, b_before = calls_seen_by(A), calls_seen_by(B)
    for _ in range(3):
        _code(stubs.catalogs.DeleteCatalog, catalog_pb2.DeleteCatalogRequest(ref="x"), metadata=B)
    assert calls_seen_by(B) == b_before + 3
    assert calls_seen_by(A) == a_before


# --------------------------------------------------------------------------- bad requests
def _upload(files: dict[str, bytes], **kwargs: Any) -> Iterator[catalog_pb2.UploadCatalogRequest]:
    return upload_messages(files, chunk_bytes=1 << 20, **kwargs)


def _with(file_name: str, data: bytes) -> dict[str, bytes]:
    return {**catalog_files(), file_name: data}


def _many_rows() -> bytes:
    servers = catalog_files()["servers.csv"].decode()
    header, first = servers.splitlines()[:2]
    sku = first.split(",")[0]
    rows = [first.replace(sku, f"{sku}-{i}", 1) for i in range(limits.MAX_CATALOG_ROWS + 1)]
    return "\n".join([header, *rows]).encode()


def _bad_price() -> bytes:
    servers = catalog_files()["servers.csv"].decode().splitlines()
    header = servers[0].split(",")
    cells = servers[1].split(",")
    cells[header.index("price_usd")] = "-5"
    return "\n".join([servers[0], ",".join(cells), *servers[2:]]).encode()


def _mixed_request_ids() -> Iterator[catalog_pb2.UploadCatalogRequest]:
    yield catalog_pb2.UploadCatalogRequest(request_id="one", file_name="servers.csv", data=b"a")
    yield catalog_pb2.UploadCatalogRequest(request_id="two", file_name="servers.csv", data=b"b")


BAD_UPLOADS = [
    (
        "no messages",
        lambda: iter(()),
        "INVALID_ARGUMENT",
        "file_name: no files; expected the catalog's table files",
    ),
    (
        "no file name",
        lambda: iter([catalog_pb2.UploadCatalogRequest(data=b"x")]),
        "INVALID_ARGUMENT",
        "file_name: required in every message; expected a table file name such as servers.csv",
    ),
    (
        "request_id changes",
        _mixed_request_ids,
        "INVALID_ARGUMENT",
        "request_id: expected empty or the first message's value",
    ),
    (
        "file too large",
        lambda: _upload(_with("servers.csv", b"x" * (limits.MAX_UPLOAD_FILE_BYTES + 1))),
        "RESOURCE_EXHAUSTED",
        f"file 'servers.csv' exceeds {limits.MAX_UPLOAD_FILE_BYTES} bytes",
    ),
    (
        "too many rows",
        lambda: _upload(_with("servers.csv", _many_rows())),
        "RESOURCE_EXHAUSTED",
        f"table 'servers' has more than {limits.MAX_CATALOG_ROWS} rows",
    ),
    (
        "too many files",
        lambda: _upload({f"t{i}.csv": b"x" for i in range(limits.MAX_UPLOAD_FILES + 1)}),
        "RESOURCE_EXHAUSTED",
        f"upload carries more than {limits.MAX_UPLOAD_FILES} files; expected one per table",
    ),
    (
        "negative price",
        lambda: _upload(_with("servers.csv", _bad_price())),
        "INVALID_ARGUMENT",
        "catalog has 1 error(s):\nerror: servers, row 2, column price_usd: got '-5'; expected",
    ),
    (
        "not UTF-8",
        lambda: _upload(_with("nics.csv", b"sku\n\xff\n")),
        "INVALID_ARGUMENT",
        "catalog has 1 error(s):\nerror: nics, row 2: got \"b'\\\\xff'\"; expected UTF-8 text",
    ),
]


@pytest.mark.parametrize(
    ("case", "messages", "code", "details"), BAD_UPLOADS, ids=[c[0] for c in BAD_UPLOADS]
)
def test_bad_uploads_get_exact_codes_and_messages(
    stubs: Stubs, case: str, messages: Any, code: str, details: str
) -> None:
    got_code, got_details = _code(stubs.catalogs.UploadCatalog, messages(), metadata=A, timeout=30)
    assert got_code.name == code
    assert got_details.startswith(details)


def _optimize(**fields: Any) -> optimize_pb2.OptimizeRequest:
    return small_optimize(**fields)


BAD_CALLS = [
    (
        "Optimize",
        lambda: _optimize(objective="fastest"),
        "INVALID_ARGUMENT",
        "objective: got 'fastest', expected one of min_cost, min_time, min_tco",
    ),
    (
        "Optimize",
        lambda: optimize_pb2.OptimizeRequest(
            catalog="small-test", constraints=optimize_pb2.Constraints(target_training_hours=1)
        ),
        "INVALID_ARGUMENT",
        "workload: missing; expected a workload (a preset model name or an architecture)",
    ),
    (
        "Optimize",
        lambda: _optimize(allowed_fabrics=["myrinet"]),
        "INVALID_ARGUMENT",
        "allowed_fabrics",
    ),
    (
        "Optimize",
        lambda: _optimize(catalog=""),
        "INVALID_ARGUMENT",
        "catalog: required; expected a catalog name, name@version or id",
    ),
    ("Optimize", lambda: _optimize(catalog="/etc"), "NOT_FOUND", "catalog '/etc' not found"),
    ("Optimize", lambda: _optimize(catalog="nope"), "NOT_FOUND", "catalog 'nope' not found"),
    (
        "Optimize",
        lambda: _optimize(top_k=MAX_TOP_K + 1),
        "INVALID_ARGUMENT",
        f"top_k: got {MAX_TOP_K + 1}, expected 1 to {MAX_TOP_K}",
    ),
    (
        "Optimize",
        lambda: _optimize(solver=optimize_pb2.SolverOptions(time_limit_s=1e4)),
        "INVALID_ARGUMENT",
        "solver.time_limit_s: got 10000.0, expected at most 600.0",
    ),
    (
        "OptimizeStream",
        lambda: _optimize(objective="fastest"),
        "INVALID_ARGUMENT",
        "objective: got 'fastest'",
    ),
    (
        "BatchOptimize",
        lambda: service_pb2.BatchOptimizeRequest(
            scenarios=[small_optimize()] * (limits.MAX_BATCH_RUNS + 1)
        ),
        "RESOURCE_EXHAUSTED",
        (
            f"batch asks for {limits.MAX_BATCH_RUNS + 1} runs (scenarios x catalogs); at most "
            f"{limits.MAX_BATCH_RUNS}"
        ),
    ),
    (
        "Estimate",
        lambda: estimate_pb2.EstimateRequest(
            workload=estimate_pb2.Workload(model="bert-large"), cluster=estimate_pb2.Cluster(gpus=8)
        ),
        "INVALID_ARGUMENT",
        "cluster.",
    ),
    (
        "Estimate",
        lambda: estimate_pb2.EstimateRequest(
            workload=estimate_pb2.Workload(model="bert-large"),
            cluster=estimate_pb2.Cluster(
                gpus=8,
                server_sku="x",
                fabric="infiniband",
                topology="fat_tree",
                nic_gbps_per_node=400,
            ),
            catalog="small-test",
        ),
        "INVALID_ARGUMENT",
        "cluster.server_sku: server 'x' is not in catalog",
    ),
    (
        "GetCatalog",
        lambda: catalog_pb2.GetCatalogRequest(ref="nope"),
        "NOT_FOUND",
        "catalog 'nope' not found",
    ),
    (
        "ExportCatalog",
        lambda: catalog_pb2.ExportCatalogRequest(ref="small-test", format="pdf"),
        "INVALID_ARGUMENT",
        "format: unknown format 'pdf'; expected one of csv, xlsx, parquet",
    ),
    (
        "DeleteCatalog",
        lambda: catalog_pb2.DeleteCatalogRequest(ref=""),
        "NOT_FOUND",
        "catalog '' not found",
    ),
]


@pytest.mark.parametrize(
    ("method", "request_of", "code", "details"),
    BAD_CALLS,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_CALLS)],
)
def test_bad_requests_get_exact_codes_and_messages(
    stubs: Stubs,
    stored: catalog_pb2.CatalogInfo,
    method: str,
    request_of: Any,
    code: str,
    details: str,
) -> None:
    service = stubs.catalogs if hasattr(stubs.catalogs, method) else stubs.optimizer
    got_code, got_details = _code(getattr(service, method), request_of(), metadata=A, timeout=30)
    assert got_code.name == code
    assert got_details.startswith(details)


def test_a_request_over_the_message_limit_is_resource_exhausted(stubs: Stubs) -> None:
    request = _optimize(allowed_vendors=["v" * 1024] * (limits.MAX_MESSAGE_BYTES // 1024 + 1))
    code, _ = _code(stubs.optimizer.Optimize, request, metadata=A, timeout=30)
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED


def test_a_deadline_too_short_to_solve_is_deadline_exceeded(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    code, _ = _code(stubs.optimizer.Optimize, small_optimize(), metadata=A, timeout=0.4)
    assert code is grpc.StatusCode.DEADLINE_EXCEEDED


METHODS = [
    "/procurement.v1.OptimizerService/Optimize",
    "/procurement.v1.OptimizerService/Estimate",
    "/procurement.v1.CatalogService/GetCatalog",
    "/procurement.v1.CatalogService/DeleteCatalog",
]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(method=st.sampled_from(METHODS), payload=st.binary(max_size=64))
def test_arbitrary_request_bytes_never_yield_unknown(
    server: str, method: str, payload: bytes
) -> None:
    with grpc.insecure_channel(server) as channel:
        call = channel.unary_unary(method)
        try:
            call(payload, metadata=B, timeout=30)
        except grpc.RpcError as e:
            assert e.code() is not grpc.StatusCode.UNKNOWN, e.details()
            assert "Traceback" not in (e.details() or "")


# --------------------------------------------------------------------------- auth
def test_calls_without_credentials_are_unauthenticated(stubs: Stubs) -> None:
    code, details = _code(stubs.catalogs.ListCatalogs, catalog_pb2.ListCatalogsRequest(), timeout=5)
    assert code is grpc.StatusCode.UNAUTHENTICATED
    assert details == "missing credentials; expected metadata 'authorization: Bearer <token>'"


def test_calls_with_a_wrong_token_are_unauthenticated(stubs: Stubs) -> None:
    code, details = _code(
        stubs.optimizer.Optimize,
        small_optimize(),
        metadata=bearer("not-a-token-at-all-123"),
        timeout=5,
    )
    assert (code, details) == (grpc.StatusCode.UNAUTHENTICATED, "invalid bearer token")


def test_reflection_needs_credentials_too(server: str) -> None:
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    with grpc.insecure_channel(server) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        code, _ = _code(stub.ServerReflectionInfo, iter([request]), timeout=5)
    assert code is grpc.StatusCode.UNAUTHENTICATED


def test_another_tenants_catalog_looks_like_a_missing_one(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    for ref in ("small-test", "small-test@1", stored.id, stored.id[:8]):
        theirs = _code(
            stubs.catalogs.GetCatalog, catalog_pb2.GetCatalogRequest(ref=ref), metadata=B, timeout=5
        )
        assert theirs == (grpc.StatusCode.NOT_FOUND, f"catalog {ref!r} not found")
    listed = stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(), metadata=B, timeout=5)
    assert stored.id not in {c.id for c in listed.catalogs}


def test_another_tenant_can_neither_optimize_against_nor_delete_a_catalog(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo
) -> None:
    assert _code(stubs.optimizer.Optimize, small_optimize(stored.id), metadata=B, timeout=30) == (
        grpc.StatusCode.NOT_FOUND,
        f"catalog {stored.id!r} not found",
    )
    assert (
        _code(
            stubs.catalogs.DeleteCatalog,
            catalog_pb2.DeleteCatalogRequest(ref="small-test"),
            metadata=B,
            timeout=5,
        )[0]
        is grpc.StatusCode.NOT_FOUND
    )
    assert (
        _code(
            stubs.catalogs.ExportCatalog,
            catalog_pb2.ExportCatalogRequest(ref=stored.id),
            metadata=B,
            timeout=5,
        )[0]
        is grpc.StatusCode.NOT_FOUND
    )
    still = stubs.catalogs.GetCatalog(
        catalog_pb2.GetCatalogRequest(ref=stored.id), metadata=A, timeout=5
    )
    assert still.catalog == stored


# --------------------------------------------------------------------------- logs
def test_each_call_logs_one_line_without_tokens_or_prices(
    stubs: Stubs, stored: catalog_pb2.CatalogInfo, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="procure.service")
    reply = stubs.optimizer.Optimize(small_optimize(), metadata=A, timeout=60)
    _code(
        stubs.catalogs.GetCatalog,
        catalog_pb2.GetCatalogRequest(ref="x"),
        metadata=bearer(TOKEN_B + "x"),
        timeout=5,
    )
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "procure.service"]
    calls = [
        (line["method"].rsplit("/", 1)[1], line["tenant"], line["code"])
        for line in lines
        if line["event"] == "rpc"
    ]
    assert calls == [("Optimize", "tenant-a", "OK"), ("GetCatalog", "-", "UNAUTHENTICATED")]
    assert all(line["duration_ms"] >= 0 for line in lines if line["event"] == "rpc")
    text = caplog.text
    price = f"{reply.designs[0].capex_usd:.2f}".rstrip("0").rstrip(".")
    for secret in (TOKEN_A, TOKEN_B, price, str(int(reply.designs[0].capex_usd))):
        assert secret not in text


def test_an_xlsx_upload_is_a_single_workbook(stubs: Stubs) -> None:
    files: dict[str, bytes] = {}
    for chunk in stubs.catalogs.ExportCatalog(
        catalog_pb2.ExportCatalogRequest(ref="small-test", format="xlsx"), metadata=A, timeout=30
    ):
        files[chunk.file_name] = files.get(chunk.file_name, b"") + chunk.data
    assert list(files) == ["catalog.xlsx"]
    assert zipfile.ZipFile(io.BytesIO(files["catalog.xlsx"])).testzip() is None
    assert Path("catalog.xlsx").suffix == ".xlsx"
