"""Nothing acknowledged is lost and nothing partial is visible when a writer is SIGKILLed.

A child process imports catalogs in a loop and writes each id to a pipe only after ``put``
returned (after COMMIT). The child is a fresh interpreter, never a bare fork of the pytest
worker: that worker may still run threads from earlier tests (gRPC's among them), and a fork
inherits whatever lock they held, which can hang the child before its first commit
(reliability.md B1). The parent kills it at a random moment, many times, and
after each kill checks the database (shared/reliability.md F1, F2). Power loss is not
simulated: that needs a VM or dm-log-writes, so durability across an OS crash is untested here.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from catalog_samples import sample_catalog

from optimizer.catalog.canonical import catalog_from_canonical, content_hash, hash_canonical
from optimizer.catalog.store import DB_FILENAME, CatalogStore

TENANT = "crash"
ITERATIONS = 50
# Big enough (about 0.3 MB canonical) that a kill often lands inside a transaction.
LINKS_PER_CATALOG = 1500


def _writer(data_dir: Path, base: int, acks: int) -> None:
    """The child: import catalogs forever, writing each id to ``acks`` only after COMMIT."""
    store = CatalogStore(data_dir)
    os.write(acks, b"ready\n")
    for n in range(base, base + 1_000_000):
        info = store.put(
            sample_catalog(f"crash-{n % 3}", variant=n, links=LINKS_PER_CATALOG), tenant=TENANT
        )
        os.write(acks, f"ack {info.id}\n".encode())


def _run_and_kill(data_dir: Path, base: int, rnd: random.Random) -> list[str]:
    """Start a writer, SIGKILL it at a random moment; the ids it acknowledged."""
    child = subprocess.Popen(
        [sys.executable, __file__, str(data_dir), str(base)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    with child.stdout as acks:
        assert acks.readline() == "ready\n"
        time.sleep(rnd.uniform(0.0, 0.3))
        child.kill()
        assert child.wait(30) == -signal.SIGKILL
        return [line.split()[1] for line in acks.read().splitlines()]


def _check_store(data_dir: Path, acknowledged: set[str], checked: set[str]) -> None:
    """Integrity, no lost ack, no partial version; decodes only versions not yet ``checked``."""
    conn = sqlite3.connect(data_dir / DB_FILENAME)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT id, name, version, row_count, canonical FROM catalog_versions WHERE tenant = ?",
            (TENANT,),
        ).fetchall()
    finally:
        conn.close()
    versions: dict[str, list[int]] = {}
    for cid, name, version, row_count, canonical in rows:
        # Every visible version is complete: its stored bytes still hash to its id.
        assert hash_canonical(canonical) == cid
        if cid not in checked:
            catalog = catalog_from_canonical(bytes(canonical))
            assert len(catalog.links) == LINKS_PER_CATALOG
            assert row_count == LINKS_PER_CATALOG + 4
            checked.add(cid)
        versions.setdefault(name, []).append(version)
    assert acknowledged <= {r[0] for r in rows}, "an acknowledged version was lost"
    for name, numbers in versions.items():  # no half-written version left a gap
        assert sorted(numbers) == list(range(1, len(numbers) + 1)), name


@pytest.mark.slow
def test_sigkilled_writer_never_loses_an_ack_or_leaves_a_partial_version(tmp_path: Path) -> None:
    rnd = random.Random(20261130)
    acknowledged: set[str] = set()
    checked: set[str] = set()
    for iteration in range(ITERATIONS):
        acks = _run_and_kill(tmp_path, iteration * 1_000_000, rnd)
        acknowledged |= set(acks)
        _check_store(tmp_path, acknowledged, checked)
    with CatalogStore(tmp_path) as store:  # the store itself still reads and writes
        for cid in sorted(acknowledged)[:5]:
            assert content_hash(store.get(cid, tenant=TENANT)) == cid
        assert store.put(sample_catalog("after"), tenant=TENANT).version == 1
    assert acknowledged, "the writer never committed anything: the test exercised nothing"


if __name__ == "__main__":  # the writer child started by _run_and_kill
    _writer(Path(sys.argv[1]), int(sys.argv[2]), sys.stdout.fileno())
