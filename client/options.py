"""Options shared by several commands (pip-tools style: defined once, stacked where needed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

FORMATS = ("table", "json", "csv", "xlsx")


def output_format(*choices: str) -> Callable[[F], F]:
    """``--format``: how results are written (default: a readable table)."""
    allowed = choices or FORMATS
    return click.option(
        "--format", "fmt", type=click.Choice(allowed), default="table", show_default=True,
        help="Output format; json is the protobuf JSON of the response message.",
    )


output_file = click.option(
    "--output", "-o", "output", type=click.Path(dir_okay=False, writable=True), default=None,
    help="Write to FILE instead of standard output (required for xlsx).",
)

data_dir = click.option(
    "--data-dir", type=click.Path(file_okay=False), envvar="PROCURE_DATA_DIR", default=None,
    help="Catalog store directory [env PROCURE_DATA_DIR; default ~/.local/share/procure].",
)

tenant = click.option(
    "--tenant", envvar="PROCURE_TENANT", default="default", show_default=True,
    help="Tenant that owns catalogs in the embedded store.",
)
