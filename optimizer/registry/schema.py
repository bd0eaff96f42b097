"""One schema: a core record and the proto message that mirrors it share their field names.

Where a dataclass mirrors a message field for field (``Estimate`` and ``EstimateResponse``,
``Constraints``, ``BomLine``...), conversion copies every field the two have in common by name,
so a new mirrored field is declared twice (the ``.proto`` and the dataclass) and converted
nowhere by hand. Money follows the naming rule of the whole tree: a record's ``x_cents`` is
the message's ``x_usd``. Message-typed fields (nested messages) are left to the caller, who
converts the nested record with the same functions.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any, NamedTuple

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

CENTS, USD = "_cents", "_usd"


class Mirror(NamedTuple):
    record_field: str
    message_field: str
    cents_as_usd: bool


_MIRRORS: dict[tuple[type, type], tuple[Mirror, ...]] = {}


def mirrored(record_type: type, message_type: type[Message]) -> tuple[Mirror, ...]:
    """The record's fields that the message has by name (or as ``_usd`` for ``_cents``),
    nested messages excluded. Computed once per pair."""
    key = (record_type, message_type)
    if key not in _MIRRORS:
        _MIRRORS[key] = _mirror(record_type, message_type)
    return _MIRRORS[key]


def _mirror(record_type: type, message_type: type[Message]) -> tuple[Mirror, ...]:
    if not is_dataclass(record_type):
        raise TypeError(f"{record_type.__name__} is not a dataclass")
    by_name = {
        f.name: f
        for f in message_type.DESCRIPTOR.fields
        if f.cpp_type != FieldDescriptor.CPPTYPE_MESSAGE
    }
    out = []
    for f in fields(record_type):
        if f.name in by_name:
            out.append(Mirror(f.name, f.name, False))
        elif f.name.endswith(CENTS) and f.name.removesuffix(CENTS) + USD in by_name:
            out.append(Mirror(f.name, f.name.removesuffix(CENTS) + USD, True))
    return tuple(out)


def message_values(
    record: Any, message_type: type[Message], *, exclude: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Keyword arguments for ``message_type`` from ``record``'s mirrored fields (None: unset)."""
    values: dict[str, Any] = {}
    for m in mirrored(type(record), message_type):
        value = getattr(record, m.record_field)
        if value is None or m.record_field in exclude:
            continue
        values[m.message_field] = value / 100 if m.cents_as_usd else value
    return values


def record_values(
    message: Message, record_type: type, *, exclude: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Keyword arguments for ``record_type`` from the fields ``message`` sets.

    A field with presence (``optional``) counts when set; one without presence when it is
    not its default (proto3 cannot tell an explicit 0 or "" from an absent one). Money in
    dollars becomes whole cents."""
    descriptors = {f.name: f for f in message.DESCRIPTOR.fields}
    values: dict[str, Any] = {}
    for m in mirrored(record_type, type(message)):
        if m.record_field in exclude:
            continue
        fd = descriptors[m.message_field]
        value = getattr(message, m.message_field)
        if _repeated(fd):
            if not value:
                continue
            value = tuple(value)
        elif fd.has_presence:
            if not message.HasField(m.message_field):
                continue
        elif value == fd.default_value:
            continue
        values[m.record_field] = round(value * 100) if m.cents_as_usd else value
    return values


def _repeated(fd: Any) -> bool:
    """``is_repeated`` where protobuf has it (6.x), the deprecated label before."""
    flag = getattr(fd, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return bool(getattr(fd, "label", None) == FieldDescriptor.LABEL_REPEATED)
