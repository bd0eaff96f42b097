"""Frozen dataclasses hashed once.

Workloads, plans and reliability figures key the estimator's caches in the optimizer's hot
loop (issue 14, speed), and a dataclass's generated ``__hash__`` rebuilds the tuple of its
fields on every lookup: these classes keep the hash in a cached property instead.
"""

from __future__ import annotations

from typing import Any


def fields_hash(instance: Any) -> int:
    """The hash a frozen dataclass's generated ``__hash__`` would give (its fields, in order)."""
    return hash(tuple([getattr(instance, name) for name in instance.__dataclass_fields__]))
