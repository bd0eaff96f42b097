"""``procure batch SPEC --out DIR``: solve many scenarios against many vendor catalogs.

The same runner as the service's batch RPC (optimizer.batch); embedded on a local process
pool by default, on a Dask cluster with ``--scheduler``. Ctrl-C stops after committing the
results so far; ``--resume`` carries on.
"""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from client.options import data_dir, tenant
from optimizer.batch.runner import BatchProgress, BatchSummary, output_files
from optimizer.reporting.batch import HTML_FILE


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
@click.option("--csv", "csv_copy", is_flag=True, help="Also write results.csv.")
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Ask a solve to stop after this many seconds.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
@data_dir
@tenant
def batch(
    spec: str,
    out_dir: str,
    scheduler: str | None,
    workers: int | None,
    resume: bool,
    csv_copy: bool,
    timeout_s: float | None,
    quiet: bool,
    data_dir: str | None,
    tenant: str,
) -> None:
    """Solve every scenario of SPEC (JSON, YAML or CSV; docs/batch.md) and write one result
    row per scenario to DIR, plus a per-vendor report."""
    from optimizer.batch import load_spec, make_engine, plan_batch, run_batch

    plan = plan_batch(load_spec(spec), data_dir=data_dir, tenant=tenant)
    console = Console(stderr=True)
    bar = _progress_bar(console) if not quiet and console.is_terminal else None
    task = bar.add_task("solving", total=len(plan.scenarios)) if bar else None

    def progress(step: BatchProgress) -> None:
        if bar is not None and task is not None:
            bar.update(task, completed=step.done)

    with make_engine(scheduler, workers) as engine:
        try:
            if bar is not None:
                bar.start()
            summary = run_batch(
                plan,
                out_dir,
                engine=engine,
                resume=resume,
                csv=csv_copy,
                timeout_s=timeout_s,
                progress=progress,
            )
        except KeyboardInterrupt:
            click.echo(
                f"interrupted; results so far are in {out_dir}; run again with --resume to finish",
                err=True,
            )
            raise click.Abort() from None
        finally:
            if bar is not None:
                bar.stop()
    if not quiet:
        _print_summary(summary)


def _progress_bar(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def _print_summary(s: BatchSummary) -> None:
    files = output_files(s.out_dir)
    lines = [
        f"{s.written:,} scenarios solved ({s.errors:,} with errors), {s.skipped:,} already "
        f"written, {s.duplicates:,} duplicate rows dropped",
        f"{s.elapsed_s:,.1f} s on {s.workers} workers: {s.scenarios_per_s:,.2f} scenarios/s",
        f"results: {files['results']}/  responses: {files['responses']}",
    ]
    if files["csv"].exists():
        lines.append(f"csv: {files['csv']}")
    if s.report_path is not None:
        lines.append(f"report: {s.report_path}  plot: {s.plot_path}  page: {s.out_dir / HTML_FILE}")
    click.echo("\n".join(lines), file=sys.stdout)
