"""TLS and mutual TLS: a client needs the server's CA, and with mTLS its own certificate too;
the bearer token still decides the tenant."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from optimizer._pb.procurement.v1 import catalog_pb2
from tests.service_support import TOKEN_A, Stubs, bearer, health_status, serving, write_tokens


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _make_pki(folder: Path) -> None:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by it."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
             "-keyout", "ca.key", "-out", "ca.pem", cwd=folder)
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "client"):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
                 "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=folder)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", f"{name}.pem",
                 cwd=folder)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pki")
    _make_pki(folder)
    return folder


@pytest.fixture(scope="module")
def address(pki: Path) -> Iterator[str]:
    yield from serving(pki, tokens_file=write_tokens(pki), tls_cert=pki / "server.pem",
                       tls_key=pki / "server.key", tls_client_ca=pki / "ca.pem")


def _channel(pki: Path, address: str, *, client_cert: bool) -> grpc.Channel:
    ca = (pki / "ca.pem").read_bytes()
    key = (pki / "client.key").read_bytes() if client_cert else None
    cert = (pki / "client.pem").read_bytes() if client_cert else None
    return grpc.secure_channel(address, grpc.ssl_channel_credentials(ca, key, cert))


def test_a_client_with_certificate_and_token_is_served(pki: Path, address: str) -> None:
    with _channel(pki, address, client_cert=True) as channel:
        stubs = Stubs(channel)
        assert health_status(stubs) == "SERVING"
        listed = stubs.catalogs.ListCatalogs(catalog_pb2.ListCatalogsRequest(),
                                             metadata=bearer(TOKEN_A), timeout=10)
        assert "infiniband-ndr" in listed.bundled


def test_a_client_without_certificate_is_refused(pki: Path, address: str) -> None:
    with _channel(pki, address, client_cert=False) as channel, \
            pytest.raises(grpc.RpcError) as e:
        health_status(Stubs(channel))
    assert e.value.code() is grpc.StatusCode.UNAVAILABLE


def test_a_plaintext_client_is_refused(address: str) -> None:
    with grpc.insecure_channel(address) as channel, pytest.raises(grpc.RpcError) as e:
        health_status(Stubs(channel))
    assert e.value.code() is grpc.StatusCode.UNAVAILABLE
