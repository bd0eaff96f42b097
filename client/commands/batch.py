"""``procure batch SPEC --out DIR``: solve many scenarios against many vendor catalogs.

The same runner as the service's batch RPC (optimizer.batch); embedded on a local process
pool by default, on a Dask cluster with ``--scheduler``. Ctrl-C or SIGTERM stops after
committing the results so far and stopping the workers; ``--resume`` carries on.
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from client.options import data_dir, root_option, tenant
from optimizer.errors import InvalidInput

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from optimizer.batch import Engine
    from optimizer.batch.runner import BatchProgress, BatchSummary

# How often a run whose stderr is not a terminal prints a progress line.
DEFAULT_PROGRESS_INTERVAL_S = 30.0


@click.command("batch")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Directory for results/*.parquet, responses.jsonl, report.md and report.html.",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="tcp://HOST:PORT",
    help="Run on this Dask scheduler instead of a local process pool.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Local worker processes [default: one per CPU].",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue an interrupted batch, skipping scenarios already written.",
)
@click.option(
    "--allow-changed",
    is_flag=True,
    help="With --resume: when the spec or a catalog changed since DIR was written, rerun "
    "the changed scenarios and replace their rows instead of refusing.",
)
@click.option("--csv", "csv_copy", is_flag=True, help="Also write results.csv.")
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse the spec when any scenario fails validation (default: write those as "
    "error rows, run the rest, exit 3 with a summary by cause).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Ask a solve to stop after this many seconds.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@click.option(
    "--progress-interval",
    "progress_interval_s",
    type=click.FloatRange(min=0),
    default=DEFAULT_PROGRESS_INTERVAL_S,
    show_default=True,
    metavar="SECONDS",
    help="When stderr is not a terminal (nohup, cron, CI), print a progress line this often.",
)
@data_dir
@tenant
@click.pass_context
def batch(ctx: click.Context, /, **flags: Any) -> None:
    """Solve every scenario of SPEC (JSON, YAML or CSV; docs/batch.md) and write one result
    row per scenario to DIR, plus a per-vendor report. With --server (before the command)
    the scenarios are solved there, through BatchOptimize, into the same files."""
    with _sigterm_as_interrupt():
        try:
            _run(ctx, **flags)
        except KeyboardInterrupt as e:
            what = "terminated" if isinstance(e, Terminated) else "interrupted"
            click.echo(
                f"{what}; results so far are in {flags['out_dir']}; "
                "run again with --resume to finish",
                err=True,
            )
            raise click.Abort() from None


def _run(
    ctx: click.Context,
    spec: str,
    out_dir: str,
    scheduler: str | None,
    workers: int | None,
    resume: bool,
    allow_changed: bool,
    csv_copy: bool,
    strict: bool,
    timeout_s: float | None,
    quiet: bool,
    progress_interval_s: float,
    data_dir: str | None,
    tenant: str,
) -> None:
    from rich.console import Console

    from optimizer.batch import load_spec, make_engine, plan_batch, run_batch
    from optimizer.catalog.model import Catalog

    if allow_changed and not resume:
        raise click.UsageError("--allow-changed goes with --resume")
    resolve: Callable[[str], Catalog] | None = None
    new_engine: Callable[[], Engine]
    if root_option(ctx, "server"):
        from client.batch_remote import ServerEngine, remote_resolver
        from client.transport import remote_from

        for flag, value in (("--scheduler", scheduler), ("--workers", workers)):
            if value is not None:
                raise click.UsageError(f"{flag}: not with --server (the server has its workers)")
        if timeout_s is not None:
            raise click.UsageError("--timeout: not with --server (set solver.time_limit_s)")
        remote = remote_from(ctx)
        resolve = remote_resolver(remote)

        def new_engine() -> Engine:
            return ServerEngine(remote)
    else:

        def new_engine() -> Engine:
            return make_engine(scheduler, workers)

    console = Console(stderr=True)
    bar = _progress_bar(console) if not quiet and console.is_terminal else None
    heartbeat = Heartbeat(progress_interval_s) if not quiet and not console.is_terminal else None
    parsed = load_spec(spec)
    with bar if bar is not None else contextlib.nullcontext():
        planning = bar.add_task("planning", total=len(parsed.rows)) if bar else None

        def plan_progress(rows_done: int, rows_total: int) -> None:
            if bar is not None and planning is not None:
                bar.update(planning, completed=rows_done)
            if heartbeat is not None:
                heartbeat.tick(f"planning: {rows_done:,} of {rows_total:,} spec rows")

        try:
            plan = plan_batch(
                parsed,
                data_dir=data_dir,
                tenant=tenant,
                resolve=resolve,
                validate=True,
                progress=plan_progress,
            )
        finally:
            if bar is not None and planning is not None:
                bar.remove_task(planning)
        task = bar.add_task("solving", total=len(plan.scenarios)) if bar else None
        errors = 0

        def progress(step: BatchProgress) -> None:
            nonlocal errors
            errors += step.result.row["status"] == "ERROR"
            if bar is not None and task is not None:
                bar.update(task, completed=step.done)
            if heartbeat is not None:
                heartbeat.tick(
                    f"solving: {step.done:,} of {step.total:,} scenarios done "
                    f"({step.skipped:,} from earlier runs), {errors:,} errors"
                )

        with new_engine() as engine:
            summary = run_batch(
                plan,
                out_dir,
                engine=engine,
                resume=resume,
                allow_changed=allow_changed,
                csv=csv_copy,
                timeout_s=timeout_s,
                progress=progress,
                strict=strict,
            )
    if not quiet:
        _print_summary(summary)
    if summary.invalid is not None:
        msg = (
            summary.invalid.describe()
            + "\nthey were written as error rows and the rest ran; --strict refuses such a spec"
        )
        raise InvalidInput(msg)


class Heartbeat:
    """Progress as plain lines on stderr, at most one per ``interval_s`` (the first at once),
    for runs whose stderr is a log file rather than a terminal: they show life."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._last = -math.inf

    def tick(self, line: str) -> None:
        now = time.monotonic()
        if now - self._last >= self.interval_s:
            self._last = now
            stamp = datetime.now(UTC).strftime("%H:%M:%SZ")
            click.echo(f"{stamp} {line}", err=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the driver is so that it unwinds as Ctrl-C does: the buffered
    rows are committed, the workers stopped, and the user told to resume."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    # Once is enough: a second SIGTERM (a supervisor repeating itself) must not cut short
    # the commit and shutdown the first one started.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while the batch runs (main thread only; restored after)."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: leave signals to whoever owns them
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _progress_bar(console: Console) -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def _print_summary(s: BatchSummary) -> None:
    from optimizer.batch.runner import output_files

    files = output_files(s.out_dir)
    lines = [
        f"{s.written:,} scenarios solved ({s.errors:,} with errors), {s.skipped:,} already "
        f"written, {s.duplicates:,} duplicate rows dropped",
        f"{s.elapsed_s:,.1f} s on {s.workers} workers: {s.scenarios_per_s:,.2f} scenarios/s",
        f"results: {files['results']}/  responses: {files['responses']}",
    ]
    if s.replaced:
        lines.append(f"{s.replaced:,} rows of changed inputs replaced")
    for problem in s.repairs:
        lines.append(f"repaired: {problem}")
    if files["csv"].exists():
        lines.append(f"csv: {files['csv']}")
    if s.report_path is not None:
        from optimizer.reporting.batch import HTML_FILE

        page = s.out_dir / HTML_FILE
        lines.append(f"report: {s.report_path}  plot: {s.plot_path}  page: {page}")
    click.echo("\n".join(lines), file=sys.stdout)
