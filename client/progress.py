"""Progress bars for long runs: on stderr, only on a terminal, never with --quiet."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from client.options import root_option


@contextmanager
def progress_bar(
    ctx: click.Context, description: str, total: int
) -> Iterator[Callable[[int], None]]:
    """Yield ``update(done)``; draws elapsed time and an estimate of the time left."""
    console = Console(stderr=True)
    if root_option(ctx, "quiet", False) or not console.is_terminal:
        yield lambda done: None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task(description, total=total)
    with bar:
        yield lambda done: bar.update(task, completed=done)
