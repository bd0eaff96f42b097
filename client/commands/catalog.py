"""``procure catalog validate|show`` (and the store subcommands): vendor price catalogs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from client.options import data_dir, output_format, tenant
from client.transport import Embedded, transport_from
from optimizer.errors import CatalogInvalid, Finding

if TYPE_CHECKING:
    from rich.table import Table

    from optimizer.catalog.summary import CatalogSummary

_PROBLEM_COLUMNS = ("severity", "table", "row", "column", "value", "expected")


@click.group()
def catalog() -> None:
    """Validate, inspect and manage vendor price catalogs (see docs/catalogs.md)."""


def _problem_table(problems: list[Finding], title: str) -> Table:
    from rich.table import Table

    table = Table(title=title)
    for header in _PROBLEM_COLUMNS:
        table.add_column(header, justify="right" if header == "row" else "left", overflow="fold")
    for p in problems:
        style = "red" if p.severity == "error" else "yellow"
        table.add_row(
            p.severity,
            p.table,
            "" if p.row is None else str(p.row),
            p.column or "",
            p.value or "",
            p.expected,
            style=style,
        )
    return table


@catalog.command("validate")
@click.argument("path", type=click.Path())
@output_format("table", "json")
@click.pass_context
def validate(ctx: click.Context, path: str, fmt: str) -> None:
    """Check the catalog at PATH (folder of CSV or Parquet files, or an .xlsx workbook) and
    report every problem; exits 3 when any is an error."""
    from optimizer.catalog import load_catalog_report

    report = load_catalog_report(path)
    errors, warnings = len(report.errors), len(report.warnings)
    if fmt == "json":
        click.echo(
            json.dumps(
                {
                    "valid": report.catalog is not None,
                    "errors": errors,
                    "warnings": warnings,
                    "problems": [dataclasses.asdict(p) for p in report.problems],
                },
                indent=2,
            )
        )
    else:
        from rich.console import Console

        console = Console()
        if report.problems:
            console.print(_problem_table(report.problems, f"catalog {path}"))
        verdict = "invalid" if errors else "valid"
        click.echo(f"{path}: {verdict}, {errors} error(s), {warnings} warning(s)")
    if errors:
        ctx.exit(CatalogInvalid.exit_code)


def _summary_tables(summary: CatalogSummary) -> list[Table]:
    from rich.table import Table

    head = Table(title=f"catalog {summary.name}", show_header=False)
    head.add_column("field")
    head.add_column("value")
    for label, value in (
        ("vendor", summary.vendor),
        ("currency", summary.currency),
        ("quote date", summary.quote_date),
        ("valid until", summary.valid_until),
        ("GPU models", ", ".join(summary.gpu_models)),
        ("switch fabrics", ", ".join(summary.switch_fabrics)),
        ("rows", ", ".join(f"{t} {n}" for t, n in summary.rows.items())),
    ):
        head.add_row(label, "" if value is None else str(value))
    prices = Table(title="price ranges")
    for header in ("category", "count", "min_price_usd", "max_price_usd", "unit"):
        prices.add_column(header, justify="left" if header in ("category", "unit") else "right")
    for r in summary.price_ranges:
        prices.add_row(
            r.category, str(r.count), f"{r.min_price_usd:,}", f"{r.max_price_usd:,}", r.unit
        )
    tables = [head, prices]
    if summary.warnings:
        tables.append(_problem_table(list(summary.warnings), "warnings"))
    return tables


@catalog.command("show")
@click.argument("ref")
@output_format("table", "json")
@data_dir
@tenant
@click.pass_context
def show(ctx: click.Context, ref: str, fmt: str, data_dir: str | None, tenant: str) -> None:
    """Summarise the catalog REF (a path, a bundled catalog's name, or a stored name,
    name@version or id; with --server, a catalog stored there): rows, price range per
    category, warnings."""
    from optimizer.catalog.resolve import bundled_catalogs
    from optimizer.catalog.summary import summarize
    from optimizer.catalog.validation import catalog_warnings

    local = Path(ref).exists() or ref in {p.name for p in bundled_catalogs()}
    source = (
        Embedded(data_dir, tenant)
        if local
        else transport_from(ctx, data_dir=data_dir, tenant=tenant)
    )
    found = source.fetch_catalog(ref)
    summary = summarize(found, catalog_warnings(found))
    if fmt == "json":
        click.echo(json.dumps(summary.to_dict(), indent=2))
        return
    from rich.console import Console

    console = Console()
    for table in _summary_tables(summary):
        console.print(table)


from client.commands.catalog_store import register as _register_store  # noqa: E402

_register_store(catalog)
