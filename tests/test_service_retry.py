"""The retry contract from the client's side: a busy refusal is retried after the server's
hint, and the user is told; a refusal that is not busy is never retried."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from client.transport import BUSY_RETRIES, Remote
from optimizer._pb.procurement.v1 import catalog_pb2
from optimizer.errors import InvalidInput, LimitExceeded
from tests.service_support import Stubs, start


@pytest.fixture
def one_call_server(tmp_path: Path) -> Iterator[str]:
    """A server that admits one call per tenant at a time."""
    service, address = start(tmp_path, max_calls_per_tenant=1, upload_idle_s=60.0)
    yield address
    service.shutdown(0)


def _hold_the_slot(address: str, seconds: float) -> threading.Event:
    """An upload that sends nothing for ``seconds`` (holding the tenant's one slot)."""
    admitted = threading.Event()

    def silent() -> Iterator[catalog_pb2.UploadCatalogRequest]:
        admitted.set()
        time.sleep(seconds)
        return
        yield

    def run() -> None:
        # No files: refused once the slot is released.
        with grpc.insecure_channel(address) as channel, contextlib.suppress(grpc.RpcError):
            Stubs(channel).catalogs.UploadCatalog(silent(), timeout=30)

    threading.Thread(target=run, daemon=True).start()
    admitted.wait(10)
    time.sleep(0.2)  # the server has admitted it
    return admitted


def test_a_busy_refusal_is_retried_after_the_hint_and_said(one_call_server: str) -> None:
    _hold_the_slot(one_call_server, seconds=1.0)
    notes: list[str] = []
    remote = Remote(one_call_server, notify=notes.append)
    try:
        reply = remote.call(remote.catalogs.ListCatalogs, catalog_pb2.ListCatalogsRequest())
    finally:
        remote.close()
    assert reply.bundled
    assert notes and all("busy; retrying in" in n for n in notes)
    assert len(notes) <= BUSY_RETRIES


def test_busy_past_every_retry_is_limit_exceeded(one_call_server: str) -> None:
    _hold_the_slot(one_call_server, seconds=20.0)
    notes: list[str] = []
    remote = Remote(one_call_server, notify=notes.append)
    try:
        with pytest.raises(LimitExceeded, match="busy"):
            remote.call(remote.catalogs.ListCatalogs, catalog_pb2.ListCatalogsRequest())
    finally:
        remote.close()
    assert len(notes) == BUSY_RETRIES


def test_a_refusal_that_is_not_busy_is_not_retried(one_call_server: str) -> None:
    notes: list[str] = []
    remote = Remote(one_call_server, notify=notes.append)
    try:
        with pytest.raises(InvalidInput):
            remote.call(remote.catalogs.ListCatalogs, catalog_pb2.ListCatalogsRequest(page_size=-1))
    finally:
        remote.close()
    assert notes == []


def test_a_remote_invalid_input_names_the_same_fields_as_embedded(one_call_server: str) -> None:
    from optimizer import api
    from tests.service_support import small_optimize

    request = small_optimize(catalog="ethernet-budget", top_k=25)
    with pytest.raises(InvalidInput) as embedded:
        api.optimize(request)
    remote = Remote(one_call_server)
    try:
        with pytest.raises(InvalidInput) as remotely:
            remote.optimize(request)
    finally:
        remote.close()
    assert remotely.value.violations() == embedded.value.violations()
    assert str(remotely.value) == str(embedded.value)
