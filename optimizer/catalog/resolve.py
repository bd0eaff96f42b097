"""Turn what a user typed after ``--catalog`` into a catalog: a path, a bundled name, or a
stored version, so every command accepts the same references."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

from optimizer.catalog.model import Catalog
from optimizer.catalog.store import DB_FILENAME, CatalogStore, default_data_dir
from optimizer.errors import NotFound

# A folder counts as a bundled catalog when it holds this file.
_MARKER = "metadata.csv"


def bundled_catalogs_dir() -> Path:
    """``$PROCURE_CATALOGS``, or the reference catalogs shipped as package data.

    ``optimizer/catalogs`` links to the repository's top-level ``catalogs/`` (the source of
    truth); the wheel holds a copy of it, so this resolves in a checkout, an editable install
    and an installed wheel alike.
    """
    env = os.environ.get("PROCURE_CATALOGS")
    if env:
        return Path(env)
    root = files("optimizer") / "catalogs"
    if not isinstance(root, Path):  # e.g. a zip import: the loaders need real files
        raise RuntimeError(
            f"bundled catalogs are not on the file system ({root}); set PROCURE_CATALOGS"
        )
    return root.resolve()  # the real folder, not the link: messages name catalogs/...


def bundled_catalogs(root: Path | None = None) -> list[Path]:
    """Folders of the reference catalogs shipped with the project (or under ``root``),
    sorted by name."""
    root = root or bundled_catalogs_dir()
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / _MARKER).is_file())


def resolve_catalog(
    ref: str, *, data_dir: str | Path | None = None, tenant: str = "default"
) -> Catalog:
    """The catalog ``ref`` names, tried in order: an existing file or folder; a bundled
    catalog's name; a stored ``name``, ``name@version`` or id (prefix) of ``tenant``.

    Raises ``NotFound`` when none matches, and the loader's ``CatalogInvalid`` when a file
    matches but is not a valid catalog.
    """
    from optimizer.catalog import load_catalog

    path = Path(ref).expanduser()
    if path.exists():
        return load_catalog(path)
    for folder in bundled_catalogs():
        if folder.name == ref:
            return load_catalog(folder)
    store_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    if not (store_dir / DB_FILENAME).is_file():  # a lookup must not create an empty store
        raise NotFound(
            f"catalog {ref!r} not found (no such file, bundled catalog or stored catalog)"
        )
    with CatalogStore(store_dir) as store:
        return store.get(ref, tenant=tenant)
