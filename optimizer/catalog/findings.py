"""Constructors for validation findings, so every module words and truncates them alike."""

from __future__ import annotations

from optimizer.errors import Finding

ERROR, WARNING = "error", "warning"
CATALOG = "catalog"
"""The ``table`` of findings about the catalog as a whole (files, formats)."""
_MAX_SHOWN_CHARS = 80


def shown(value: object) -> str:
    """A cell value as a report shows it: short, on one line."""
    text = value if isinstance(value, str) else str(value)
    text = text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text
    return text if len(text) <= _MAX_SHOWN_CHARS else text[: _MAX_SHOWN_CHARS - 1] + "…"


def error(
    table: str, row: int | None, column: str | None, value: object | None, expected: str
) -> Finding:
    return Finding(ERROR, table, row, column, None if value is None else shown(value), expected)


def warning(
    table: str, row: int | None, column: str | None, value: object | None, expected: str
) -> Finding:
    return Finding(WARNING, table, row, column, None if value is None else shown(value), expected)
