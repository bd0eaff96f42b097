"""The versioned catalog store: content-addressed, immutable versions, one tenant at a time."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import multiprocessing.synchronize
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from catalog_samples import sample_catalog
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from client.cli import cli, main
from optimizer.catalog.canonical import canonical_json, catalog_from_canonical, content_hash
from optimizer.catalog.model import Link
from optimizer.catalog.resolve import bundled_catalogs, resolve_catalog
from optimizer.catalog.store import DB_FILENAME, CatalogStore
from optimizer.errors import InvalidInput, NotFound

TENANT = "acme"


@pytest.fixture
def store(tmp_path: Path) -> CatalogStore:
    with CatalogStore(tmp_path / "data") as s:
        yield s


# ------------------------------------------------------------------ canonical form
@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.booleans())
def test_hash_ignores_row_order_and_int_float_spelling(rnd, as_int: bool) -> None:
    catalog = sample_catalog(links=6)
    links = list(catalog.links)
    rnd.shuffle(links)
    if as_int:  # a loader may hand 2 or 2.0 for a decimal column
        links = [dataclasses.replace(lk, reach_m=int(lk.reach_m)) for lk in links]
    assert content_hash(dataclasses.replace(catalog, links=tuple(links))) == content_hash(catalog)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=10**10), st.text(max_size=40))
def test_canonical_json_round_trips_exactly(price_cents: int, source: str) -> None:
    catalog = sample_catalog()
    link = dataclasses.replace(
        catalog.links[0],
        price_cents=price_cents,
        availability=dataclasses.replace(catalog.links[0].availability, source=source),
    )
    catalog = dataclasses.replace(catalog, links=(link, *catalog.links[1:]))
    data = canonical_json(catalog)
    assert canonical_json(catalog_from_canonical(data)) == data


def test_negative_zero_hashes_as_zero() -> None:
    catalog = sample_catalog()
    nic = dataclasses.replace(catalog.nics[0], power_w=-0.0)
    zero = dataclasses.replace(catalog.nics[0], power_w=0)
    assert content_hash(dataclasses.replace(catalog, nics=(nic,))) == content_hash(
        dataclasses.replace(catalog, nics=(zero,))
    )


def test_any_content_change_changes_the_hash() -> None:
    assert content_hash(sample_catalog(variant=0)) != content_hash(sample_catalog(variant=1))


def test_a_version_stored_before_a_defaulted_field_existed_still_decodes() -> None:
    doc = json.loads(canonical_json(sample_catalog()))
    for row in doc["price_breaks"]:
        del row["source"]  # as stored before PriceBreak.source was added
    catalog = catalog_from_canonical(json.dumps(doc).encode())
    assert catalog.price_breaks[0].source == ""


def test_garbage_is_not_a_canonical_catalog() -> None:
    with pytest.raises(InvalidInput):
        catalog_from_canonical(b'{"canonical_version": 1, "meta": {}}')


# ------------------------------------------------------------------ put / get / list
def test_put_then_get_returns_the_same_content(store: CatalogStore) -> None:
    info = store.put(sample_catalog(), tenant=TENANT)
    assert info.id == content_hash(sample_catalog())
    assert content_hash(store.get(info.id, tenant=TENANT)) == info.id


def test_identical_content_returns_the_existing_version(store: CatalogStore) -> None:
    first = store.put(sample_catalog(), tenant=TENANT)
    again = store.put(sample_catalog(), tenant=TENANT)
    assert again == first
    assert len(store.list(TENANT)) == 1


def test_new_import_of_a_name_adds_a_version_and_keeps_the_old(store: CatalogStore) -> None:
    v1 = store.put(sample_catalog(variant=0), tenant=TENANT)
    v2 = store.put(sample_catalog(variant=1), tenant=TENANT)
    assert (v1.version, v2.version) == (1, 2)
    assert content_hash(store.get("sample@1", tenant=TENANT)) == v1.id
    assert content_hash(store.get("sample", tenant=TENANT)) == v2.id  # a bare name is the latest


@pytest.mark.parametrize("ref", ["sample@1", "FULL", "PREFIX"])
def test_a_version_is_found_by_name_at_version_id_or_id_prefix(
    store: CatalogStore, ref: str
) -> None:
    info = store.put(sample_catalog(), tenant=TENANT)
    store.put(sample_catalog(variant=1), tenant=TENANT)
    ref = {"FULL": info.id, "PREFIX": info.id[:8]}.get(ref, ref)
    assert store.info(ref, tenant=TENANT) == info


@pytest.mark.parametrize("ref", ["nope", "sample@9", "abcdef012345", "", "sample@"])
def test_unknown_reference_is_not_found(store: CatalogStore, ref: str) -> None:
    store.put(sample_catalog(), tenant=TENANT)
    with pytest.raises(NotFound):
        store.get(ref, tenant=TENANT)


def test_an_ambiguous_id_prefix_is_refused(
    store: CatalogStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("optimizer.catalog.store.MIN_ID_PREFIX_CHARS", 1)
    # 17 ids over 16 hex digits: two share their first digit (pigeonhole).
    infos = [store.put(sample_catalog(variant=n), tenant=TENANT) for n in range(17)]
    first_digits = [i.id[0] for i in infos]
    shared = next(d for d in first_digits if first_digits.count(d) > 1)
    with pytest.raises(InvalidInput, match="several"):
        store.get(shared, tenant=TENANT)


def test_list_orders_by_name_then_version(store: CatalogStore) -> None:
    store.put(sample_catalog("b"), tenant=TENANT)
    store.put(sample_catalog("a", variant=1), tenant=TENANT)
    store.put(sample_catalog("a", variant=2), tenant=TENANT)
    assert [i.ref for i in store.list(TENANT)] == ["a@1", "a@2", "b@1"]


def test_data_survives_reopening(tmp_path: Path) -> None:
    with CatalogStore(tmp_path) as s:
        info = s.put(sample_catalog(), tenant=TENANT)
    with CatalogStore(tmp_path) as s:
        assert s.info("sample", tenant=TENANT) == info


# ------------------------------------------------------------------ delete
def test_deleting_the_latest_makes_the_previous_latest(store: CatalogStore) -> None:
    v1 = store.put(sample_catalog(variant=0), tenant=TENANT)
    store.put(sample_catalog(variant=1), tenant=TENANT)
    store.delete("sample", tenant=TENANT)
    assert store.info("sample", tenant=TENANT) == v1


def test_deleting_all_versions_of_a_name(store: CatalogStore) -> None:
    store.put(sample_catalog(variant=0), tenant=TENANT)
    store.put(sample_catalog(variant=1), tenant=TENANT)
    other = store.put(sample_catalog("other"), tenant=TENANT)
    deleted = store.delete("sample@1", tenant=TENANT, all_versions=True)
    assert [d.version for d in deleted] == [1, 2]
    assert store.list(TENANT) == [other]


def test_versions_are_never_reused_after_a_delete(store: CatalogStore) -> None:
    store.put(sample_catalog(variant=0), tenant=TENANT)
    store.put(sample_catalog(variant=1), tenant=TENANT)
    store.delete("sample@1", tenant=TENANT)
    assert store.put(sample_catalog(variant=2), tenant=TENANT).version == 3


# ------------------------------------------------------------------ tenants and safety
def test_another_tenants_catalog_is_not_found(store: CatalogStore) -> None:
    info = store.put(sample_catalog(), tenant="alice")
    for ref in ("sample", "sample@1", info.id, info.id[:8]):
        with pytest.raises(NotFound) as caught:
            store.get(ref, tenant="bob")
        assert "alice" not in str(caught.value)
    with pytest.raises(NotFound):
        store.delete("sample", tenant="bob")
    assert store.list("bob") == []
    assert store.info("sample", tenant="alice") == info


def test_tenants_version_the_same_name_independently(store: CatalogStore) -> None:
    a = store.put(sample_catalog(variant=0), tenant="alice")
    b = store.put(sample_catalog(variant=1), tenant="bob")
    assert (a.version, b.version) == (1, 1)


def test_empty_tenant_is_invalid(store: CatalogStore) -> None:
    with pytest.raises(InvalidInput):
        store.list(" ")


def test_retried_request_id_returns_the_first_import(store: CatalogStore) -> None:
    first = store.put(sample_catalog(), tenant=TENANT, request_id="req-1")
    assert store.put(sample_catalog(), tenant=TENANT, request_id="req-1") == first
    with pytest.raises(InvalidInput, match="request_id"):
        store.put(sample_catalog(variant=5), tenant=TENANT, request_id="req-1")
    assert len(store.list(TENANT)) == 1


def test_sql_looking_text_is_stored_literally(store: CatalogStore) -> None:
    evil = "x'; DROP TABLE catalog_versions;--"
    catalog = sample_catalog(name=evil, link_sku_prefix=evil)
    info = store.put(catalog, tenant=evil)
    got = store.get(evil, tenant=evil)
    assert got.links[0].sku.startswith(evil)
    assert store.list(evil) == [info]


def test_the_database_uses_wal_and_passes_integrity_check(store: CatalogStore) -> None:
    store.put(sample_catalog(), tenant=TENANT)
    conn = sqlite3.connect(store.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


# ------------------------------------------------------------------ several processes
PUTS_PER_WRITER = 5


def _put_in_child(data_dir: str, n: int, start: multiprocessing.synchronize.Barrier) -> None:
    start.wait()  # all writers hit the database together
    with CatalogStore(data_dir) as s:
        for k in range(PUTS_PER_WRITER):
            # Half the writers race for versions of one shared name.
            name = "shared" if n % 2 else f"own-{n}"
            s.put(sample_catalog(name, variant=n * PUTS_PER_WRITER + k), tenant=TENANT)


@pytest.mark.slow
def test_twenty_concurrent_writer_processes_all_succeed(tmp_path: Path) -> None:
    # forkserver: the children fork from one fresh, single-threaded interpreter that has
    # imported the store, so the test measures the store, not 20 interpreter start-ups, and no
    # child inherits a lock held by a thread an earlier test left in this worker (B1).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["optimizer.catalog.store", "catalog_samples"])
    start = ctx.Barrier(20)
    writers = [ctx.Process(target=_put_in_child, args=(str(tmp_path), n, start)) for n in range(20)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
    assert [w.exitcode for w in writers] == [0] * 20
    with CatalogStore(tmp_path) as s:
        infos = s.list(TENANT)
    assert len({i.id for i in infos}) == 20 * PUTS_PER_WRITER
    shared = sorted(i.version for i in infos if i.name == "shared")
    assert shared == list(range(1, 10 * PUTS_PER_WRITER + 1))


def test_threads_may_share_one_store(store: CatalogStore) -> None:
    def put_and_read(n: int) -> str:
        info = store.put(sample_catalog(f"t{n % 4}", variant=n), tenant=TENANT)
        return content_hash(store.get(info.id, tenant=TENANT))

    with ThreadPoolExecutor(max_workers=8) as pool:
        hashes = list(pool.map(put_and_read, range(32)))
    assert hashes == [content_hash(sample_catalog(f"t{n % 4}", variant=n)) for n in range(32)]
    assert len(store.list(TENANT)) == 32


def test_a_store_carried_into_a_forked_child_opens_its_own_connection(tmp_path: Path) -> None:
    # The fork happens in a fresh interpreter (spawn), not in this pytest worker: a fork
    # inherits any lock a thread left by an earlier test holds (B1), which would hang the
    # child for reasons that are not the store's.
    ctx = multiprocessing.get_context("spawn")
    refs = ctx.Queue()
    scenario = ctx.Process(target=_fork_with_an_open_store, args=(str(tmp_path), refs))
    scenario.start()
    scenario.join(60)
    assert scenario.exitcode == 0
    assert refs.get(timeout=5) == ("child@1", ["child@1", "sample@1"])


def _fork_with_an_open_store(data_dir: str, refs: multiprocessing.Queue) -> None:
    """The parent's connection is open when it forks; the child's put must not use it."""
    with CatalogStore(data_dir) as store:
        store.put(sample_catalog(), tenant=TENANT)
        ctx = multiprocessing.get_context("fork")
        child_refs = ctx.Queue()
        child = ctx.Process(target=_put_from_fork, args=(store, child_refs))
        child.start()
        child.join(30)
        assert child.exitcode == 0
        refs.put((child_refs.get(timeout=5), [i.ref for i in store.list(TENANT)]))


def _put_from_fork(store: CatalogStore, refs: multiprocessing.Queue) -> None:
    refs.put(store.put(sample_catalog("child"), tenant=TENANT).ref)


# ------------------------------------------------------------------ export round trip
@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_export_then_import_gives_the_same_hash(
    store: CatalogStore, tmp_path: Path, fmt: str
) -> None:
    from optimizer.catalog import load_catalog

    original = load_catalog(bundled_catalogs()[0])
    info = store.put(original, tenant=TENANT)
    dest = tmp_path / ("out.xlsx" if fmt == "xlsx" else "out")
    store.export(info.id, dest, fmt, tenant=TENANT)
    assert content_hash(load_catalog(dest)) == info.id
    assert store.put(load_catalog(dest), tenant=TENANT) == info


# ------------------------------------------------------------------ resolve
def test_resolve_finds_paths_bundled_names_and_stored_refs(tmp_path: Path) -> None:
    folder = bundled_catalogs()[0]
    by_path = resolve_catalog(str(folder), data_dir=tmp_path)
    assert content_hash(resolve_catalog(folder.name, data_dir=tmp_path)) == content_hash(by_path)
    with CatalogStore(tmp_path) as s:
        info = s.put(sample_catalog("mine"), tenant=TENANT)
    assert content_hash(resolve_catalog("mine@1", data_dir=tmp_path, tenant=TENANT)) == info.id


def test_resolve_of_an_unknown_name_does_not_create_a_store(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        resolve_catalog("no-such-catalog", data_dir=tmp_path / "fresh")
    assert not (tmp_path / "fresh" / DB_FILENAME).exists()


def test_links_of_a_large_catalog_round_trip(store: CatalogStore) -> None:
    catalog = sample_catalog(links=2000)
    info = store.put(catalog, tenant=TENANT)
    got = store.get(info.id, tenant=TENANT)
    assert all(isinstance(lk, Link) for lk in got.links)
    assert len(got.links) == 2000 and content_hash(got) == info.id


# ------------------------------------------------------------------ CLI
def _procure(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_imports_lists_exports_and_deletes(tmp_path: Path) -> None:
    folder = str(bundled_catalogs()[0])
    store_args = ("--data-dir", str(tmp_path / "data"), "--tenant", TENANT)
    imported = _procure("catalog", "import", folder, "--name", "mine", *store_args)
    assert imported.exit_code == 0 and "stored mine@1" in imported.output
    listed = json.loads(_procure("catalog", "list", "--format", "json", *store_args).output)
    assert [(e["name"], e["version"]) for e in listed] == [("mine", 1)]
    out = tmp_path / "out"
    assert _procure("catalog", "export", "mine", str(out), *store_args).exit_code == 0
    again = _procure("catalog", "import", str(out), *store_args).output.splitlines()
    assert again[-1].startswith("stored mine@1")  # after the catalog's warnings, if any
    assert _procure("catalog", "delete", "mine", *store_args).exit_code == 0
    assert json.loads(_procure("catalog", "list", "--format", "json", *store_args).output) == []


def test_cli_import_prints_each_catalog_warning_once(tmp_path: Path) -> None:
    folder = next(str(p) for p in bundled_catalogs() if p.name == "ethernet-budget")
    store_args = ("--data-dir", str(tmp_path / "data"), "--tenant", TENANT)

    out = _procure("catalog", "import", folder, "--name", "mine", *store_args).output

    # its L40S row names no GPU generation the time model is calibrated for
    assert "warning: servers, row 4, column gpu_model: got 'L40S'" in out
    assert "warning: warning" not in out


def test_cli_reports_an_unknown_reference_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["catalog", "export", "nope", str(tmp_path / "x"), "--data-dir", str(tmp_path)])
    assert exited.value.code == NotFound.exit_code
    assert "not found" in capsys.readouterr().err
