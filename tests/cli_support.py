"""Driving `procure` in tests: in-process through ``client.cli.main`` (the real entry point,
with its exit-code mapping) or as a subprocess where the process boundary is the point."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from catalog_files import SMALL

from client.cli import main

ROOT = Path(__file__).resolve().parents[1]
# BERT-Large on the small test catalog: a few designs, each solve well under a second.
SMALL_SCENARIO = ("--catalog", str(SMALL), "--workload", "bert-large", "--tokens", "2e10")


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *args: str) -> Result:
    """``procure ARGS`` in this process; stdout and stderr as the user would see them."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    code = done.value.code
    return Result(code if isinstance(code, int) else 1, out, err)


def run_process(*args: str, env: dict[str, str] | None = None) -> Result:
    """``procure ARGS`` as a child process, as a shell would run it."""
    done = subprocess.run(
        [sys.executable, "-m", "client.cli", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)
