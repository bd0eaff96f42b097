"""Incremental, exactly-once result files of a batch, and reading them back.

Layout of an output directory::

    results/part-000000.parquet ...   one file per flush; the Parquet dataset of result rows
    responses.jsonl                   one line per scenario: request, status, full response
    results.csv                       the same rows as CSV (only when asked for)

A flush first appends the buffered lines to ``responses.jsonl`` (and ``results.csv``) and
syncs them, then writes the Parquet part under a temporary name and renames it into place.
The rename is the commit: each part records in its metadata the byte range its lines occupy
in each text file. Opening a directory again runs ``repair.repair``: it removes what a crash
left uncommitted (temporary parts, text past the last recorded offset), quarantines damaged
parts and rewrites the text files from the committed parts when they disagree, so a
scenario is in all files exactly once or in none, and ``--resume`` skips exactly the
committed ids.
"""

from __future__ import annotations

import csv
import io
import os
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from optimizer.batch.repair import (
    CSV_FILE,
    RANGE_KEYS,
    RESPONSES_FILE,
    RESULTS_DIR,
    RepairReport,
    part_paths,
    part_seq,
    repair,
)
from optimizer.batch.tasks import TaskResult

__all__ = ["CSV_FILE", "RESPONSES_FILE", "RESULTS_DIR", "ROW_SCHEMA", "ResultWriter"]

_S, _F, _I = pa.string(), pa.float64(), pa.int32()
ROW_SCHEMA = pa.schema(
    [
        ("scenario_id", _S),
        ("comparison_key", _S),
        ("catalog", _S),
        ("catalog_id", _S),
        ("catalog_name", _S),
        ("vendor", _S),
        ("objective", _S),
        ("workload_key", _S),
        ("workload_model", _S),
        ("training_tokens", _F),
        ("budget_usd", _F),
        ("target_training_hours", _F),
        ("request_id", _S),
        ("status", _S),
        ("error", _S),
        ("error_code", _S),
        ("designs", _I),
        ("gpus", _I),
        ("nodes", _I),
        ("server_sku", _S),
        ("nic_sku", _S),
        ("fabric", _S),
        ("topology", _S),
        ("oversubscription", _F),
        ("capex_usd", _F),
        ("training_time_hours", _F),
        ("power_kw", _F),
        # issue 17 (tco): rank 1's lifetime cost and its terms (optimizer.rows.TCO_COLUMNS)
        ("tco_usd", _F),
        ("tco_energy_usd", _F),
        ("tco_support_usd", _F),
        ("tco_space_usd", _F),
        ("tco_depreciation_usd_per_year", _F),
        # issue 17 (facility): rank 1's floor positions, cooling and fullest rack
        # (optimizer.rows.FACILITY_COLUMNS)
        ("floor_positions", _I),
        ("cooling", _S),
        ("rack_kw", _F),
        ("solve_time_s", _F),
        ("gap", _F),
        ("diagnosis", _S),
    ]
)
# Measurements of this run rather than results of the scenario: excluded when comparing runs.
TIMING_COLUMNS = ("solve_time_s",)


def _parts(out_dir: Path) -> list[Path]:
    return part_paths(out_dir)


def has_results(out_dir: str | Path) -> bool:
    return bool(_parts(Path(out_dir)))


def read_table(out_dir: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Every committed row of ``out_dir`` as Arrow (empty, with the row schema, when none)."""
    parts = _parts(Path(out_dir))
    tables = [pq.read_table(p, columns=columns, schema=ROW_SCHEMA) for p in parts]
    if not tables:
        empty = ROW_SCHEMA.empty_table()
        return empty.select(columns) if columns else empty
    return pa.concat_tables(tables)


def read_results(out_dir: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """Every committed row of ``out_dir`` as a DataFrame."""
    frame: pd.DataFrame = read_table(out_dir, columns).to_pandas()
    return frame


class ResultWriter:
    """Buffers result rows and commits them every ``flush_rows`` rows or ``flush_s`` seconds.

    ``add`` ignores a scenario id already committed or buffered, so a row is written once
    even if an engine or a resumed run produces it again. Opening repairs the directory
    (``repair.repair``; with ``keep``, rows of other scenarios are dropped) and keeps what it
    found in ``repaired``.
    """

    def __init__(
        self,
        out_dir: str | Path,
        *,
        csv_copy: bool = False,
        flush_rows: int = 200,
        flush_s: float = 10.0,
        keep: Collection[str] | None = None,
    ) -> None:
        self.out_dir = Path(out_dir)
        (self.out_dir / RESULTS_DIR).mkdir(parents=True, exist_ok=True)
        self.repaired: RepairReport = repair(self.out_dir, ROW_SCHEMA, keep=keep, csv_copy=csv_copy)
        # Once a directory has a CSV copy it keeps one, or its offsets would stop matching.
        self.csv_copy = csv_copy or (self.out_dir / CSV_FILE).exists()
        self.flush_rows, self.flush_s = flush_rows, flush_s
        self.written: set[str] = set(
            read_table(self.out_dir, ["scenario_id"]).column("scenario_id").to_pylist()
        )
        self._rows: list[dict[str, Any]] = []
        self._lines: list[str] = []
        self._buffered: set[str] = set()
        self._since = time.monotonic()

    def add(self, result: TaskResult) -> bool:
        """Buffer ``result``; False when its scenario is already written."""
        sid = result.scenario_id
        if sid in self.written or sid in self._buffered:
            return False
        self._rows.append(result.row)
        self._lines.append(result.response_json)
        self._buffered.add(sid)
        if len(self._rows) >= self.flush_rows or time.monotonic() - self._since >= self.flush_s:
            self.flush()
        return True

    def flush(self) -> None:
        """Commit the buffered rows (no-op when empty)."""
        self._since = time.monotonic()
        if not self._rows:
            return
        offsets: dict[bytes, str] = {}
        texts = {RESPONSES_FILE: "".join(f"{x}\n" for x in self._lines)}
        if self.csv_copy:
            texts[CSV_FILE] = _csv_text(self._rows, self.out_dir)
        for name, text in texts.items():
            path = self.out_dir / name
            start_key, end_key = RANGE_KEYS[name]
            offsets[start_key] = str(path.stat().st_size if path.exists() else 0)
            offsets[end_key] = str(_append(path, text))
        table = pa.Table.from_pylist(self._rows, schema=ROW_SCHEMA)
        table = table.replace_schema_metadata({k: v.encode() for k, v in offsets.items()})
        parts = _parts(self.out_dir)
        seq = part_seq(parts[-1]) + 1 if parts else 0
        final = self.out_dir / RESULTS_DIR / f"part-{seq:06d}.parquet"
        tmp = final.with_suffix(".parquet.tmp")
        pq.write_table(table, tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, final)
        _fsync_dir(final.parent)
        self.written |= self._buffered
        self._rows, self._lines, self._buffered = [], [], set()


def _append(path: Path, text: str) -> int:
    """Append and sync ``text``; the file's size afterwards (the new committed offset)."""
    with open(path, "ab") as f:
        f.write(text.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
        return f.tell()


def _csv_text(rows: list[dict[str, Any]], out_dir: Path) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=ROW_SCHEMA.names, lineterminator="\n")
    path = out_dir / CSV_FILE
    if not path.exists() or path.stat().st_size == 0:
        writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
