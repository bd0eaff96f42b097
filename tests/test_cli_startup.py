"""``procure --help`` and ``--version`` answer without loading the heavy libraries: those are
imported by the commands that use them (benchmarks/cli_startup.py times the result)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Top-level packages that cost tenths of a second or more to import, or start threads.
HEAVY = (
    "pandas",
    "pyarrow",
    "numpy",
    "matplotlib",
    "ortools",
    "pulp",
    "highspy",
    "grpc",
    "dask",
    "distributed",
    "openpyxl",
    "yaml",
    "rich",
)

# Runs the real entry point in a fresh interpreter and prints the top-level modules it loaded.
PROBE = """
import json, sys
from client.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def loaded_packages(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "args",
    [("--help",), ("--version",), ("optimize", "--help"), ("sweep", "--help"), ("batch", "--help")],
)
def test_help_and_version_load_no_heavy_library(args: tuple[str, ...]) -> None:
    assert loaded_packages(*args) & set(HEAVY) == set()


def test_the_probe_sees_a_heavy_library_a_command_loads() -> None:
    """The check above can fail: a command that renders a table does load rich."""
    assert "rich" in loaded_packages("workloads")
