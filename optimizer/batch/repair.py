"""Check an output directory before more rows go into it, and put it right.

The Parquet parts are the record of what is committed; ``responses.jsonl`` and
``results.csv`` are side files whose byte ranges each part records in its metadata
(``responses_start``/``responses_end``, ``csv_start``/``csv_end``). ``repair`` reads every
part and checks that the ranges follow each other without a gap, that each side file still
holds every committed byte, and that ``responses.jsonl`` has one line per committed row. A
part that cannot be read (truncated, empty, not Parquet) or whose response lines are
missing is *quarantined*: moved to ``quarantine/`` under a name that says when, and its
scenarios are no longer written, so a resume runs them again. Rows of scenarios the caller
no longer wants (``keep``: an edited spec, a re-imported catalog) are dropped the same way.

Whenever anything was damaged or dropped, the directory is *compacted*: one new part holds
every surviving row, and ``responses.jsonl`` and ``results.csv`` are rewritten from the
surviving parts (the response lines copied from their recorded ranges, the CSV from the
rows), so that every file holds each committed scenario exactly once. The new files are
staged in ``.rewrite/`` and switched in after a ``COMMIT`` marker is synced: a crash before
the marker leaves the old files (the staging is discarded on the next open), a crash after
it is rolled forward on the next open.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

RESULTS_DIR = "results"
RESPONSES_FILE = "responses.jsonl"
CSV_FILE = "results.csv"
QUARANTINE_DIR = "quarantine"
STAGING_DIR = ".rewrite"
COMMIT_MARKER = "COMMIT"
# Part metadata keys: where each side file's lines of the part start and end (bytes).
RANGE_KEYS = {
    RESPONSES_FILE: (b"responses_start", b"responses_end"),
    CSV_FILE: (b"csv_start", b"csv_end"),
}


@dataclass
class RepairReport:
    """What ``repair`` found and did; empty when the directory was sound."""

    quarantined: list[Path] = field(default_factory=list)  # where damaged files went
    problems: list[str] = field(default_factory=list)  # one line per finding, for the user
    dropped: int = 0  # committed rows removed because their scenario is not kept
    rewritten: bool = False  # the directory was compacted

    @property
    def clean(self) -> bool:
        return not (self.quarantined or self.problems or self.dropped)


@dataclass(frozen=True)
class _Part:
    path: Path
    table: pa.Table
    ranges: dict[str, tuple[int | None, int]]  # side file -> (start or None, end)


def part_paths(out_dir: Path) -> list[Path]:
    return sorted((out_dir / RESULTS_DIR).glob("part-*.parquet"))


def part_seq(path: Path) -> int:
    return int(path.stem.split("-")[1])


def repair(
    out_dir: str | Path,
    schema: pa.Schema,
    *,
    keep: Collection[str] | None = None,
    csv_copy: bool = False,
) -> RepairReport:
    """Validate ``out_dir`` and make every file hold each committed scenario exactly once;
    with ``keep``, also drop rows whose scenario id is not in it. See the module docstring."""
    out = Path(out_dir)
    report = RepairReport()
    _finish_rewrite(out)
    (out / RESULTS_DIR).mkdir(parents=True, exist_ok=True)
    for tmp in (out / RESULTS_DIR).glob("*.tmp"):
        tmp.unlink()  # a flush that never committed
    parts = _read_parts(out, schema, report)
    sizes = {name: _size(out / name) for name in RANGE_KEYS}
    needs_rewrite = bool(report.quarantined)
    prev_end = dict.fromkeys(RANGE_KEYS, 0)
    wanted = set(keep) if keep is not None else None
    seen: set[str] = set()
    for part in parts:
        for name, (start, end) in part.ranges.items():
            if start is not None and start != prev_end[name]:
                report.problems.append(
                    f"{name}: bytes {prev_end[name]}..{start} belong to no part "
                    "(a part was deleted); rewriting it from the parts"
                )
                needs_rewrite = True
            prev_end[name] = end
        ids = part.table.column("scenario_id").to_pylist()
        if seen.intersection(ids) or len(set(ids)) != len(ids):
            report.problems.append(f"{part.path.name}: repeats scenarios of another part")
            needs_rewrite = True
        seen.update(ids)
        if wanted is not None and not wanted.issuperset(ids):
            needs_rewrite = True
    csv_exists = (out / CSV_FILE).exists()
    for name in RANGE_KEYS:
        if name == CSV_FILE and not csv_exists:
            continue
        if sizes[name] < prev_end[name]:
            report.problems.append(
                f"{name}: {sizes[name]} bytes, but the parts committed {prev_end[name]}"
                " (truncated); rewriting it from the parts"
            )
            needs_rewrite = True
    if parts and csv_copy and not csv_exists:
        needs_rewrite = True  # asked for a CSV copy: write the rows committed so far
    if not needs_rewrite and parts:
        lines = _count_lines(out / RESPONSES_FILE, prev_end[RESPONSES_FILE])
        rows = sum(p.table.num_rows for p in parts)
        if lines != rows:
            report.problems.append(
                f"{RESPONSES_FILE}: {lines} lines for {rows} committed rows; rewriting it"
            )
            needs_rewrite = True
    if needs_rewrite:
        _compact(out, parts, keep, csv_copy or csv_exists, report)
    else:
        for name, end in prev_end.items():  # text an interrupted flush appended
            if (out / name).exists() and sizes[name] > end:
                os.truncate(out / name, end)
    return report


def readable_ids(out_dir: str | Path) -> set[str]:
    """Scenario ids of the parts that can be read (a damaged part is repair's business)."""
    ids: set[str] = set()
    for path in part_paths(Path(out_dir)):
        try:
            ids.update(pq.read_table(path, columns=["scenario_id"]).column(0).to_pylist())
        except (pa.ArrowException, OSError, ValueError):
            continue
    return ids


def quarantine(out: Path, path: Path, report: RepairReport, reason: str) -> None:
    """Move ``path`` into ``out/quarantine`` (never deleted: the user may want it)."""
    qdir = out / QUARANTINE_DIR
    qdir.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = qdir / f"{stamp}-{path.name}"
    os.replace(path, target)
    report.quarantined.append(target)
    report.problems.append(f"{path.name}: {reason}; moved to {target}")


def _read_parts(out: Path, schema: pa.Schema, report: RepairReport) -> list[_Part]:
    parts: list[_Part] = []
    for path in part_paths(out):
        try:
            table = pq.read_table(path, schema=schema)
            meta = pq.read_schema(path).metadata or {}
        except (pa.ArrowException, OSError, ValueError) as e:
            quarantine(out, path, report, f"unreadable ({type(e).__name__})")
            continue
        ranges: dict[str, tuple[int | None, int]] = {}
        for name, (start_key, end_key) in RANGE_KEYS.items():
            if end_key in meta:
                start = int(meta[start_key]) if start_key in meta else None
                ranges[name] = (start, int(meta[end_key]))
        parts.append(_Part(path, table, ranges))
    return parts


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _count_lines(path: Path, end: int) -> int:
    count = 0
    with open(path, "rb") as f:
        left = end
        while left > 0:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            left -= len(chunk)
    return count


def _part_lines(out: Path, part: _Part, prev_end: int) -> list[bytes] | None:
    """The part's response lines from its recorded range, or None when they are not all
    there (truncated file, wrong count, or a line for another scenario)."""
    start, end = part.ranges.get(RESPONSES_FILE, (None, prev_end))
    start = prev_end if start is None else start
    path = out / RESPONSES_FILE
    if _size(path) < end or end < start:
        return None
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    ids = part.table.column("scenario_id").to_pylist()
    if len(lines) != len(ids):
        return None
    for line, sid in zip(lines, ids, strict=True):
        try:
            if json.loads(line).get("scenario_id") != sid:
                return None
        except (ValueError, AttributeError):
            return None
    return lines


def _compact(
    out: Path,
    parts: list[_Part],
    keep: Collection[str] | None,
    csv_copy: bool,
    report: RepairReport,
) -> None:
    """Stage one part and both side files holding every surviving row once; switch them in."""
    wanted = set(keep) if keep is not None else None
    tables: list[pa.Table] = []
    lines: list[bytes] = []
    seen: set[str] = set()
    prev_end = 0
    damaged_responses = False
    for part in parts:
        part_lines = _part_lines(out, part, prev_end)
        prev_end = part.ranges.get(RESPONSES_FILE, (None, prev_end))[1]
        if part_lines is None:
            damaged_responses = True
            quarantine(out, part.path, report, f"its lines in {RESPONSES_FILE} are damaged")
            continue
        ids = part.table.column("scenario_id").to_pylist()
        mask = []
        for sid, line in zip(ids, part_lines, strict=True):
            take = sid not in seen and (wanted is None or sid in wanted)
            report.dropped += sid not in seen and not take
            mask.append(take)
            if take:
                seen.add(sid)
                lines.append(line)
        tables.append(part.table.filter(pa.array(mask, type=pa.bool_())))
    if damaged_responses and (out / RESPONSES_FILE).exists():
        _keep_copy(out, out / RESPONSES_FILE, report)
    schema = parts[0].table.schema if parts else None
    rows = pa.concat_tables(tables) if tables else None
    stage = out / STAGING_DIR
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    seq = max((part_seq(p) for p in part_paths(out)), default=-1) + 1
    responses = b"".join(x + b"\n" for x in lines)
    _write_synced(stage / RESPONSES_FILE, responses)
    csv_text = b""
    if csv_copy:
        csv_text = _csv_bytes(rows.to_pylist() if rows is not None else [], schema)
        _write_synced(stage / CSV_FILE, csv_text)
    new_part = ""
    if rows is not None and rows.num_rows:
        new_part = f"part-{seq:06d}.parquet"
        meta = {
            b"responses_start": b"0",
            b"responses_end": str(len(responses)).encode(),
        }
        if csv_copy:
            meta |= {b"csv_start": b"0", b"csv_end": str(len(csv_text)).encode()}
        pq.write_table(rows.replace_schema_metadata(meta), stage / new_part)
        _fsync(stage / new_part)
    _write_synced(stage / COMMIT_MARKER, new_part.encode())
    _fsync_dir(stage)
    report.rewritten = True
    _finish_rewrite(out)


def _keep_copy(out: Path, path: Path, report: RepairReport) -> None:
    """Quarantine a copy of a damaged side file before it is rewritten."""
    qdir = out / QUARANTINE_DIR
    qdir.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = qdir / f"{stamp}-{path.name}"
    shutil.copyfile(path, target)
    report.quarantined.append(target)


def _finish_rewrite(out: Path) -> None:
    """Roll a staged rewrite forward (its marker was synced) or discard it (it was not)."""
    stage = out / STAGING_DIR
    if not stage.exists():
        return
    marker = stage / COMMIT_MARKER
    if not marker.exists():
        shutil.rmtree(stage)
        return
    new_part = marker.read_text(encoding="utf-8").strip()
    results = out / RESULTS_DIR
    results.mkdir(exist_ok=True)
    for old in part_paths(out):
        if old.name != new_part:
            old.unlink()
    if new_part and (stage / new_part).exists():
        os.replace(stage / new_part, results / new_part)
    for name in (RESPONSES_FILE, CSV_FILE):
        if (stage / name).exists():
            os.replace(stage / name, out / name)
    _fsync_dir(results)
    _fsync_dir(out)
    shutil.rmtree(stage)


def _csv_bytes(rows: list[dict[str, Any]], schema: pa.Schema | None) -> bytes:
    if schema is None:
        return b""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=schema.names, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync(path: Path) -> None:
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
