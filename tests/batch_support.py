"""Shared pieces of the batch tests: a tiny fast spec, finding a driver's pool workers, and
reading a shell-started Dask scheduler's address."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import psutil

# Two bundled catalogs, one small workload, a single switch: each solve takes well under a
# second, so many scenarios still finish quickly.
FAST_DEFAULTS: dict[str, Any] = {
    "top_k": 1,
    "workload": {"model": "bert-large", "training_tokens": 1e10},
    "allowed_topologies": ["single_switch"],
    "constraints": {"max_gpus": 32},
}


def fast_spec(targets_hours: list[float], catalogs: list[str] | None = None) -> dict[str, Any]:
    return {
        "catalogs": catalogs or ["infiniband-ndr", "roce-spectrum"],
        "defaults": FAST_DEFAULTS,
        "grid": {"constraints.target_training_hours": targets_hours},
    }


def write_spec(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def pool_workers(driver: psutil.Process) -> list[psutil.Process]:
    """The spawn-started processes of ``driver`` that run tasks (not its resource tracker)."""
    found = []
    for child in driver.children(recursive=True):
        try:
            cmd = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if "spawn_main" in cmd:
            found.append(child)
    return found


def alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def scheduler_address(info: Path, timeout_s: float = 60) -> str:
    """The address in ``dask scheduler --scheduler-file``'s file. The scheduler creates the file
    before it writes it: a test that read it as soon as it existed found it empty on a loaded
    CI box (a JSONDecodeError), so wait until it parses."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return str(json.loads(info.read_text(encoding="utf-8"))["address"])
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise
        time.sleep(0.1)
