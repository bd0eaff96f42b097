"""One cell of text <-> one typed value, by its schema column; nothing is coerced.

Every file format is first reduced to text cells, so one parser decides what a value means.
``format_cell`` is the exact inverse of ``parse_cell`` for every valid value, which is what
lets ``write_catalog`` output re-load to an identical catalog.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

from optimizer.catalog.money import format_usd, parse_usd_cents
from optimizer.catalog.schema import MAX_TEXT_CHARS, Column

Value = str | int | float | bool | date | frozenset[str] | None

_INT = re.compile(r"-?[0-9]{1,12}")
_DECIMAL = re.compile(r"-?[0-9]{1,12}(?:\.[0-9]{1,12})?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
FORMULA_STARTS = ("=", "+", "-", "@")
"""A spreadsheet evaluates a text cell that starts with one of these (CSV injection)."""
LIST_SEPARATOR = ";"
_TRUE, _FALSE = "true", "false"


class CellError(ValueError):
    """The cell's text is not a valid value; ``expected`` says what would have been."""

    def __init__(self, expected: str) -> None:
        self.expected = expected
        super().__init__(expected)


def parse_cell(column: Column, text: str) -> Value:
    """The typed value of ``text`` in ``column`` (None for an empty optional cell)."""
    if text == "":
        if column.required:
            raise CellError(f"a value ({column.name} is required)")
        if column.default is not None:
            return column.default
        return "" if column.kind == "text" else None
    _check_plain(column, text)
    if column.kind == "text":
        return text
    if column.kind in ("int", "decimal"):
        return _parse_number(column, text)
    if column.kind == "money":
        cents = parse_usd_cents(text)
        if cents is None or not _in_bounds(column, Decimal(cents).scaleb(-2)):
            raise CellError(column.constraint)
        return cents
    if column.kind == "bool":
        if text.lower() not in (_TRUE, _FALSE):
            raise CellError(column.constraint)
        return text.lower() == _TRUE
    if column.kind == "enum":
        if text not in column.allowed:
            raise CellError(column.constraint)
        return text
    if column.kind == "enum_set":
        return _parse_set(column, text)
    return _parse_date(column, text)


def format_cell(column: Column, value: Value) -> str:
    """The canonical text of ``value``; ``parse_cell`` reads it back to an equal value."""
    if value is None:
        return ""
    if column.kind == "money":
        assert isinstance(value, int)
        return format_usd(value)
    if column.kind == "bool":
        return _TRUE if value else _FALSE
    if column.kind == "decimal":
        assert isinstance(value, float)
        return format(Decimal(repr(value)), "f")
    if column.kind == "enum_set":
        assert isinstance(value, frozenset)
        return LIST_SEPARATOR.join(sorted(value))
    if column.kind == "date":
        assert isinstance(value, date)
        return value.isoformat()
    return str(value)


# Unicode's control characters (category Cc) are exactly C0, DEL and C1: one regex scans a
# cell in C instead of a category look-up per character (a 5,000-row catalog has ~1 M).
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")


def _check_plain(column: Column, text: str) -> None:
    """Refuse formulas, padding and control characters before any type is considered."""
    numeric = column.kind in ("int", "decimal", "money")
    starts = ("=", "@") if numeric else FORMULA_STARTS
    if text.startswith(starts):
        raise CellError(
            "a plain value, not a formula (text may not start with " + " ".join(starts) + ")"
        )
    if text != text.strip():
        raise CellError(f"{column.constraint}, without leading or trailing spaces")
    if CONTROL_CHARACTERS.search(text):
        raise CellError(f"{column.constraint}, without control characters or line breaks")
    if len(text) > MAX_TEXT_CHARS:
        raise CellError(
            column.constraint if column.kind == "text" else f"at most {MAX_TEXT_CHARS} characters"
        )


def _in_bounds(column: Column, number: Decimal) -> bool:
    if column.minimum is not None and (
        number < column.minimum or (column.exclusive_minimum and number == column.minimum)
    ):
        return False
    return column.maximum is None or number <= column.maximum


def _parse_number(column: Column, text: str) -> int | float:
    pattern = _INT if column.kind == "int" else _DECIMAL
    if pattern.fullmatch(text) is None:
        raise CellError(column.constraint)
    number = Decimal(text)
    if not _in_bounds(column, number):
        raise CellError(column.constraint)
    return int(number) if column.kind == "int" else float(number)


def _parse_set(column: Column, text: str) -> frozenset[str]:
    items = text.split(LIST_SEPARATOR)
    if any(item not in column.allowed for item in items) or len(set(items)) != len(items):
        raise CellError(column.constraint + ", each at most once")
    return frozenset(items)


def _parse_date(column: Column, text: str) -> date:
    if _DATE.fullmatch(text) is None:
        raise CellError(column.constraint)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CellError(column.constraint) from None
