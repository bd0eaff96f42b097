"""A registry of descriptor records: lookup by name or proto enum value, tolerant parsing.

Users type what the tables print (``fat-tree``, ``Min-Cost``), so every name is compared in a
canonical form: trimmed, lower case, ``-`` and spaces read as ``_``. An unknown value is an
``InvalidInput`` naming the request field and the allowed values, never a ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Generic, Protocol, TypeVar

from optimizer.errors import InvalidInput


class Descriptor(Protocol):
    """What every registered record has: a wire name, a display label, a proto enum number."""

    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def proto_value(self) -> int: ...


D = TypeVar("D", bound=Descriptor)


def canonical(value: str) -> str:
    """The registry spelling of ``value``: ``" Fat-Tree "`` -> ``"fat_tree"``."""
    return "_".join(value.strip().lower().replace("-", " ").replace("_", " ").split())


class Registry(Generic[D]):
    """Descriptors of one kind, in registration order (the order choices are offered in)."""

    def __init__(self, kind: str, field: str) -> None:
        self.kind = kind  # "fabric", "topology family", ...: used in messages
        self.field = field  # the request field errors name by default
        self._by_name: dict[str, D] = {}

    def register(self, descriptor: D) -> D:
        """Add ``descriptor``; its name must be canonical and its name and number unused."""
        name = descriptor.name
        if canonical(name) != name:
            msg = f"{self.kind} name {name!r} is not canonical; expected {canonical(name)!r}"
            raise ValueError(msg)
        if name in self._by_name:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        if descriptor.proto_value < 1 or any(
            d.proto_value == descriptor.proto_value for d in self._by_name.values()
        ):
            msg = f"{self.kind} {name!r}: proto value {descriptor.proto_value} is 0 or taken"
            raise ValueError(msg)
        self._by_name[name] = descriptor
        return descriptor

    @contextmanager
    def registered(self, descriptor: D) -> Iterator[D]:
        """``descriptor`` registered for the duration of a ``with`` block (tests, plugins)."""
        self.register(descriptor)
        try:
            yield descriptor
        finally:
            del self._by_name[descriptor.name]

    def __iter__(self) -> Iterator[D]:
        return iter(tuple(self._by_name.values()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and canonical(name) in self._by_name

    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def cli_names(self) -> tuple[str, ...]:
        """Names as the CLI spells them (``fat-tree``); ``parse`` accepts both spellings."""
        return tuple(n.replace("_", "-") for n in self._by_name)

    def get(self, name: str, field: str | None = None) -> D:
        """The descriptor ``name`` (any case, ``-`` or ``_``), or InvalidInput naming ``field``."""
        found = self._by_name.get(canonical(name))
        if found is None:
            msg = f"got {name!r}, expected one of {', '.join(self._by_name)}"
            raise InvalidInput(msg, field=field or self.field)
        return found

    def normalize(self, name: str, field: str | None = None) -> str:
        """The canonical name of ``name`` (``fat-tree`` -> ``fat_tree``)."""
        return self.get(name, field).name

    def normalize_all(self, names: Iterable[str], field: str | None = None) -> tuple[str, ...]:
        """Canonical names of a repeated field, each error naming its index; duplicates once."""
        where = field or self.field
        out = (self.normalize(n, f"{where}[{i}]") for i, n in enumerate(names))
        return tuple(dict.fromkeys(out))

    def by_proto(self, value: int, field: str | None = None) -> D:
        """The descriptor of a proto enum number (0, UNSPECIFIED, has none)."""
        for d in self._by_name.values():
            if d.proto_value == value:
                return d
        numbers = ", ".join(str(d.proto_value) for d in self._by_name.values())
        msg = f"got enum value {value}, expected one of {numbers}"
        raise InvalidInput(msg, field=field or self.field)

    def resolve(self, text: str, enum_value: int, field: str, enum_field: str) -> D | None:
        """One choice given as a string field, an enum field, or both (then they must agree).

        None when neither is set (the caller's default applies)."""
        from_text = self.get(text, field) if text.strip() else None
        from_enum = self.by_proto(enum_value, enum_field) if enum_value else None
        if from_text and from_enum and from_text is not from_enum:
            msg = f"{field} says {from_text.name!r}, {enum_field} says {from_enum.name!r}"
            raise InvalidInput(msg, field=enum_field)
        return from_text or from_enum

    def resolve_all(
        self, texts: Iterable[str], enum_values: Iterable[int], field: str, enum_field: str
    ) -> tuple[str, ...]:
        """A repeated choice given as strings, enum values or both: their union, in order."""
        named = self.normalize_all(texts, field)
        numbered = tuple(
            self.by_proto(v, f"{enum_field}[{i}]").name for i, v in enumerate(enum_values)
        )
        return tuple(dict.fromkeys((*named, *numbered)))

    def labels(self) -> dict[str, str]:
        """name -> display label, for tables that are keyed by the wire name."""
        return {d.name: d.label for d in self._by_name.values()}
