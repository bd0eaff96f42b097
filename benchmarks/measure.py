"""Wall time, peak memory and growth exponents, measured the same way for every benchmark.

Wall time is what a user waits; CPU time (user + system) is what the call itself costs, and is
the figure to compare on a shared machine, where other processes stretch the wall time.
Each measured call runs in a forked child process: it starts with cold caches (the estimator's
and the planner's caches are per process), and its peak resident memory is its own (a forked
child's high-water mark starts at the parent's resident size, which is subtracted). The
child's result comes back pickled; an exception in the child is re-raised in the parent.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import resource
import subprocess
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024


@dataclass(frozen=True)
class Measured:
    value: Any
    wall_s: float
    cpu_s: float  # user + system time of the call: robust to other processes on the machine
    peak_rss_growth_mib: float  # above the resident size the call started with


class ChildFailed(RuntimeError):
    """The measured call raised in its child process; the message holds its traceback."""


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE_BYTES


def _child(
    conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...], memory_limit_mib: int | None
) -> None:
    try:
        if memory_limit_mib is not None:
            limit = memory_limit_mib * MIB
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        start_rss = _resident_bytes()
        start, start_cpu = time.perf_counter(), time.process_time()
        value = fn(*args)
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
        conn.send(("ok", Measured(value, wall, cpu, max(0, peak - start_rss) / MIB)))
    except Exception:
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def isolated(
    fn: Callable[..., Any],
    *args: Any,
    timeout_s: float | None = None,
    memory_limit_mib: int | None = None,
) -> Measured:
    """``fn(*args)`` in a fresh forked process: its wall time, peak memory growth and value.

    ``timeout_s`` kills the child and raises TimeoutError once exceeded (brute force budgets);
    ``memory_limit_mib`` caps its address space, so a runaway call fails with MemoryError
    (ChildFailed here) instead of drawing the machine into the kernel's out-of-memory killer.
    """
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args, memory_limit_mib))
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout_s):
            proc.kill()
            msg = f"{getattr(fn, '__name__', fn)} exceeded {timeout_s} s"
            raise TimeoutError(msg)
        try:
            kind, payload = parent.recv()
        except EOFError:
            kind, payload = "error", "the child died without a result"
    finally:
        proc.join()
        parent.close()
    if kind == "error" and proc.exitcode:
        payload += f" (exit code {proc.exitcode}; -9 is a kill, e.g. out of memory)"
    if kind == "error":
        raise ChildFailed(payload)
    return payload


def fit_exponent(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) on log(x): y ~ c * x**slope (needs two distinct x)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len({x for x, _ in pts}) < 2:
        return math.nan
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    return sxy / sxx


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    wall_s: float
    cpu_s: float  # the child process's user + system time


def run_command(argv: list[str], *, timeout_s: float | None = None) -> Ran:
    """Run ``argv`` from the repository root, as a user would, timing it end to end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Ran(done.returncode, done.stdout + done.stderr, wall, cpu)
