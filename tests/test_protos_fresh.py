"""The committed stubs in optimizer/_pb/ are exactly what protos/ generates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "optimizer" / "_pb"


def _generate(out: Path) -> list[Path]:
    """Run the generator as CI would, in its own process (protoc inside a process that has
    already loaded grpc and protobuf can abort)."""
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_protos.py"), str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return [p for p in out.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def test_regenerated_stubs_match_the_committed_ones(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    generated = {p.relative_to(tmp_path) for p in _generate(tmp_path)}
    committed = {
        p.relative_to(COMMITTED)
        for p in COMMITTED.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert generated == committed
    stale = [
        str(rel)
        for rel in sorted(generated)
        if (tmp_path / rel).read_bytes() != (COMMITTED / rel).read_bytes()
    ]
    assert stale == [], f"run scripts/gen_protos.py; stale: {stale}"


def test_every_service_has_its_grpc_stub(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    names = {p.name for p in _generate(tmp_path)}
    assert {"catalog_pb2_grpc.py", "service_pb2_grpc.py"} <= names
    assert "estimate_pb2_grpc.py" not in names  # messages only: no empty stub module
