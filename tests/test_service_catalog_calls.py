"""Catalog calls that one careless tenant cannot turn against itself or others: bounded names,
a paginated list, bundled catalogs readable like stored ones, and throttled token guessing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from optimizer._pb.procurement.v1 import catalog_pb2
from optimizer.request_limits import MAX_CATALOG_NAME_CHARS
from optimizer.service import interceptors, rpc_status
from tests.service_support import (
    TOKEN_A,
    Stubs,
    bearer,
    catalog_files,
    serving,
    upload_messages,
    write_tokens,
)

A = bearer(TOKEN_A)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("catalog-calls")
    yield from serving(tmp, tokens_file=write_tokens(tmp))


@pytest.fixture(scope="module")
def stubs(server: str) -> Iterator[Stubs]:
    with grpc.insecure_channel(server) as channel:
        yield Stubs(channel)


def _upload(stubs: Stubs, name: str) -> catalog_pb2.UploadCatalogResponse:
    return stubs.catalogs.UploadCatalog(  # type: ignore[no-any-return]
        upload_messages(catalog_files(), name=name, chunk_bytes=1 << 20), metadata=A, timeout=30
    )


@pytest.mark.parametrize(
    "name",
    ["n" * (MAX_CATALOG_NAME_CHARS + 1), "with@version", "../up", "-leading-dash", "tab\tname"],
    ids=["too long", "at sign", "slash", "leading dash", "control character"],
)
def test_a_bad_catalog_name_is_refused_before_anything_is_stored(stubs: Stubs, name: str) -> None:
    with pytest.raises(grpc.RpcError) as e:
        _upload(stubs, name)
    assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    violations = rpc_status.from_trailers(e.value.trailing_metadata()).violations  # type: ignore[attr-defined]
    assert [v.field for v in violations] == ["name"]
    listed = stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(), metadata=A)
    assert name not in {c.name for c in listed.catalogs}


def test_a_huge_name_cannot_poison_the_tenants_list(stubs: Stubs) -> None:
    with pytest.raises(grpc.RpcError):
        _upload(stubs, "n" * (3 << 20) + ".x")
    stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(), metadata=A, timeout=10)


def test_the_list_comes_in_pages_that_together_hold_every_version(stubs: Stubs) -> None:
    names = [f"paged-{i}" for i in range(5)]
    for name in names:
        _upload(stubs, name)
    seen: list[str] = []
    token, pages = "", 0
    while True:
        reply = stubs.catalogs.ListCatalogs(
            catalog_pb2.ListCatalogsRequest(page_size=2, page_token=token), metadata=A
        )
        assert len(reply.catalogs) <= 2
        assert bool(reply.bundled) == (pages == 0)  # bundled names come with the first page
        seen += [c.ref for c in reply.catalogs]
        pages += 1
        token = reply.next_page_token
        if not token:
            break
    assert [r for r in seen if r.startswith("paged-")] == [f"{n}@1" for n in names]
    assert len(seen) == len(set(seen))


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [({"page_size": -1}, "page_size"), ({"page_size": 100_000}, "page_size"),
     ({"page_token": "not a token"}, "page_token")],
)  # fmt: skip
def test_a_bad_page_request_names_its_field(
    stubs: Stubs, request_fields: dict[str, Any], field: str
) -> None:
    with pytest.raises(grpc.RpcError) as e:
        stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(**request_fields), metadata=A)
    assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    violations = rpc_status.from_trailers(e.value.trailing_metadata()).violations  # type: ignore[attr-defined]
    assert [v.field for v in violations] == [field]


def test_every_bundled_catalog_the_list_names_can_be_read(stubs: Stubs) -> None:
    listed = stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(), metadata=A)
    assert listed.bundled
    for name in listed.bundled:
        reply = stubs.catalogs.GetCatalog(
            catalog_pb2.GetCatalogRequest(ref=name, include_tables=True), metadata=A, timeout=30
        )
        assert reply.catalog.name == reply.catalog.ref == name
        assert len(reply.catalog.id) == 64 and reply.catalog.row_count > 0
        assert {t.name for t in reply.tables} >= {"servers", "nics", "switches", "links"}


def test_a_bundled_catalog_exports_and_uploads_back(stubs: Stubs) -> None:
    name = "ethernet-budget"
    files: dict[str, bytes] = {}
    for chunk in stubs.catalogs.ExportCatalog(
        catalog_pb2.ExportCatalogRequest(ref=name), metadata=A, timeout=30
    ):
        files[chunk.file_name] = files.get(chunk.file_name, b"") + chunk.data
    bundled = stubs.catalogs.GetCatalog(catalog_pb2.GetCatalogRequest(ref=name), metadata=A)
    stored = stubs.catalogs.UploadCatalog(
        upload_messages(files, chunk_bytes=1 << 20), metadata=A, timeout=30
    )
    assert stored.catalog.id == bundled.catalog.id


def test_a_request_id_over_128_characters_is_refused_on_upload(stubs: Stubs) -> None:
    with pytest.raises(grpc.RpcError) as e:
        stubs.catalogs.UploadCatalog(
            upload_messages(catalog_files(), request_id="r" * 129), metadata=A, timeout=30
        )
    assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def test_token_guessing_is_throttled_per_address(server: str, stubs: Stubs) -> None:
    guesses = [bearer(f"guess-{i:04d}-0123456789abcdef") for i in range(40)]
    codes = []
    for guess in guesses:
        with pytest.raises(grpc.RpcError) as e:
            stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(), metadata=guess)
        codes.append(e.value.code())
    limit = interceptors.AUTH_FAILURES_PER_WINDOW
    assert set(codes[:limit]) == {grpc.StatusCode.UNAUTHENTICATED}
    assert set(codes[limit:]) == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    with pytest.raises(grpc.RpcError) as e:
        stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(), metadata=guesses[0])
    rich = rpc_status.from_trailers(e.value.trailing_metadata())  # type: ignore[attr-defined]
    assert rich.retry_after_s is not None and 0 < rich.retry_after_s <= interceptors.AUTH_WINDOW_S
