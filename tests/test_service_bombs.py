"""Decompression and parse bombs: a few bytes that would unfold into gigabytes are refused
from their metadata or cell counts, quickly, off the gRPC threads, without the server's
memory growing."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from optimizer.catalog.io import MAX_TABLE_CELLS, MAX_TABLE_COLUMNS, read_tables_from_bytes
from optimizer.service import rpc_status
from tests.service_support import Stubs, catalog_files, health_status, serving, upload_messages

MIB = 1024 * 1024


def parquet_bomb() -> bytes:
    """The issue's servers.parquet: 10,000 identical 50 KiB cells, dictionary + zstd (under
    1 KiB on disk, 500 MB of text once expanded)."""
    table = pa.table({"sku": pa.array(["x" * (50 * 1024)] * 10_000)})
    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd", use_dictionary=True)
    return out.getvalue()


def _peak_rss_bytes(pid: int) -> int:
    """The process's and its children's peak resident sizes (VmHWM), summed."""
    total = 0
    for proc in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) * 1024
    return total


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    for address in serving(tmp_path_factory.mktemp("bombs")):
        with grpc.insecure_channel(address) as channel:
            yield Stubs(channel)


def test_the_parquet_bomb_is_tiny() -> None:
    assert len(parquet_bomb()) < 1024


def test_the_parquet_bomb_is_refused_within_a_second_without_memory_growth(
    stubs: Stubs,
) -> None:
    files = {
        **{n.replace(".csv", ".parquet"): b"" for n in catalog_files()},
        "servers.parquet": parquet_bomb(),
    }
    files = {n: d for n, d in files.items() if d}
    before = _peak_rss_bytes(os.getpid())
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as e:
        stubs.catalogs.UploadCatalog(upload_messages(files), timeout=30)
    took_s = time.monotonic() - started
    grew = _peak_rss_bytes(os.getpid()) - before
    assert e.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "bytes of text unpacked" in (e.value.details() or "")
    violations = rpc_status.from_trailers(e.value.trailing_metadata()).violations  # type: ignore[attr-defined]
    assert "servers" in {v.field for v in violations}
    assert took_s < 1.0
    assert grew < 100 * MIB, f"peak RSS grew {grew / MIB:.0f} MiB"
    assert health_status(stubs) == "SERVING"


def test_a_csv_of_separators_is_refused_before_it_is_split() -> None:
    raw = read_tables_from_bytes({"servers.csv": b"," * (MAX_TABLE_CELLS + 1)})
    assert [p.expected for p in raw.problems] == [f"at most {MAX_TABLE_CELLS} cells"]


def test_a_parquet_file_with_too_many_columns_is_refused_from_its_footer() -> None:
    table = pa.table({f"c{i}": [1] for i in range(MAX_TABLE_COLUMNS + 1)})
    out = io.BytesIO()
    pq.write_table(table, out)
    raw = read_tables_from_bytes({"servers.parquet": out.getvalue()})
    assert [p.expected for p in raw.problems] == [f"at most {MAX_TABLE_COLUMNS} columns"]


def test_a_parquet_file_of_plain_huge_pages_is_refused_from_its_footer() -> None:
    table = pa.table({"sku": pa.array([f"{i:08d}" + "y" * 4096 for i in range(10_000)])})
    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd", use_dictionary=False)
    raw = read_tables_from_bytes({"servers.parquet": out.getvalue()})
    assert len(raw.problems) == 1 and "unpacked" in raw.problems[0].expected
