"""An embedded, versioned catalog store: immutable versions named by their content hash.

SQLite in WAL mode with ``synchronous=FULL`` (an acknowledged import survives a crash;
shared/reliability.md F1), ``busy_timeout`` plus ``BEGIN IMMEDIATE`` for every write (no
"database is locked" from read-then-write upgrades, F3), one transaction per import (a
killed writer leaves the previous versions as they were, F2), parameterised SQL with the
tenant in every WHERE (F5), and a connection that is never used across ``fork`` (F4).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from optimizer.catalog.canonical import canonical_json, catalog_from_canonical, hash_canonical
from optimizer.catalog.model import TABLES, Catalog
from optimizer.errors import InvalidInput, LimitExceeded, NotFound

DB_FILENAME = "catalogs.sqlite3"
# A canonical catalog larger than this is refused before any write (reliability.md G1).
MAX_CATALOG_BYTES = 64 * 1024 * 1024
# Shortest id prefix accepted as a reference, so a short word is never mistaken for an id.
MIN_ID_PREFIX_CHARS = 6
MAX_TENANT_CHARS = 128
BUSY_TIMEOUT_MS = 30_000

_HEX = re.compile(r"[0-9a-f]+")
_SCHEMA_VERSION = 2
# Version 2: a version number is never given to other content. ``catalog_names`` keeps the
# highest number each name was ever given (its high-water mark, never lowered by a delete),
# ``catalog_tombstones`` answers "deleted" for a number whose version was deleted, and a
# version is keyed by (tenant, name, version) so that ``restore`` can give old content a new
# number.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS catalog_versions (
    tenant       TEXT    NOT NULL,
    id           TEXT    NOT NULL,          -- sha256 hex of the canonical JSON
    name         TEXT    NOT NULL,
    version      INTEGER NOT NULL,          -- 1, 2, ... per (tenant, name), never reused
    vendor       TEXT    NOT NULL,
    quote_date   TEXT,
    created_at   TEXT    NOT NULL,          -- UTC, ISO 8601
    row_count    INTEGER NOT NULL,
    size_bytes   INTEGER NOT NULL,
    request_id   TEXT,                      -- client idempotency key (reliability.md A11)
    canonical    BLOB    NOT NULL,
    PRIMARY KEY (tenant, name, version),
    UNIQUE (tenant, request_id)
);
CREATE INDEX IF NOT EXISTS catalog_versions_by_id ON catalog_versions (tenant, id);
CREATE TABLE IF NOT EXISTS catalog_names (
    tenant       TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    last_version INTEGER NOT NULL,          -- high-water mark: the next version is this + 1
    PRIMARY KEY (tenant, name)
);
CREATE TABLE IF NOT EXISTS catalog_tombstones (
    tenant       TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    version      INTEGER NOT NULL,
    id           TEXT    NOT NULL,          -- the content the number named
    deleted_at   TEXT    NOT NULL,          -- UTC, ISO 8601
    PRIMARY KEY (tenant, name, version)
);
"""
# Schema 1 keyed versions by (tenant, id) and numbered them MAX(version) + 1; its rows move
# to the new table, and each name's high-water mark starts at its highest surviving version.
_MIGRATE_FROM_1 = """
ALTER TABLE catalog_versions RENAME TO catalog_versions_v1;
{schema}
INSERT INTO catalog_versions SELECT
    tenant, id, name, version, vendor, quote_date, created_at, row_count, size_bytes,
    request_id, canonical FROM catalog_versions_v1;
DROP TABLE catalog_versions_v1;
INSERT INTO catalog_names SELECT tenant, name, MAX(version) FROM catalog_versions
    GROUP BY tenant, name;
"""
# Connections a forked child inherited: never used, never closed, never freed.
_INHERITED_CONNECTIONS: list[sqlite3.Connection] = []
_INFO_COLUMNS = "tenant, id, name, version, vendor, quote_date, created_at, row_count, size_bytes"


def default_data_dir() -> Path:
    """``$PROCURE_DATA_DIR`` or ``~/.local/share/procure``."""
    env = os.environ.get("PROCURE_DATA_DIR")
    return Path(env) if env else Path.home() / ".local" / "share" / "procure"


@dataclass(frozen=True)
class StoredCatalogInfo:
    """What the store knows about one catalog version, without its rows."""

    tenant: str
    id: str
    name: str
    version: int
    vendor: str
    quote_date: str | None
    created_at: str
    row_count: int
    size_bytes: int

    @property
    def short_id(self) -> str:
        return self.id[:12]

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


def _check_tenant(tenant: str) -> str:
    if not isinstance(tenant, str) or not tenant.strip() or len(tenant) > MAX_TENANT_CHARS:
        msg = f"must be a non-empty string of at most {MAX_TENANT_CHARS} characters"
        raise InvalidInput(msg, field="tenant")
    return tenant


def _row_count(catalog: Catalog) -> int:
    return sum(len(getattr(catalog, t)) for t in TABLES)


class CatalogStore:
    """Catalog versions of every tenant in one SQLite file under ``data_dir``.

    Safe for several threads (one lock around the connection) and several processes
    (SQLite locking). A store object carried into a forked child opens its own connection
    there instead of using the parent's.
    """

    def __init__(self, data_dir: str | Path | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.path = self.data_dir / DB_FILENAME
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self._read():
            pass  # opening the connection creates the file and the schema

    # ------------------------------------------------------------------ connection
    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            if self._conn is not None:
                # Inherited across fork: it belongs to the parent. Keep it referenced so it
                # is never closed (or checkpointed) from here (sqlite.org/howtocorrupt.html
                # §2.6), and open our own.
                _INHERITED_CONNECTIONS.append(self._conn)
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _use_wal(conn)
            conn.execute("PRAGMA synchronous = FULL")
            self._conn, self._pid = conn, os.getpid()
            self._ensure_schema(conn)
        return self._conn

    @staticmethod
    def _ensure_schema(conn: sqlite3.Connection) -> None:
        if conn.execute("PRAGMA user_version").fetchone()[0] == _SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = conn.execute("PRAGMA user_version").fetchone()[0]  # another may have won
            if found == 1:
                for statement in _MIGRATE_FROM_1.format(schema=_SCHEMA).split(";"):
                    if statement.strip():
                        conn.execute(statement)
            elif found != _SCHEMA_VERSION:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One deferred transaction: every statement in the block sees the same snapshot."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: committed when the block ends, rolled back on error."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> CatalogStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writes
    def put(
        self, catalog: Catalog, *, tenant: str, request_id: str | None = None
    ) -> StoredCatalogInfo:
        """Store ``catalog`` as the next version of its name; returns once it is committed.

        Identical content already stored for the tenant returns that version unchanged.
        A ``request_id`` seen before returns the version it created (a retried upload);
        reusing it for different content is refused.
        """
        _check_tenant(tenant)
        data = canonical_json(catalog)
        if len(data) > MAX_CATALOG_BYTES:
            msg = f"catalog is {len(data)} bytes; the store accepts at most {MAX_CATALOG_BYTES}"
            raise LimitExceeded(msg)
        cid = hash_canonical(data)
        with self._write() as conn:
            if request_id is not None:
                row = conn.execute(
                    f"SELECT {_INFO_COLUMNS} FROM catalog_versions"
                    " WHERE tenant = ? AND request_id = ?",
                    (tenant, request_id),
                ).fetchone()
                if row is not None:
                    if row[1] != cid:
                        msg = "already used for a different catalog"
                        raise InvalidInput(msg, field="request_id")
                    return StoredCatalogInfo(*row)
            row = conn.execute(
                f"SELECT {_INFO_COLUMNS} FROM catalog_versions WHERE tenant = ? AND id = ?"
                " ORDER BY version DESC LIMIT 1",
                (tenant, cid),
            ).fetchone()
            if row is not None:
                return StoredCatalogInfo(*row)
            return self._insert(conn, catalog, data, cid, tenant, request_id)

    @staticmethod
    def _insert(
        conn: sqlite3.Connection,
        catalog: Catalog,
        data: bytes,
        cid: str,
        tenant: str,
        request_id: str | None,
    ) -> StoredCatalogInfo:
        """Add ``data`` as the next number of its name: one past the name's high-water mark,
        which only ever rises, so a number once given never names other content."""
        name = catalog.meta.name
        (version,) = conn.execute(
            "INSERT INTO catalog_names (tenant, name, last_version) VALUES (?, ?, 1)"
            " ON CONFLICT (tenant, name) DO UPDATE SET last_version = last_version + 1"
            " RETURNING last_version",
            (tenant, name),
        ).fetchone()
        quote_date = catalog.meta.quote_date.isoformat() if catalog.meta.quote_date else None
        info = StoredCatalogInfo(
            tenant=tenant,
            id=cid,
            name=name,
            version=version,
            vendor=catalog.meta.vendor,
            quote_date=quote_date,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            row_count=_row_count(catalog),
            size_bytes=len(data),
        )
        conn.execute(
            f"INSERT INTO catalog_versions ({_INFO_COLUMNS}, request_id, canonical)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                info.tenant,
                info.id,
                info.name,
                info.version,
                info.vendor,
                info.quote_date,
                info.created_at,
                info.row_count,
                info.size_bytes,
                request_id,
                data,
            ),
        )
        return info

    def restore(self, ref: str, *, tenant: str) -> StoredCatalogInfo:
        """Store the content of the live version ``ref`` again as the next version of its
        name, so that it is the latest (the way back to an old quote without deleting the
        newer ones). The content and id are the old version's; the number is new."""
        _check_tenant(tenant)
        with self._write() as conn:
            old = self._resolve(conn, ref, tenant)
            (data,) = conn.execute(
                "SELECT canonical FROM catalog_versions"
                " WHERE tenant = ? AND name = ? AND version = ?",
                (tenant, old.name, old.version),
            ).fetchone()
            data = bytes(data)
            return self._insert(conn, catalog_from_canonical(data), data, old.id, tenant, None)

    def delete(
        self, ref: str, *, tenant: str, all_versions: bool = False
    ) -> list[StoredCatalogInfo]:
        """Delete the version ``ref`` names (with ``all_versions``, every version of its name).

        Other versions are untouched, so deleting the latest makes the previous one latest.
        Returns what was deleted.
        """
        _check_tenant(tenant)
        with self._write() as conn:
            info = self._resolve(conn, ref, tenant)
            where = "tenant = ? AND name = ?"
            args: tuple[str | int, ...] = (tenant, info.name)
            if not all_versions:
                where, args = where + " AND version = ?", (tenant, info.name, info.version)
            rows = conn.execute(
                f"SELECT {_INFO_COLUMNS} FROM catalog_versions WHERE {where} ORDER BY version",
                args,
            ).fetchall()
            deleted_at = datetime.now(UTC).isoformat(timespec="seconds")
            conn.executemany(
                "INSERT OR REPLACE INTO catalog_tombstones"
                " (tenant, name, version, id, deleted_at) VALUES (?, ?, ?, ?, ?)",
                [(tenant, r[2], r[3], r[1], deleted_at) for r in rows],
            )
            conn.execute(f"DELETE FROM catalog_versions WHERE {where}", args)
            return [StoredCatalogInfo(*r) for r in rows]

    # ------------------------------------------------------------------ reads
    def list(self, tenant: str) -> list[StoredCatalogInfo]:
        """Every version the tenant owns, by name then version."""
        _check_tenant(tenant)
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_INFO_COLUMNS} FROM catalog_versions WHERE tenant = ?"
                " ORDER BY name, version",
                (tenant,),
            ).fetchall()
        return [StoredCatalogInfo(*r) for r in rows]

    def info(self, ref: str, *, tenant: str) -> StoredCatalogInfo:
        _check_tenant(tenant)
        with self._read() as conn:
            return self._resolve(conn, ref, tenant)

    def get(self, ref: str, *, tenant: str) -> Catalog:
        """The catalog ``ref`` names: ``name@version``, an id or unique id prefix, or a name
        (its latest version), tried in that order."""
        _check_tenant(tenant)
        with self._read() as conn:
            info = self._resolve(conn, ref, tenant)
            row = conn.execute(
                "SELECT canonical FROM catalog_versions WHERE tenant = ? AND id = ?",
                (tenant, info.id),
            ).fetchone()
        return catalog_from_canonical(bytes(row[0]))

    def export(self, ref: str, dest: str | Path, fmt: str, *, tenant: str) -> Path:
        """Write the catalog ``ref`` names to ``dest`` as csv (a folder), xlsx or parquet."""
        from optimizer.catalog.io import write_catalog

        catalog = self.get(ref, tenant=tenant)
        write_catalog(catalog, dest, fmt)
        return Path(dest)

    # ------------------------------------------------------------------ references
    @staticmethod
    def _resolve(conn: sqlite3.Connection, ref: str, tenant: str) -> StoredCatalogInfo:
        """Find one version for ``ref``; ``NotFound`` says nothing about other tenants."""
        not_found = NotFound(f"catalog {ref!r} not found")
        if not isinstance(ref, str) or not ref:
            raise not_found
        name, sep, version_text = ref.rpartition("@")
        if sep and name and version_text.isdigit():
            row = conn.execute(
                f"SELECT {_INFO_COLUMNS} FROM catalog_versions"
                " WHERE tenant = ? AND name = ? AND version = ?",
                (tenant, name, int(version_text)),
            ).fetchone()
            if row is None:
                CatalogStore._raise_if_deleted(conn, ref, tenant, name, int(version_text))
                raise not_found
            return StoredCatalogInfo(*row)
        if len(ref) >= MIN_ID_PREFIX_CHARS and _HEX.fullmatch(ref):
            rows = conn.execute(
                f"SELECT {_INFO_COLUMNS} FROM catalog_versions"
                " WHERE tenant = ? AND substr(id, 1, ?) = ? ORDER BY version DESC",
                (tenant, len(ref), ref),
            ).fetchall()
            if len({r[1] for r in rows}) > 1:
                raise InvalidInput(
                    f"id prefix {ref!r} matches several catalogs; give more digits", field="catalog"
                )
            if rows:  # restored content has several numbers: the latest names it
                return StoredCatalogInfo(*rows[0])
        row = conn.execute(
            f"SELECT {_INFO_COLUMNS} FROM catalog_versions WHERE tenant = ? AND name = ?"
            " ORDER BY version DESC LIMIT 1",
            (tenant, ref),
        ).fetchone()
        if row is None:
            CatalogStore._raise_if_deleted(conn, ref, tenant, ref, None)
            raise not_found
        return StoredCatalogInfo(*row)

    @staticmethod
    def _raise_if_deleted(
        conn: sqlite3.Connection, ref: str, tenant: str, name: str, version: int | None
    ) -> None:
        """``CatalogDeleted`` when ``ref`` named a version that was deleted (any version of
        ``name`` when ``version`` is None and none is left)."""
        row = conn.execute(
            "SELECT version, deleted_at FROM catalog_tombstones WHERE tenant = ? AND name = ?"
            " AND (? IS NULL OR version = ?) ORDER BY version DESC LIMIT 1",
            (tenant, name, version, version),
        ).fetchone()
        if row is not None:
            raise CatalogDeleted(
                f"catalog {ref!r} was deleted ({name}@{row[0]} at {row[1]} UTC); "
                "its version numbers are never given to other content"
            )


class CatalogDeleted(NotFound):
    """The reference named a version that was deleted; the number is not reused."""


def renamed(catalog: Catalog, name: str) -> Catalog:
    """``catalog`` under another name (``import --name``): a different content hash."""
    if not name.strip():
        raise InvalidInput("must not be empty", field="name")
    return replace(catalog, meta=replace(catalog.meta, name=name))


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch a new database to WAL (persistent once set). The switch needs an exclusive lock
    and SQLite does not call the busy handler for it, so concurrent first opens retry."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@dataclass(frozen=True)
class TableDiff:
    """How one table of catalog B differs from A; rows are named by their key (the SKU,
    or ``SKU x min_quantity`` for a price break)."""

    table: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    # key -> field -> (value in A, value in B); nested fields dotted (availability.source)
    changed: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def diff_catalogs(a: Catalog, b: Catalog) -> list[TableDiff]:
    """Rows added, removed and changed from ``a`` to ``b``, per table (``metadata`` first);
    identical catalogs give only empty diffs."""
    out = [_diff_rows("metadata", {"metadata": a.meta}, {"metadata": b.meta})]
    for table in TABLES:
        out.append(
            _diff_rows(
                table,
                {_row_key(r): r for r in getattr(a, table)},
                {_row_key(r): r for r in getattr(b, table)},
            )
        )
    return out


def _row_key(row: object) -> str:
    key = str(getattr(row, "sku", ""))
    quantity = getattr(row, "min_quantity", None)
    return key if quantity is None else f"{key} x {quantity}"


def _diff_rows(table: str, a: dict[str, object], b: dict[str, object]) -> TableDiff:
    changed: dict[str, dict[str, tuple[Any, Any]]] = {}
    for key in sorted(a.keys() & b.keys()):
        fa, fb = _flat(a[key]), _flat(b[key])
        fields = {f: (fa.get(f), fb.get(f)) for f in sorted(fa.keys() | fb.keys())}
        fields = {f: v for f, v in fields.items() if v[0] != v[1]}
        if fields:
            changed[key] = fields
    return TableDiff(
        table=table,
        added=tuple(sorted(b.keys() - a.keys())),
        removed=tuple(sorted(a.keys() - b.keys())),
        changed=changed,
    )


def _flat(row: object, prefix: str = "") -> dict[str, Any]:
    """A record's fields by dotted name, dates as ISO text."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(row):  # type: ignore[arg-type]
        value = getattr(row, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.update(_flat(value, f"{prefix}{f.name}."))
        else:
            out[f"{prefix}{f.name}"] = value.isoformat() if hasattr(value, "isoformat") else value
    return out
