"""TLS and mutual TLS: a client needs the server's CA, and with mTLS its own certificate too;
the bearer token decides the tenant, and with tenant_from_cert must be the certificate's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from optimizer._pb.procurement.v1 import catalog_pb2
from optimizer.errors import InvalidInput
from optimizer.service.config import ServiceConfig
from tests.service_support import (
    TOKEN_A,
    Stubs,
    bearer,
    health_status,
    make_pki,
    serving,
    write_tokens,
)

TOKEN_OF_CLIENT = "token-of-the-client-cert-0123"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pki")
    make_pki(folder)
    return folder


@pytest.fixture(scope="module")
def address(pki: Path) -> Iterator[str]:
    yield from serving(
        pki,
        tokens_file=write_tokens(pki),
        tls_cert=pki / "server.pem",
        tls_key=pki / "server.key",
        tls_client_ca=pki / "ca.pem",
    )


def _channel(pki: Path, address: str, *, client_cert: bool) -> grpc.Channel:
    ca = (pki / "ca.pem").read_bytes()
    key = (pki / "client.key").read_bytes() if client_cert else None
    cert = (pki / "client.pem").read_bytes() if client_cert else None
    return grpc.secure_channel(address, grpc.ssl_channel_credentials(ca, key, cert))


def test_a_client_with_certificate_and_token_is_served(pki: Path, address: str) -> None:
    with _channel(pki, address, client_cert=True) as channel:
        stubs = Stubs(channel)
        assert health_status(stubs) == "SERVING"
        listed = stubs.catalogs.ListCatalogs(
            catalog_pb2.ListCatalogsRequest(), metadata=bearer(TOKEN_A), timeout=10
        )
        assert "infiniband-ndr" in listed.bundled


def test_a_client_without_certificate_is_refused(pki: Path, address: str) -> None:
    with _channel(pki, address, client_cert=False) as channel, pytest.raises(grpc.RpcError) as e:
        health_status(Stubs(channel))
    assert e.value.code() is grpc.StatusCode.UNAVAILABLE


def test_a_plaintext_client_is_refused(address: str) -> None:
    with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError) as e:
        health_status(Stubs(channel))
    assert e.value.code() is grpc.StatusCode.UNAVAILABLE


def test_tenant_from_cert_needs_mutual_tls() -> None:
    with pytest.raises(InvalidInput) as e:
        ServiceConfig(tenant_from_cert=True).check()
    assert e.value.field == "tenant_from_cert"


@pytest.fixture(scope="module")
def cert_bound(pki: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """mTLS with --tenant-from-cert: the client certificate (CN "client") is tenant client."""
    tokens = tmp_path_factory.mktemp("bound") / "tokens.txt"
    tokens.write_text(f"client {TOKEN_OF_CLIENT}\ntenant-a {TOKEN_A}\n")
    yield from serving(
        tokens.parent,
        tokens_file=tokens,
        tls_cert=pki / "server.pem",
        tls_key=pki / "server.key",
        tls_client_ca=pki / "ca.pem",
        tenant_from_cert=True,
    )


def test_a_token_of_the_certificates_tenant_is_served(pki: Path, cert_bound: str) -> None:
    with _channel(pki, cert_bound, client_cert=True) as channel:
        listed = Stubs(channel).catalogs.ListCatalogs(
            catalog_pb2.ListCatalogsRequest(), metadata=bearer(TOKEN_OF_CLIENT), timeout=10
        )
    assert listed.bundled


def test_a_token_of_another_tenant_is_denied_with_that_certificate(
    pki: Path, cert_bound: str
) -> None:
    with _channel(pki, cert_bound, client_cert=True) as channel, pytest.raises(grpc.RpcError) as e:
        Stubs(channel).catalogs.ListCatalogs(
            catalog_pb2.ListCatalogsRequest(), metadata=bearer(TOKEN_A), timeout=10
        )
    assert e.value.code() is grpc.StatusCode.PERMISSION_DENIED
