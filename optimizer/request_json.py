"""Request messages from their protobuf JSON form: the one reader of request files and specs.

``procure estimate|optimize`` request files, ``--calibration`` profiles, ``procure calibrate``
measurement entries and ``procure batch`` spec scenarios all come through ``parse_json``.
Protobuf's JSON parser takes JSON ``true``/``false`` as 1/0 in a number or enum field (a
Python bool is an int), so ``"budget_usd": true`` would silently be a one-dollar budget; it is
refused here, naming the field. Over gRPC the binary encoding cannot carry such a value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from optimizer.errors import InvalidInput

M = TypeVar("M", bound=Message)

INTEGER_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
    }
)


def parse_json(source: str | dict[str, Any], message: M, prefix: str = "") -> M:
    """``message`` filled from its protobuf JSON form, a text or an already decoded document.

    Raises
    ------
    InvalidInput
        JSON ``true``/``false`` in a field that is not bool, naming it as ``prefix`` and its
        path in the message (``workload.layers``, ``allowed_fabric_kinds[1]``) and
        saying what the field takes.
    json_format.ParseError
        What protobuf refuses: malformed JSON, an unknown field, a value of the wrong type.
    """
    if isinstance(source, str):
        try:
            doc = json.loads(source)
        except json.JSONDecodeError:
            doc = None  # malformed: json_format.Parse below says where
        refuse_booleans(doc, message.DESCRIPTOR, prefix)
        return json_format.Parse(source, message)  # its own checks (duplicate keys too)
    refuse_booleans(source, message.DESCRIPTOR, prefix)
    return json_format.ParseDict(source, message)


# ``descriptor: Any``: the C implementation's Descriptor type is not the Python stub's.
def refuse_booleans(doc: Any, descriptor: Any, prefix: str = "") -> None:
    """Walk ``doc`` along the message ``descriptor`` (field names as in the proto or in
    camelCase, as protobuf's JSON accepts): JSON true/false only where the field is bool.
    Keys that are no field are left to protobuf's parser, which names them."""
    if not isinstance(doc, Mapping):
        return
    fields = {f.name: f for f in descriptor.fields} | {f.json_name: f for f in descriptor.fields}
    for key, value in doc.items():
        fd = fields.get(str(key))
        if fd is None:
            continue
        path = f"{prefix}{fd.name}"
        if fd.is_repeated and isinstance(value, list):
            for i, item in enumerate(value):
                _refuse_in_field(item, fd, f"{path}[{i}]")
        elif fd.is_repeated and isinstance(value, bool):
            raise InvalidInput(f"got {_json(value)}, expected a list", field=path)
        else:
            _refuse_in_field(value, fd, path)


def _refuse_in_field(value: Any, fd: FieldDescriptor, path: str) -> None:
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        if isinstance(value, bool):
            raise InvalidInput(f"got {_json(value)}, expected an object", field=path)
        refuse_booleans(value, fd.message_type, f"{path}.")
    elif isinstance(value, bool) and fd.type != FieldDescriptor.TYPE_BOOL:
        raise InvalidInput(f"got {_json(value)}, expected {_expected(fd)}", field=path)


def _expected(fd: FieldDescriptor) -> str:
    """What a field that is neither bool nor a message takes, in a reader's words."""
    if fd.type in INTEGER_TYPES:
        return "an integer"
    if fd.enum_type is not None:
        return "one of " + ", ".join(v.name for v in fd.enum_type.values)
    if fd.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        return "a string"
    return "a number"


def _json(value: bool) -> str:
    return "true" if value else "false"
