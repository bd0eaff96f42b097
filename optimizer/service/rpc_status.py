"""Rich gRPC status: ``google.rpc.Status`` with ``BadRequest`` and ``RetryInfo`` details.

Every gRPC client library decodes the ``grpc-status-details-bin`` trailer as a
``google.rpc.Status`` (grpcio-status, grpc-js, grpcurl). The three messages are declared here,
in a private descriptor pool, wire-identical to googleapis' definitions, so the service needs no
extra dependency and cannot clash with googleapis-common-protos if a process loads both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, duration_pb2, message_factory

from optimizer.errors import FieldViolation

DETAILS_KEY = "grpc-status-details-bin"
PUSHBACK_KEY = "grpc-retry-pushback-ms"
"""gRFC A6: the server's retry pushback, in milliseconds, as a trailer."""
_TYPE_PREFIX = "type.googleapis.com/"
# Trailers share gRPC's 8 KiB metadata cap with everything else; keep the details well under.
MAX_DETAILS_BYTES = 3000

_F = descriptor_pb2.FieldDescriptorProto


def _field(
    name: str, number: int, kind: Any, *, type_name: str = "", repeated: bool = False
) -> Any:
    label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    field = _F(name=name, number=number, type=kind, label=label)
    if type_name:
        field.type_name = type_name
    return field


def _pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for dep in (any_pb2, duration_pb2):
        pool.AddSerializedFile(dep.DESCRIPTOR.serialized_pb)
    fdp = descriptor_pb2.FileDescriptorProto(
        name="procure/google_rpc_details.proto",
        package="google.rpc",
        syntax="proto3",
        dependency=["google/protobuf/any.proto", "google/protobuf/duration.proto"],
    )
    fdp.message_type.add(
        name="Status",
        field=[
            _field("code", 1, _F.TYPE_INT32),
            _field("message", 2, _F.TYPE_STRING),
            _field("details", 3, _F.TYPE_MESSAGE, type_name=".google.protobuf.Any", repeated=True),
        ],
    )
    bad = fdp.message_type.add(
        name="BadRequest",
        field=[
            _field(
                "field_violations",
                1,
                _F.TYPE_MESSAGE,
                type_name=".google.rpc.BadRequest.FieldViolation",
                repeated=True,
            )
        ],
    )
    bad.nested_type.add(
        name="FieldViolation",
        field=[_field("field", 1, _F.TYPE_STRING), _field("description", 2, _F.TYPE_STRING)],
    )
    fdp.message_type.add(
        name="RetryInfo",
        field=[_field("retry_delay", 1, _F.TYPE_MESSAGE, type_name=".google.protobuf.Duration")],
    )
    pool.Add(fdp)
    return pool


_POOL = _pool()
Status: Any = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("google.rpc.Status"))
BadRequest: Any = message_factory.GetMessageClass(
    _POOL.FindMessageTypeByName("google.rpc.BadRequest")
)
RetryInfo: Any = message_factory.GetMessageClass(
    _POOL.FindMessageTypeByName("google.rpc.RetryInfo")
)


@dataclass(frozen=True)
class RichStatus:
    """What a status carries besides its code and message."""

    violations: tuple[FieldViolation, ...] = ()
    retry_after_s: float | None = None


def encode(code: int, message: str, rich: RichStatus) -> bytes:
    """The serialized ``google.rpc.Status``; violations beyond MAX_DETAILS_BYTES are dropped
    (the message still names them)."""
    status = Status(code=code, message=message[:MAX_DETAILS_BYTES])
    if rich.violations:
        bad = BadRequest()
        for v in rich.violations:
            bad.field_violations.add(field=v.field[:200], description=v.description[:400])
            if bad.ByteSize() > MAX_DETAILS_BYTES - len(status.message.encode()):
                del bad.field_violations[-1]
                break
        status.details.add(
            type_url=_TYPE_PREFIX + "google.rpc.BadRequest", value=bad.SerializeToString()
        )
    if rich.retry_after_s is not None:
        info = RetryInfo()
        seconds = max(0.0, rich.retry_after_s)
        info.retry_delay.seconds = int(seconds)
        info.retry_delay.nanos = round((seconds - int(seconds)) * 1e9)
        status.details.add(
            type_url=_TYPE_PREFIX + "google.rpc.RetryInfo", value=info.SerializeToString()
        )
    return bytes(status.SerializeToString())


def decode(data: bytes) -> tuple[int, str, RichStatus]:
    """``encode``'s inverse: code, message and the details this module knows."""
    status = Status.FromString(data)
    violations: list[FieldViolation] = []
    retry: float | None = None
    for detail in status.details:
        name = detail.type_url.rpartition("/")[2]
        if name == "google.rpc.BadRequest":
            bad = BadRequest.FromString(detail.value)
            violations += [FieldViolation(v.field, v.description) for v in bad.field_violations]
        elif name == "google.rpc.RetryInfo":
            delay = RetryInfo.FromString(detail.value).retry_delay
            retry = delay.seconds + delay.nanos / 1e9
    return int(status.code), str(status.message), RichStatus(tuple(violations), retry)


def from_trailers(trailers: Iterable[Any] | None) -> RichStatus:
    """The rich status in a call's trailing metadata (``(key, value)`` pairs, as
    ``grpc.Call.trailing_metadata()`` gives them); empty when it carries none."""
    for key, value in trailers or ():
        if key == DETAILS_KEY and isinstance(value, bytes):
            return decode(value)[2]
    return RichStatus()
