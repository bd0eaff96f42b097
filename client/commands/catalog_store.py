"""``procure catalog import|list|export|delete``: the embedded, versioned catalog store.

``client.commands.catalog`` owns the ``catalog`` group and calls ``register`` to add these.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from client.options import data_dir, output_format, tenant
from optimizer.catalog.store import CatalogStore, StoredCatalogInfo, renamed

EXPORT_FORMATS = ("csv", "xlsx", "parquet")


def _info_json(info: StoredCatalogInfo) -> dict[str, object]:
    return {**dataclasses.asdict(info), "ref": info.ref}


def _info_table(infos: list[StoredCatalogInfo], title: str) -> Table:
    table = Table(title=title)
    table.add_column("name", no_wrap=True)
    table.add_column("version", justify="right")
    table.add_column("id", no_wrap=True)
    table.add_column("rows", justify="right")
    table.add_column("quote date", no_wrap=True)
    table.add_column("stored (UTC)")
    for i in infos:
        table.add_row(i.name, str(i.version), i.short_id, str(i.row_count), i.quote_date or "",
                      i.created_at)
    return table


@click.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--name", default=None, help="Store under this name instead of metadata's name.")
@click.option("--request-id", default=None,
              help="Idempotency key: a retry with the same key returns the first import.")
@data_dir
@tenant
def import_(path: Path, name: str | None, request_id: str | None, data_dir: str | None,
            tenant: str) -> None:
    """Validate the catalog at PATH (folder of CSVs, .xlsx, or folder of .parquet) and store
    it as a new immutable version; identical content returns the existing version."""
    from optimizer.catalog import load_catalog

    catalog = load_catalog(path)
    if name is not None:
        catalog = renamed(catalog, name)
    with CatalogStore(data_dir) as store:
        info = store.put(catalog, tenant=tenant, request_id=request_id)
    click.echo(f"stored {info.ref} id {info.id}")


@click.command("list")
@output_format("table", "json")
@data_dir
@tenant
def list_(fmt: str, data_dir: str | None, tenant: str) -> None:
    """List every stored catalog version of the tenant."""
    with CatalogStore(data_dir) as store:
        infos = store.list(tenant)
    if fmt == "json":
        click.echo(json.dumps([_info_json(i) for i in infos], indent=2))
        return
    Console().print(_info_table(infos, f"catalogs of tenant {tenant!r}"))


@click.command("export")
@click.argument("ref")
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="csv",
              show_default=True, help="csv and parquet write a folder; xlsx writes one workbook.")
@data_dir
@tenant
def export(ref: str, dest: Path, fmt: str, data_dir: str | None, tenant: str) -> None:
    """Write the stored catalog REF (name, name@version or id) to DEST."""
    with CatalogStore(data_dir) as store:
        store.export(ref, dest, fmt, tenant=tenant)
    click.echo(f"wrote {dest}")


@click.command("delete")
@click.argument("ref")
@click.option("--all-versions", is_flag=True, help="Delete every version of REF's name.")
@data_dir
@tenant
def delete(ref: str, all_versions: bool, data_dir: str | None, tenant: str) -> None:
    """Delete the stored catalog version REF names; other versions are kept."""
    with CatalogStore(data_dir) as store:
        deleted = store.delete(ref, tenant=tenant, all_versions=all_versions)
    for info in deleted:
        click.echo(f"deleted {info.ref} id {info.id}")


def register(group: click.Group) -> None:
    """Add the store subcommands to the ``catalog`` group."""
    for command in (import_, list_, export, delete):
        group.add_command(command)
