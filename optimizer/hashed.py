"""Frozen dataclasses hashed once.

Workloads, plans and reliability figures key the estimator's caches in the optimizer's hot
loop (issue 14, speed), and a dataclass's generated ``__hash__`` rebuilds the tuple of its
fields on every lookup: ``hashed_once`` keeps the hash on the instance instead.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")
_KEY = "_fields_hash"  # where an instance keeps its hash (its __dict__)


def fields_hash(instance: Any) -> int:
    """The hash a frozen dataclass's generated ``__hash__`` would give (its fields, in order)."""
    return hash(tuple([getattr(instance, name) for name in instance.__dataclass_fields__]))


def _hash(self: Any) -> int:
    kept: int | None = self.__dict__.get(_KEY)
    if kept is None:
        kept = self.__dict__[_KEY] = fields_hash(self)
    return kept


def _getstate(self: Any) -> dict[str, Any]:
    """The instance's state without its hash: a string field hashes differently in another
    process (PYTHONHASHSEED), so a copy works its hash out afresh."""
    return {k: v for k, v in self.__dict__.items() if k != _KEY}


def hashed_once(cls: type[T]) -> type[T]:
    """Give a frozen dataclass (apply above ``@dataclass``) the hash of its fields, worked out
    on first use and kept: equal instances still hash alike."""
    setattr(cls, "__hash__", _hash)  # noqa: B010 - type[T] has no __hash__ to assign for mypy
    setattr(cls, "__getstate__", _getstate)  # noqa: B010
    return cls
