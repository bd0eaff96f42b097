"""A seeded fuzzer against a real server: structured mutations (extreme numbers, odd strings
and names in every field of every RPC's request) and raw byte mutations (flipped, cut,
inserted and random bytes). Whatever arrives, the answer is a status the caller can act on:
never INTERNAL, never UNKNOWN, never a call that outlives its deadline (a hang); and an
optimization answered is never one whose explanations met a design that failed verification
(a warning since the answer survives it, but still a defect)."""

from __future__ import annotations

import math
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2

from optimizer._pb.procurement.v1 import catalog_pb2, estimate_pb2, optimize_pb2, service_pb2
from tests.service_support import (
    TOKEN_A,
    bearer,
    catalog_files,
    serving,
    small_estimate,
    small_optimize,
    upload_messages,
    write_tokens,
)

A = bearer(TOKEN_A)
SEED = 20261130
CALLS = int(os.environ.get("PROCURE_FUZZ_CALLS", "2000"))
CALL_TIMEOUT_S = 8.0
# A call answered later than its deadline plus this is a hang.
HANG_SLACK_S = 2.0
FORBIDDEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}

NUMBERS: list[float] = [
    0, -1, 1, 2, 3, 7, 8, 1024, 65536, 2**31 - 1, -(2**31),
    math.inf, -math.inf, math.nan, 1e308, -1e308, 5e-324, 1e-300, 0.5, 1e15, 1e16, 1e9,
]  # fmt: skip
STRINGS: list[str] = [
    "", "x", "a" * 5000, "name@12345678901234567890", "fuzz@1", "small-test@0",
    "ethernet-budget", "../../etc/passwd", "/etc", "\x00", "ünïcödé", "@", "@@1", "min_time",
    "min_cost", "fat_tree", "infiniband", "bf16", "fp8", "full", "H100", "llama3-405b",
    "mixtral-8x7b", "bert-large", "cpsat", "cbc", "xlsx", "parquet", "servers.csv",
    "catalog.xlsx", "0" * 64, "deadbeef", "pessimistic",
]  # fmt: skip


def _fields(descriptor: Descriptor, prefix: tuple[FieldDescriptor, ...] = ()) -> list[Any]:
    """Every scalar field path of a message type, through nested messages (depth <= 3)."""
    out: list[Any] = []
    for fd in descriptor.fields:
        path = (*prefix, fd)
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            if len(prefix) < 3 and not fd.message_type.GetOptions().map_entry:
                out += _fields(fd.message_type, path)
        else:
            out.append(path)
    return out


def _set(message: Message, path: tuple[FieldDescriptor, ...], rng: random.Random) -> None:
    """Set (or, for a repeated field, extend) the field at ``path`` to a random extreme."""
    target: Any = message
    for fd in path[:-1]:
        if fd.is_repeated:
            container = getattr(target, fd.name)
            target = container[0] if len(container) and rng.random() < 0.5 else container.add()
        else:
            target = getattr(target, fd.name)
    fd = path[-1]
    if fd.type == FieldDescriptor.TYPE_STRING:
        value: Any = rng.choice(STRINGS)
    elif fd.type == FieldDescriptor.TYPE_BOOL:
        value = rng.random() < 0.5
    elif fd.type == FieldDescriptor.TYPE_BYTES:
        value = rng.randbytes(rng.randrange(64))
    elif fd.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        value = float(rng.choice(NUMBERS))
    elif fd.type == FieldDescriptor.TYPE_ENUM:
        value = rng.choice(fd.enum_type.values).number
    else:
        value = rng.choice([n for n in NUMBERS if isinstance(n, int)])
    try:
        if fd.is_repeated:
            getattr(target, fd.name).append(value)
        else:
            setattr(target, fd.name, value)
    except (ValueError, TypeError):  # out of the field's type range: not sendable at all
        pass


def mutated(base: Message, rng: random.Random) -> Message:
    out = type(base)()
    out.CopyFrom(base)
    paths = _fields(out.DESCRIPTOR)
    for _ in range(rng.randint(1, 3)):
        if paths:
            _set(out, rng.choice(paths), rng)
    return out


def byte_mutated(data: bytes, rng: random.Random) -> bytes:
    """Flip, cut, insert or replace bytes of a serialized message."""
    kind = rng.randrange(4)
    buf = bytearray(data)
    if kind == 0 and buf:
        for _ in range(rng.randint(1, 4)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    elif kind == 1 and buf:
        del buf[rng.randrange(len(buf)) :]
    elif kind == 2:
        at = rng.randrange(len(buf) + 1)
        buf[at:at] = rng.randbytes(rng.randint(1, 16))
    else:
        buf = bytearray(rng.randbytes(rng.randrange(48)))
    return bytes(buf)


# --------------------------------------------------------------------------- the RPCs
@dataclass(frozen=True)
class Rpc:
    method: str
    shape: str  # unary_unary | unary_stream | stream_unary
    base: Callable[[], Message]
    timeout_s: float = CALL_TIMEOUT_S
    # the defects an answer reports of itself (its warnings of a failed verification)
    defects: Callable[[bytes], list[str]] = lambda _: []


def _failed_verification(reply: bytes) -> list[str]:
    warnings = optimize_pb2.OptimizeResponse.FromString(reply).warnings
    return [w for w in warnings if "failed verification" in w]


def _optimize() -> optimize_pb2.OptimizeRequest:
    return small_optimize(solver=optimize_pb2.SolverOptions(time_limit_s=1))


def _batch() -> service_pb2.BatchOptimizeRequest:
    return service_pb2.BatchOptimizeRequest(scenarios=[_optimize()], catalogs=["small-test"])


RPCS = [
    Rpc("/procurement.v1.OptimizerService/Estimate", "unary_unary", small_estimate),
    Rpc(
        "/procurement.v1.OptimizerService/Optimize",
        "unary_unary",
        _optimize,
        defects=_failed_verification,
    ),
    Rpc("/procurement.v1.OptimizerService/OptimizeStream", "unary_stream", _optimize),
    Rpc("/procurement.v1.OptimizerService/BatchOptimize", "unary_stream", _batch),
    Rpc(
        "/procurement.v1.OptimizerService/GetMetrics", "unary_unary", service_pb2.GetMetricsRequest
    ),
    Rpc(
        "/procurement.v1.CatalogService/UploadCatalog",
        "stream_unary",
        lambda: catalog_pb2.UploadCatalogRequest(name="fuzz", file_name="servers.csv"),
    ),
    Rpc(
        "/procurement.v1.CatalogService/ListCatalogs",
        "unary_unary",
        lambda: catalog_pb2.ListCatalogsRequest(page_size=5),
    ),
    Rpc(
        "/procurement.v1.CatalogService/GetCatalog",
        "unary_unary",
        lambda: catalog_pb2.GetCatalogRequest(ref="small-test", include_tables=True),
    ),
    Rpc(
        "/procurement.v1.CatalogService/ExportCatalog",
        "unary_stream",
        lambda: catalog_pb2.ExportCatalogRequest(ref="small-test", format="csv"),
    ),
    Rpc(
        "/procurement.v1.CatalogService/DeleteCatalog",
        "unary_unary",
        lambda: catalog_pb2.DeleteCatalogRequest(ref="fuzz@1"),
    ),
    Rpc("/grpc.health.v1.Health/Check", "unary_unary", health_pb2.HealthCheckRequest),
]


def _upload_chunks(rng: random.Random, raw: bool) -> list[bytes]:
    """A whole catalog upload with one mutated message (structured) or mutated bytes."""
    files = catalog_files()
    if not raw and rng.random() < 0.5:  # a cell of a table file set to an extreme value
        name = rng.choice(sorted(files))
        lines = files[name].decode().splitlines()
        row = rng.randrange(1, len(lines)) if len(lines) > 1 else 0
        cells = lines[row].split(",")
        cells[rng.randrange(len(cells))] = rng.choice([*map(str, NUMBERS), *STRINGS[:12]])
        lines[row] = ",".join(cells)
        files[name] = "\n".join(lines).encode()
    messages: list[Message] = list(upload_messages(files, name="fuzz", chunk_bytes=4096))
    at = rng.randrange(len(messages))
    if raw:
        chunks = [m.SerializeToString() for m in messages]
        chunks[at] = byte_mutated(chunks[at], rng)
        return chunks
    if rng.random() < 0.5:
        messages[at] = mutated(messages[at], rng)
    return [m.SerializeToString() for m in messages]


def _call(channel: grpc.Channel, rpc: Rpc, payload: Any) -> tuple[grpc.StatusCode, list[str]]:
    """Send raw bytes (or a list of them for a client stream); the status the call ends with
    and the defects its unary answer reports (``Rpc.defects``)."""
    try:
        if rpc.shape == "unary_unary":
            reply = channel.unary_unary(rpc.method)(payload, metadata=A, timeout=rpc.timeout_s)
            return grpc.StatusCode.OK, rpc.defects(reply)
        if rpc.shape == "unary_stream":
            for _ in channel.unary_stream(rpc.method)(payload, metadata=A, timeout=rpc.timeout_s):
                pass
        else:
            channel.stream_unary(rpc.method)(iter(payload), metadata=A, timeout=rpc.timeout_s)
    except grpc.RpcError as e:
        return e.code(), []
    return grpc.StatusCode.OK, []


def fuzz(address: str, calls: int, seed: int) -> tuple[Counter[str], list[str]]:
    """``calls`` calls spread over every RPC; the status codes seen and every failure."""
    rng = random.Random(seed)
    codes: Counter[str] = Counter()
    failures: list[str] = []
    with grpc.insecure_channel(address) as channel:
        for n in range(calls):
            rpc = RPCS[n % len(RPCS)]
            raw = rng.random() < 0.4
            if rpc.shape == "stream_unary":
                payload: Any = _upload_chunks(rng, raw)
            elif raw:
                payload = byte_mutated(rpc.base().SerializeToString(), rng)
            else:
                payload = mutated(rpc.base(), rng).SerializeToString()
            started = time.monotonic()
            code, defects = _call(channel, rpc, payload)
            took_s = time.monotonic() - started
            codes[code.name] += 1
            hang = (
                code is grpc.StatusCode.DEADLINE_EXCEEDED or took_s > rpc.timeout_s + HANG_SLACK_S
            )
            if code in FORBIDDEN or hang or defects:
                kind = "raw" if raw else "structured"
                failures.append(
                    f"call {n} {rpc.method} ({kind}): {code.name} in {took_s:.1f} s {defects}"
                )
    return codes, failures


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("fuzz")
    for address in serving(tmp, tokens_file=write_tokens(tmp), queue_size=8):
        with grpc.insecure_channel(address) as channel:
            upload = channel.stream_unary("/procurement.v1.CatalogService/UploadCatalog")
            upload(
                (m.SerializeToString() for m in upload_messages(catalog_files())),
                metadata=A,
                timeout=30,
            )
        yield address


def test_two_thousand_fuzzed_calls_get_no_internal_unknown_or_hang(server: str) -> None:
    codes, failures = fuzz(server, CALLS, SEED)
    assert sum(codes.values()) == CALLS >= 2000
    assert not failures, "\n".join(failures[:20])
    assert codes["INVALID_ARGUMENT"] > 0 and codes["OK"] > 0  # the fuzzer reaches both


@pytest.mark.soak
@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_many_more_fuzzed_calls_with_other_seeds(server: str, seed: int) -> None:
    _, failures = fuzz(server, 10 * CALLS, seed)
    assert not failures, "\n".join(failures[:20])


def test_the_mutations_reach_nested_numeric_fields_with_extremes() -> None:
    """The fuzzer can produce the inputs that were INTERNAL before (issue 15, item 3)."""
    rng = random.Random(SEED)
    seen = set()
    for _ in range(5000):
        request = mutated(small_estimate(), rng)
        assert isinstance(request, estimate_pb2.EstimateRequest)
        if request.cluster.HasField("gpu_peak_tflops"):
            seen.add(request.cluster.gpu_peak_tflops)
    assert {math.inf, 1e308, 5e-324} <= seen
