"""Reading catalog files into text cells, and writing a Catalog back out.

Every format is reduced to text cells with the row numbers the user sees, so one validator
decides what each value means and nothing is coerced on the way in:

* CSV: decoded as strict UTF-8 (a BOM is tolerated) and tokenised with the standard ``csv``
  module, which, unlike ``pandas.read_csv``, reports ragged rows instead of padding them and
  knows the line each record starts on even when a quoted cell spans lines.
* XLSX: read with pandas (openpyxl) with formulas kept as text, so a formula is refused
  rather than replaced by whatever value Excel cached.
* Parquet: read with pyarrow, values converted to text by type (see ``_cell_text``).

Problems found while reading (bad bytes, oversize files, unknown files) travel in
``RawCatalog.problems`` so that validation reports them with everything else.

Every reader is bounded before it materialises anything: a file by MAX_FILE_BYTES, a workbook
by its unpacked size, a CSV by its cell count, a Parquet file by its row-group metadata and its
decoded text (dictionary pages are measured, not expanded), so a few compressed bytes cannot
unfold into gigabytes (MAX_TABLE_TEXT_BYTES, MAX_TABLE_CELLS).
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from optimizer.catalog.cells import CellError, Value, format_cell, parse_cell
from optimizer.catalog.findings import CATALOG, error
from optimizer.catalog.model import Catalog
from optimizer.catalog.records import record_values
from optimizer.catalog.schema import (
    FILE_TABLES,
    MAX_FILE_BYTES,
    MAX_ROWS_PER_TABLE,
    MAX_XLSX_UNCOMPRESSED_BYTES,
    METADATA,
    METADATA_HEADER,
    METADATA_KEYS,
    Column,
    columns_of,
)
from optimizer.errors import Finding, InvalidInput, NotFound

MAX_TABLE_COLUMNS = 64
"""Most columns a table file may have (every table has far fewer)."""
MAX_TABLE_CELLS = (MAX_ROWS_PER_TABLE + 1) * MAX_TABLE_COLUMNS
"""Most cells a table file may hold: what the row and column limits allow."""
MAX_TABLE_TEXT_BYTES = MAX_FILE_BYTES
"""Most text a table may decode to: no more than a CSV file may hold (a Parquet file's
compression and dictionaries must not make room for more)."""
_PARQUET_BATCH_ROWS = 512

FORMATS = ("csv", "xlsx", "parquet")
_SUFFIX = {"csv": ".csv", "parquet": ".parquet", "xlsx": ".xlsx"}
_UTF8 = "utf-8-sig"


@dataclass(frozen=True)
class RawRow:
    """One non-blank data row: its number as the user sees it and its cells as text."""

    number: int
    cells: tuple[str, ...]


@dataclass(frozen=True)
class RawTable:
    """One table as text. ``rows`` holds at most MAX_ROWS_PER_TABLE + 1 rows, so that
    validation can tell that the limit was exceeded without reading further."""

    name: str
    origin: str
    header_row: int
    header: tuple[str, ...]
    rows: tuple[RawRow, ...]


@dataclass(frozen=True)
class RawCatalog:
    """Text tables of one catalog, before validation.

    ``fmt`` is csv, xlsx or parquet, or "" when the files given do not form one catalog.
    """

    fmt: str
    tables: Mapping[str, RawTable]
    problems: tuple[Finding, ...] = ()


class _Unreadable(ValueError):
    """A file or cell cannot be turned into text; the message says what was expected."""


# --- reading ------------------------------------------------------------------------------------


def read_tables(path: str | Path) -> RawCatalog:
    """Read a catalog from a folder of ``<table>.csv`` or ``<table>.parquet`` files, or from one
    ``.xlsx`` workbook with a sheet per table. Other files in the folder are ignored.

    Raises NotFound if ``path`` does not exist and InvalidInput if it is neither a folder nor
    an ``.xlsx`` file; every problem with the contents is left for validation to report.
    """
    root = Path(path)
    if not root.exists():
        raise NotFound(f"catalog path {str(root)!r} does not exist")
    if root.is_dir():
        files = [
            f
            for f in sorted(root.iterdir())
            if f.is_file() and f.suffix in (".csv", ".parquet") and f.stem in FILE_TABLES
        ]
    elif root.suffix.lower() == ".xlsx":
        files = [root]
    else:
        raise InvalidInput(
            "expected a folder of CSV or Parquet table files or an .xlsx "
            f"workbook, got {root.name!r}",
            field="path",
        )
    return _read_named(
        {f.name: f.stat().st_size for f in files},
        lambda name: (root if root.is_file() else root / name).read_bytes(),
    )


def read_tables_from_bytes(files: Mapping[str, bytes]) -> RawCatalog:
    """Read a catalog from file contents keyed by file name (``servers.csv``,
    ``servers.parquet``, ... or a single ``<any>.xlsx``): the upload path. Unlike a folder,
    an upload may not carry other files."""
    return _read_named({name: len(data) for name, data in files.items()}, files.__getitem__)


def _read_named(sizes: Mapping[str, int], load: Callable[[str], bytes]) -> RawCatalog:
    """Classify files by name, refuse oversize ones before loading them, parse the rest."""
    problems: list[Finding] = []
    for name in sizes:
        if _table_of(name) is None:
            problems.append(
                error(
                    CATALOG,
                    None,
                    None,
                    name,
                    "table files named "
                    + ", ".join(f"{t}.csv" for t in FILE_TABLES)
                    + " (or .parquet), or one .xlsx workbook",
                )
            )
    named = sorted(n for n in sizes if _table_of(n) is not None)
    fmt = _format_of(named)
    if fmt == "":
        kinds = sorted({n.rpartition(".")[2].lower() for n in named})
        problems.append(
            error(
                CATALOG,
                None,
                None,
                ", ".join(kinds) or None,
                "table files of one format: CSV files, Parquet files, or one .xlsx workbook",
            )
        )
        return RawCatalog("", {}, tuple(problems))
    tables: dict[str, RawTable] = {}
    for name in named:
        try:
            if sizes[name] > MAX_FILE_BYTES:
                raise _TableUnreadable(
                    [
                        error(
                            _table_of(name) or CATALOG,
                            None,
                            None,
                            f"{sizes[name]} bytes",
                            f"a file of at most {MAX_FILE_BYTES} bytes",
                        )
                    ]
                )
            if fmt == "xlsx":
                tables.update(_read_xlsx(name, load(name), problems))
            else:
                table = _table_of(name) or ""
                read = _read_csv if fmt == "csv" else _read_parquet
                tables[table] = read(table, name, load(name))
        except _TableUnreadable as e:
            problems.extend(e.problems)
            if fmt == "xlsx":  # the whole workbook is unreadable: no sheet is "missing"
                fmt = ""
    return RawCatalog(fmt, tables, tuple(problems))


class _TableUnreadable(Exception):
    def __init__(self, problems: list[Finding]) -> None:
        self.problems = problems
        super().__init__(str(problems))


def _table_of(name: str) -> str | None:
    """The table a file name holds (``catalog`` for a workbook), or None if it is unknown."""
    stem, dot, suffix = name.rpartition(".")
    if dot and suffix.lower() == "xlsx" and stem:
        return CATALOG
    return stem if dot and suffix in ("csv", "parquet") and stem in FILE_TABLES else None


def _format_of(names: list[str]) -> str:
    """csv, parquet or xlsx if ``names`` are table files of one format, else ""."""
    suffixes = {n.rpartition(".")[2].lower() for n in names}
    if len(suffixes) != 1:
        return ""
    fmt = suffixes.pop()
    return "" if fmt == "xlsx" and len(names) != 1 else fmt


def _decode(table: str, data: bytes) -> str:
    try:
        return data.decode(_UTF8)
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        bad = data[e.start : e.end]
        raise _TableUnreadable([error(table, line, None, repr(bad), "UTF-8 text")]) from None


def _too_big(table: str, got: str, expected: str) -> _TableUnreadable:
    return _TableUnreadable([error(table, None, None, got, expected)])


def _read_csv(table: str, name: str, data: bytes) -> RawTable:
    # An upper bound on the cells (separators + line ends), counted on the bytes before
    # decoding: a file of commas must not become millions of Python strings.
    cell_bound = data.count(b",") + data.count(b"\n") + 1
    if cell_bound > MAX_TABLE_CELLS:
        raise _too_big(table, f"about {cell_bound} cells", f"at most {MAX_TABLE_CELLS} cells")
    text = _decode(table, data)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[RawRow] = []
    problems: list[Finding] = []
    try:
        line = 0
        for cells in reader:
            start, line = line + 1, reader.line_num
            if any(cells):
                records.append(RawRow(start, tuple(cells)))
            if len(records) > MAX_ROWS_PER_TABLE + 1:
                break
    except csv.Error as e:
        problems.append(error(table, reader.line_num, None, None, f"well-formed CSV ({e})"))
    if not records:
        problems.append(error(table, 1, None, None, "a header row naming the columns"))
    if problems:
        raise _TableUnreadable(problems)
    header, rows = records[0], records[1:]
    width = len(header.cells)
    for row in rows:
        if len(row.cells) != width:
            problems.append(
                error(
                    table,
                    row.number,
                    None,
                    f"{len(row.cells)} fields",
                    f"{width} fields, one per header column",
                )
            )
    if problems:
        raise _TableUnreadable(problems)
    return RawTable(table, name, header.number, header.cells, tuple(rows))


def _read_parquet(table: str, name: str, data: bytes) -> RawTable:
    try:
        parquet = pq.ParquetFile(pa.BufferReader(data))
        _check_parquet_metadata(table, parquet)
        texts = [
            f.name
            for f in parquet.schema_arrow
            if pa.types.is_string(f.type)
            or pa.types.is_large_string(f.type)
            or pa.types.is_binary(f.type)
            or pa.types.is_large_binary(f.type)
        ]
        # Text columns stay dictionary-encoded until measured: a repeated huge cell is one
        # dictionary entry, so its expanded size is known without expanding it.
        parquet = pq.ParquetFile(pa.BufferReader(data), read_dictionary=texts)
        header = tuple(str(n) for n in parquet.schema_arrow.names)
        columns: list[list[object]] = [[] for _ in header]
        decoded = 0
        for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH_ROWS):
            decoded += sum(_text_bytes(c) for c in batch.columns)
            if decoded > MAX_TABLE_TEXT_BYTES:
                break
            for out, column in zip(columns, batch.columns, strict=True):
                out.extend(column.to_pylist())
            if len(columns[0]) > MAX_ROWS_PER_TABLE:
                break
    except _TableUnreadable:
        raise
    except Exception as e:  # any failure to decode is a bad file, not a crash
        raise _TableUnreadable(
            [error(table, None, None, type(e).__name__, "a readable Parquet file")]
        ) from None
    if decoded > MAX_TABLE_TEXT_BYTES:
        raise _too_big(
            table,
            f"more than {MAX_TABLE_TEXT_BYTES} bytes of text unpacked",
            f"at most {MAX_TABLE_TEXT_BYTES} bytes of text, as a CSV file",
        )
    values = list(zip(*columns, strict=True))[: MAX_ROWS_PER_TABLE + 1]
    # Parquet has no header line; data row i (1-based) is numbered i + 1 like CSV and XLSX.
    rows = _text_rows(table, header, values, first_number=2)
    return RawTable(table, name, 1, header, rows)


def _check_parquet_metadata(table: str, parquet: pq.ParquetFile) -> None:
    """Refuse from the footer alone: too many columns, or column chunks that unpack (before
    dictionary expansion) to more than twice the text a table may hold."""
    meta = parquet.metadata
    if meta.num_columns > MAX_TABLE_COLUMNS:
        raise _too_big(table, f"{meta.num_columns} columns", f"at most {MAX_TABLE_COLUMNS} columns")
    unpacked = 0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        unpacked += sum(group.column(j).total_uncompressed_size for j in range(group.num_columns))
    if unpacked > 2 * MAX_TABLE_TEXT_BYTES:
        raise _too_big(
            table,
            f"{unpacked} bytes unpacked",
            f"at most {2 * MAX_TABLE_TEXT_BYTES} bytes unpacked",
        )


def _text_bytes(column: pa.Array) -> int:
    """The bytes ``column`` holds once expanded; a dictionary column is measured through its
    indices, without expanding it. Non-text values count 8 bytes each."""
    if pa.types.is_dictionary(column.type):
        lengths = pc.binary_length(column.dictionary)
        return int(pc.sum(pc.take(lengths, column.indices)).as_py() or 0)
    if (
        pa.types.is_string(column.type)
        or pa.types.is_large_string(column.type)
        or (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type))
    ):
        return int(pc.sum(pc.binary_length(column)).as_py() or 0)
    return 8 * len(column)


def _read_xlsx(name: str, data: bytes, problems: list[Finding]) -> dict[str, RawTable]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            unpacked = sum(i.file_size for i in z.infolist())
    except Exception:  # any failure to open the archive is a bad file, not a crash
        raise _TableUnreadable(
            [error(CATALOG, None, None, name, "an .xlsx workbook (a zip archive)")]
        ) from None
    if unpacked > MAX_XLSX_UNCOMPRESSED_BYTES:
        raise _TableUnreadable(
            [
                error(
                    CATALOG,
                    None,
                    None,
                    f"{unpacked} bytes unpacked",
                    f"at most {MAX_XLSX_UNCOMPRESSED_BYTES} bytes unpacked",
                )
            ]
        )
    try:
        sheets = pd.read_excel(
            io.BytesIO(data),
            sheet_name=None,
            header=None,
            dtype=object,
            keep_default_na=False,
            na_filter=False,
            engine="openpyxl",
            engine_kwargs={"data_only": False},
        )
    except Exception as e:  # any failure to decode is a bad file, not a crash
        raise _TableUnreadable(
            [error(CATALOG, None, None, type(e).__name__, "a readable .xlsx workbook")]
        ) from None
    tables = {}
    for sheet, frame in sheets.items():
        if sheet not in FILE_TABLES:
            problems.append(
                error(CATALOG, None, None, sheet, "sheets named " + ", ".join(FILE_TABLES))
            )
            continue
        try:
            # Sheet row r is frame row r - 1: the header sits on row 1.
            cells = _text_rows(
                sheet, (), list(frame.itertuples(index=False, name=None)), first_number=1
            )
        except _TableUnreadable as e:
            problems.extend(e.problems)
            continue
        if not cells:
            problems.append(error(sheet, 1, None, None, "a header row naming the columns"))
            continue
        header, rows = cells[0], cells[1:]
        tables[sheet] = RawTable(sheet, f"{name}[{sheet}]", header.number, header.cells, rows)
    return tables


def _text_rows(
    table: str, header: tuple[str, ...], values: list[tuple[object, ...]], first_number: int
) -> tuple[RawRow, ...]:
    rows: list[RawRow] = []
    problems: list[Finding] = []
    for i, row in enumerate(values):
        number = first_number + i
        cells = []
        for j, v in enumerate(row):
            try:
                cells.append(_cell_text(v))
            except _Unreadable as e:
                column = header[j] if j < len(header) else None
                problems.append(error(table, number, column, repr(v), str(e)))
        if any(cells):
            rows.append(RawRow(number, tuple(cells)))
    if problems:
        raise _TableUnreadable(problems)
    return tuple(rows[: MAX_ROWS_PER_TABLE + 2])


def _cell_text(v: object) -> str:
    """The text of a typed spreadsheet or Parquet value, written the way the CSV would hold it.

    Integral numbers print without a decimal point, other floats by their shortest exact
    decimal (so 19.99 stays 19.99 and 0.1 + 0.2 shows every digit and fails a price check),
    NaN as "NaN" (refused later), booleans as true/false, midnight timestamps as dates.
    """
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, float):
        return (
            "NaN" if math.isnan(v) else str(v) if math.isinf(v) else format(Decimal(repr(v)), "f")
        )
    if isinstance(v, Decimal):
        return format(v, "f")
    if isinstance(v, datetime):
        return (
            v.date().isoformat()
            if v.time() == datetime.min.time() and v.tzinfo is None
            else v.isoformat()
        )
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise _Unreadable("UTF-8 text") from None
    raise _Unreadable("a single text, number, boolean or date value")


# --- writing ------------------------------------------------------------------------------------


def _written(table: str, column: Column, value: Value) -> str:
    """The text of ``value``, refused unless it reads back as the same value.

    A Catalog built by validation always passes; one built in code might hold text a
    spreadsheet would evaluate, or a value the format cannot carry.
    """
    text = format_cell(column, value)
    try:
        same = parse_cell(column, text) == value
    except CellError as e:
        raise InvalidInput(
            f"{table}: {text!r} cannot be written; expected {e.expected}", field=column.name
        ) from None
    if not same:
        raise InvalidInput(f"{table}: {value!r} would not read back exactly", field=column.name)
    return text


def catalog_rows(catalog: Catalog) -> dict[str, tuple[tuple[str, ...], list[tuple[str, ...]]]]:
    """Header and text rows of every table of ``catalog`` in canonical form."""
    tables: dict[str, tuple[tuple[str, ...], list[tuple[str, ...]]]] = {}
    meta = record_values(METADATA, catalog.meta)
    tables[METADATA] = (
        METADATA_HEADER,
        [
            (k.name, _written(METADATA, k, meta[k.field]))
            for k in METADATA_KEYS
            if meta[k.field] is not None
        ],
    )
    for table in FILE_TABLES:
        if table == METADATA or (
            table in ("price_breaks", "cloud_offers") and not getattr(catalog, table)
        ):
            continue
        columns = columns_of(table)
        rows = []
        for record in getattr(catalog, table):
            values = record_values(table, record)
            rows.append(tuple(_written(table, c, values[c.field]) for c in columns))
        tables[table] = (tuple(c.name for c in columns), rows)
    return tables


def write_catalog(catalog: Catalog, dest: str | Path, fmt: str = "csv") -> Path:
    """Write ``catalog`` so that ``read_tables`` + ``validate`` give back an equal Catalog.

    csv and parquet write one file per table into the folder ``dest`` (created if needed);
    xlsx writes the workbook ``dest`` if it ends in ``.xlsx``, else ``dest/catalog.xlsx``.
    Every cell is written as text. No cell can start a formula: validation refuses text
    that starts with = + - @, and a Catalog only exists once validated.
    Returns the folder or workbook written.
    """
    if fmt not in FORMATS:
        raise InvalidInput(
            f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}", field="format"
        )
    target = Path(dest)
    frames = {
        t: pd.DataFrame(rows, columns=list(header), dtype=object)
        for t, (header, rows) in catalog_rows(catalog).items()
    }
    if fmt == "xlsx":
        book = target if target.suffix.lower() == ".xlsx" else target / "catalog.xlsx"
        book.parent.mkdir(parents=True, exist_ok=True)
        with pd.ExcelWriter(book, engine="openpyxl") as writer:
            for table, frame in frames.items():
                frame.to_excel(writer, sheet_name=table, index=False)
        return book
    target.mkdir(parents=True, exist_ok=True)
    for table, frame in frames.items():
        out = target / f"{table}{_SUFFIX[fmt]}"
        if fmt == "csv":
            frame.to_csv(out, index=False, encoding="utf-8", lineterminator="\n")
        else:
            schema = pa.schema([(c, pa.string()) for c in frame.columns])
            pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), out)
    return target
