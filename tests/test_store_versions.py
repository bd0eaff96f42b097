"""A version number, once given, never names other content: deletes leave a tombstone and
a high-water mark; ``restore`` brings old content back under a new number; ``diff`` says
what changed between two versions (issue 20, item 1)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_samples import sample_catalog
from click.testing import CliRunner, Result

from client.cli import cli
from optimizer.catalog.canonical import canonical_json, content_hash
from optimizer.catalog.store import DB_FILENAME, CatalogDeleted, CatalogStore, diff_catalogs
from optimizer.errors import NotFound

TENANT = "acme"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CatalogStore]:
    with CatalogStore(tmp_path / "data") as s:
        yield s


def test_a_deleted_latest_number_is_not_given_to_the_next_import(store: CatalogStore) -> None:
    store.put(sample_catalog(variant=0), tenant=TENANT)
    second = store.put(sample_catalog(variant=1), tenant=TENANT)
    store.delete("sample@2", tenant=TENANT)
    third = store.put(sample_catalog(variant=2), tenant=TENANT)
    assert third.version == 3 and third.id != second.id


def test_numbers_keep_rising_after_delete_all_versions(store: CatalogStore) -> None:
    store.put(sample_catalog(variant=0), tenant=TENANT)
    store.put(sample_catalog(variant=1), tenant=TENANT)
    store.delete("sample", tenant=TENANT, all_versions=True)
    assert store.put(sample_catalog(variant=2), tenant=TENANT).version == 3


def test_a_deleted_version_answers_deleted(store: CatalogStore) -> None:
    store.put(sample_catalog(variant=0), tenant=TENANT)
    store.put(sample_catalog(variant=1), tenant=TENANT)
    store.delete("sample@2", tenant=TENANT)
    with pytest.raises(CatalogDeleted, match=r"sample@2.*deleted"):
        store.get("sample@2", tenant=TENANT)
    assert store.info("sample", tenant=TENANT).version == 1  # the live one is still latest


def test_a_name_with_every_version_deleted_answers_deleted(store: CatalogStore) -> None:
    store.put(sample_catalog(), tenant=TENANT)
    store.delete("sample", tenant=TENANT, all_versions=True)
    with pytest.raises(CatalogDeleted):
        store.get("sample", tenant=TENANT)


def test_deleted_is_still_not_found_for_callers_that_catch_not_found(
    store: CatalogStore,
) -> None:
    store.put(sample_catalog(), tenant=TENANT)
    store.delete("sample@1", tenant=TENANT)
    with pytest.raises(NotFound):
        store.get("sample@1", tenant=TENANT)


def test_a_tombstone_of_one_tenant_is_invisible_to_another(store: CatalogStore) -> None:
    store.put(sample_catalog(), tenant="alice")
    store.delete("sample@1", tenant="alice")
    with pytest.raises(NotFound) as caught:
        store.get("sample@1", tenant="bob")
    assert not isinstance(caught.value, CatalogDeleted)


def test_reimporting_deleted_content_gets_a_new_number(store: CatalogStore) -> None:
    first = store.put(sample_catalog(), tenant=TENANT)
    store.delete("sample@1", tenant=TENANT)
    again = store.put(sample_catalog(), tenant=TENANT)
    assert (again.id, again.version) == (first.id, 2)


def test_restore_makes_a_new_latest_version_equal_to_the_old(store: CatalogStore) -> None:
    old = store.put(sample_catalog(variant=0), tenant=TENANT)
    store.put(sample_catalog(variant=1), tenant=TENANT)
    restored = store.restore("sample@1", tenant=TENANT)
    assert (restored.version, restored.id) == (3, old.id)
    assert store.info("sample", tenant=TENANT) == restored
    assert [i.version for i in store.list(TENANT)] == [1, 2, 3]  # nothing in between is lost
    assert content_hash(store.get("sample@3", tenant=TENANT)) == old.id


def test_restore_of_a_deleted_version_answers_deleted(store: CatalogStore) -> None:
    store.put(sample_catalog(variant=0), tenant=TENANT)
    store.put(sample_catalog(variant=1), tenant=TENANT)
    store.delete("sample@1", tenant=TENANT)
    with pytest.raises(CatalogDeleted):
        store.restore("sample@1", tenant=TENANT)


def test_diff_names_the_changed_row_and_field(store: CatalogStore) -> None:
    a, b = sample_catalog(variant=0), sample_catalog(variant=5)
    tables = {t.table: t for t in diff_catalogs(a, b)}
    assert tables["servers"].changed == {
        "SRV-H100": {"price_cents": (a.servers[0].price_cents, b.servers[0].price_cents)}
    }
    assert all(t.empty for name, t in tables.items() if name != "servers")


def test_diff_lists_added_and_removed_rows() -> None:
    a, b = sample_catalog(links=3), sample_catalog(links=4)
    links = {t.table: t for t in diff_catalogs(a, b)}["links"]
    assert len(links.added) == 1 and not links.removed
    links_back = {t.table: t for t in diff_catalogs(b, a)}["links"]
    assert links_back.removed == links.added and not links_back.added


def test_a_store_of_schema_1_keeps_its_numbers_and_never_reuses_them(tmp_path: Path) -> None:
    """A store written before the high-water mark existed: its rows survive the upgrade and
    the next import follows its highest version."""
    old = sample_catalog(variant=0)
    data = canonical_json(old)
    conn = sqlite3.connect(tmp_path / DB_FILENAME)
    conn.executescript(
        """
        CREATE TABLE catalog_versions (
            tenant TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL,
            vendor TEXT NOT NULL, quote_date TEXT, created_at TEXT NOT NULL,
            row_count INTEGER NOT NULL, size_bytes INTEGER NOT NULL, request_id TEXT,
            canonical BLOB NOT NULL, PRIMARY KEY (tenant, id), UNIQUE (tenant, name, version),
            UNIQUE (tenant, request_id));
        PRAGMA user_version = 1;
        """
    )
    conn.execute(
        "INSERT INTO catalog_versions VALUES (?, ?, 'sample', 4, 'Acme', NULL,"
        " '2026-01-01T00:00:00+00:00', 1, ?, NULL, ?)",
        (TENANT, content_hash(old), len(data), data),
    )
    conn.commit()
    conn.close()
    with CatalogStore(tmp_path) as s:
        assert s.info("sample@4", tenant=TENANT).id == content_hash(old)
        assert s.put(sample_catalog(variant=1), tenant=TENANT).version == 5


# ------------------------------------------------------------------ CLI
def _procure(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_diff_and_restore(tmp_path: Path) -> None:
    with CatalogStore(tmp_path) as s:
        s.put(sample_catalog(variant=0), tenant=TENANT)
        s.put(sample_catalog(variant=1), tenant=TENANT)
    where = ("--data-dir", str(tmp_path), "--tenant", TENANT)
    shown = _procure("catalog", "diff", "sample@1", "sample@2", *where)
    assert shown.exit_code == 0
    assert "servers: 0 added, 0 removed, 1 changed" in shown.output
    assert "price_cents" in shown.output
    as_json = json.loads(
        _procure("catalog", "diff", "sample@1", "sample@2", "--format", "json", *where).output
    )
    servers = next(t for t in as_json if t["table"] == "servers")
    assert list(servers["changed"]) == ["SRV-H100"]
    restored = _procure("catalog", "restore", "sample@1", *where)
    assert restored.exit_code == 0 and restored.output.startswith("stored sample@3")
    same = _procure("catalog", "diff", "sample@1", "sample@3", *where)
    assert "identical content" in same.output
