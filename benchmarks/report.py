"""Every benchmark reports twice: a markdown table on stdout and a JSON file for the record.

The JSON carries the machine it ran on, so a figure copied into docs/benchmarks.md can always
be traced to the hardware and package versions that produced it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

DEFAULT_OUT = Path("/tmp/procure-bench")
PACKAGES = ("ortools", "pulp", "highspy", "pandas", "numpy")
# Run sizes, smallest first: CI's smoke case, the quick suite, everything.
LEVELS = ("smallest", "quick", "full")


@dataclass
class Table:
    """A titled table whose rows are printed as markdown and stored as JSON records."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *values: Any) -> None:
        if len(values) != len(self.columns):
            msg = f"{self.title}: row has {len(values)} values for {len(self.columns)} columns"
            raise ValueError(msg)
        self.rows.append(values)

    def render(self) -> str:
        head = f"| {' | '.join(self.columns)} |"
        rule = "|" + "---|" * len(self.columns)
        body = [f"| {' | '.join(_cell(v) for v in row)} |" for row in self.rows]
        notes = [f"\n{n}" for n in self.notes]
        return "\n".join([f"### {self.title}", "", head, rule, *body, *notes, ""])

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):  # nothing measured
            return "-"
        return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None else str(value)


def machine() -> dict[str, Any]:
    """The hardware and software a run's figures belong to."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "nproc": os.cpu_count(),
        "cpu_model": cpu,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": versions,
        "load_average_1min": os.getloadavg()[0],
        "commit": _commit(),
    }


LOAD_NOTE = "Machine load when published:"


def load_note() -> str:
    """The load average (1, 5, 15 min) next to the number of cores, for a table's notes."""
    one, five, fifteen = os.getloadavg()
    return (
        f"{LOAD_NOTE} load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min) "
        f"on {os.cpu_count()} cores."
    )


def _commit() -> str:
    """The checked-out commit, marked "+changes" when the working tree differs from it."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=Path(__file__).resolve().parent.parent,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def publish(name: str, tables: list[Table], out: Path, params: dict[str, Any]) -> Path:
    """Print ``tables`` and write them, with the machine and the run's parameters, as JSON.

    Each table gains a note with the machine's load average when it is published: timings
    taken on a shared machine mean little without it.
    """
    for t in tables:
        if not any(n.startswith(LOAD_NOTE) for n in t.notes):
            t.notes.append(load_note())
        print(t.render(), flush=True)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    doc = {
        "benchmark": name,
        "params": params,
        "machine": machine(),
        "tables": [{"title": t.title, "rows": t.records(), "notes": t.notes} for t in tables],
    }
    path.write_text(json.dumps(doc, indent=2, default=str))
    return path


def module_main(run: Callable[[str, Path], list[Table]], description: str | None) -> None:
    """``python -m benchmarks.<module>``: parse the shared flags and run the benchmark."""
    args = parser(description).parse_args()
    run(args.level, args.out)


def parser(description: str | None) -> argparse.ArgumentParser:
    """The flags every benchmark module shares: the run size and where the JSON goes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--level",
        choices=LEVELS,
        default="quick",
        help="smallest (CI smoke), quick (default) or full",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"directory for the JSON results (default {DEFAULT_OUT})",
    )
    return p
