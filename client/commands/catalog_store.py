"""``procure catalog import|list|export|delete|diff|restore``: the versioned catalog store,
embedded or on the ``--server`` (the same output either way; on a server the token's tenant
owns them; ``restore`` is embedded only, since the service has no call for it yet).

``client.commands.catalog`` owns the ``catalog`` group and calls ``register`` to add these.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from client.options import data_dir, output_format, root_option, tenant
from client.transport import Transport, transport_from
from optimizer.errors import InvalidInput

if TYPE_CHECKING:
    from rich.table import Table

    from optimizer.catalog.store import StoredCatalogInfo, TableDiff

EXPORT_FORMATS = ("csv", "xlsx", "parquet")


def _store(ctx: click.Context, data_dir: str | None, tenant: str) -> Transport:
    """The embedded store (of this command's --data-dir and --tenant) or the --server."""
    return transport_from(ctx, data_dir=data_dir, tenant=tenant)


def _info_json(info: StoredCatalogInfo) -> dict[str, object]:
    return {**dataclasses.asdict(info), "ref": info.ref}


def _info_table(infos: list[StoredCatalogInfo], title: str) -> Table:
    from rich.table import Table

    table = Table(title=title)
    table.add_column("name", no_wrap=True)
    table.add_column("version", justify="right")
    table.add_column("id", no_wrap=True)
    table.add_column("rows", justify="right")
    table.add_column("quote date", no_wrap=True)
    table.add_column("stored (UTC)")
    for i in infos:
        table.add_row(
            i.name, str(i.version), i.short_id, str(i.row_count), i.quote_date or "", i.created_at
        )
    return table


@click.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--name", default=None, help="Store under this name instead of metadata's name.")
@click.option(
    "--request-id",
    default=None,
    help="Idempotency key: a retry with the same key returns the first import.",
)
@data_dir
@tenant
@click.pass_context
def import_(
    ctx: click.Context,
    path: Path,
    name: str | None,
    request_id: str | None,
    data_dir: str | None,
    tenant: str,
) -> None:
    """Validate the catalog at PATH (folder of CSVs, .xlsx, or folder of .parquet) and store
    it as a new immutable version; identical content returns the existing version."""
    imported = _store(ctx, data_dir, tenant).import_catalog(str(path), name, request_id)
    for warning in imported.warnings:  # each says its severity ("warning: servers, row 3, ...")
        click.echo(warning, err=True)
    click.echo(f"stored {imported.info.ref} id {imported.info.id}")


@click.command("list")
@output_format("table", "json")
@data_dir
@tenant
@click.pass_context
def list_(ctx: click.Context, fmt: str, data_dir: str | None, tenant: str) -> None:
    """List every stored catalog version of the tenant."""
    store = _store(ctx, data_dir, tenant)
    infos = store.list_catalogs()
    if fmt == "json":
        click.echo(json.dumps([_info_json(i) for i in infos], indent=2))
        return
    from rich.console import Console

    Console().print(_info_table(infos, f"catalogs {store.where}"))


@click.command("export")
@click.argument("ref")
@click.argument("dest", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default="csv",
    show_default=True,
    help="csv and parquet write a folder; xlsx writes one workbook.",
)
@data_dir
@tenant
@click.pass_context
def export(
    ctx: click.Context, ref: str, dest: Path, fmt: str, data_dir: str | None, tenant: str
) -> None:
    """Write the stored catalog REF (name, name@version or id) to DEST."""
    _store(ctx, data_dir, tenant).export_catalog(ref, dest, fmt)
    click.echo(f"wrote {dest}")


@click.command("delete")
@click.argument("ref")
@click.option("--all-versions", is_flag=True, help="Delete every version of REF's name.")
@data_dir
@tenant
@click.pass_context
def delete(
    ctx: click.Context, ref: str, all_versions: bool, data_dir: str | None, tenant: str
) -> None:
    """Delete the stored catalog version REF names; other versions are kept."""
    for info in _store(ctx, data_dir, tenant).delete_catalog(ref, all_versions):
        click.echo(f"deleted {info.ref} id {info.id}")


@click.command("diff")
@click.argument("ref_a")
@click.argument("ref_b")
@output_format("table", "json")
@data_dir
@tenant
@click.pass_context
def diff(
    ctx: click.Context, ref_a: str, ref_b: str, fmt: str, data_dir: str | None, tenant: str
) -> None:
    """Rows added, removed and changed per table from stored catalog REF_A to REF_B (e.g.
    acme@1 acme@2); metadata counts as one table."""
    from optimizer.catalog.store import diff_catalogs

    store = _store(ctx, data_dir, tenant)
    tables = diff_catalogs(store.fetch_catalog(ref_a), store.fetch_catalog(ref_b))
    if fmt == "json":
        click.echo(json.dumps([_diff_json(t) for t in tables], indent=2, default=str))
        return
    click.echo("\n".join(_diff_lines(ref_a, ref_b, tables)))


def _diff_json(t: TableDiff) -> dict[str, object]:
    return {
        "table": t.table,
        "added": list(t.added),
        "removed": list(t.removed),
        "changed": {
            key: {f: {"from": old, "to": new} for f, (old, new) in fields.items()}
            for key, fields in t.changed.items()
        },
    }


def _diff_lines(ref_a: str, ref_b: str, tables: list[TableDiff]) -> list[str]:
    lines = [f"{ref_a} -> {ref_b}"]
    for t in tables:
        lines.append(
            f"{t.table}: {len(t.added)} added, {len(t.removed)} removed, {len(t.changed)} changed"
        )
        lines += [f"  + {key}" for key in t.added]
        lines += [f"  - {key}" for key in t.removed]
        for key, fields in t.changed.items():
            lines.append(f"  ~ {key}")
            lines += [f"      {f}: {old!r} -> {new!r}" for f, (old, new) in fields.items()]
    if all(t.empty for t in tables):
        lines.append("identical content")
    return lines


@click.command("restore")
@click.argument("ref")
@data_dir
@tenant
@click.pass_context
def restore(ctx: click.Context, ref: str, data_dir: str | None, tenant: str) -> None:
    """Store the content of REF (name@version) again as the newest version of its name; the
    versions in between are kept (unlike deleting them)."""
    from optimizer.catalog.store import CatalogStore

    if root_option(ctx, "server"):
        msg = "restore runs on the embedded store only; export REF and import it on the server"
        raise InvalidInput(msg, field="--server")
    with CatalogStore(data_dir) as store:
        info = store.restore(ref, tenant=tenant)
    click.echo(f"stored {info.ref} id {info.id} (content of {ref})")


def register(group: click.Group) -> None:
    """Add the store subcommands to the ``catalog`` group."""
    for command in (import_, list_, export, delete, diff, restore):
        group.add_command(command)
