"""``--resume`` checks that the directory was written from the same inputs: an edited spec
or a re-imported catalog is refused with what differs, and ``--allow-changed`` reruns only
the changed scenarios, replacing their rows (issue 20, item 3)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from batch_support import FAST_DEFAULTS, fast_spec, write_spec
from catalog_files import SMALL
from cli_support import run

from optimizer.batch import LocalEngine, plan_batch, read_results, run_batch
from optimizer.batch.runner import MANIFEST_FILE, InputsChanged
from optimizer.batch.spec import BatchPlan, spec_from_document
from optimizer.batch.writer import RESPONSES_FILE
from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.catalog.store import CatalogStore


def _plan(doc: dict[str, object], data_dir: Path | None = None) -> BatchPlan:
    return plan_batch(spec_from_document(doc), data_dir=data_dir)


def _ids_once_each(out: Path) -> list[str]:
    """Committed scenario ids, after checking responses.jsonl holds the same ids once each."""
    ids = sorted(read_results(out)["scenario_id"])
    lines = (out / RESPONSES_FILE).read_text().splitlines()
    assert sorted(json.loads(x)["scenario_id"] for x in lines) == ids
    assert len(set(ids)) == len(ids)
    return ids


def _small(price_bump_cents: int = 0) -> Catalog:
    catalog = load_catalog(SMALL)
    server = dataclasses.replace(
        catalog.servers[0], price_cents=catalog.servers[0].price_cents + price_bump_cents
    )
    return dataclasses.replace(catalog, servers=(server, *catalog.servers[1:]))


def test_resume_with_another_spec_is_refused_and_names_the_change(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with LocalEngine(1) as engine:
        run_batch(_plan(fast_spec([24.0])), out, engine=engine, report=False)
        with pytest.raises(InputsChanged, match="scenarios changed") as refused:
            run_batch(_plan(fast_spec([48.0])), out, engine=engine, resume=True, report=False)
    assert "--allow-changed" in str(refused.value)
    assert len(_ids_once_each(out)) == 2  # nothing was mixed in


def test_resume_after_a_catalog_reimport_is_refused_and_names_the_catalog(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    with CatalogStore(data) as store:
        store.put(_small(), tenant="default")
    doc = {"catalogs": ["small-test"], "defaults": FAST_DEFAULTS}
    out = tmp_path / "out"
    with LocalEngine(1) as engine:
        run_batch(_plan(doc, data), out, engine=engine, report=False)
        with CatalogStore(data) as store:
            store.put(_small(price_bump_cents=100), tenant="default")  # small-test@2
        with pytest.raises(InputsChanged, match="catalog 'small-test' now has content id"):
            run_batch(_plan(doc, data), out, engine=engine, resume=True, report=False)
    assert len(_ids_once_each(out)) == 1


def test_allow_changed_replaces_the_rows_of_an_edited_spec(tmp_path: Path) -> None:
    out = tmp_path / "out"
    before, after = _plan(fast_spec([12.0, 24.0])), _plan(fast_spec([24.0, 48.0]))
    with LocalEngine(1) as engine:
        run_batch(before, out, engine=engine, report=False)
        summary = run_batch(
            after, out, engine=engine, resume=True, allow_changed=True, report=False
        )
    assert _ids_once_each(out) == sorted(s.scenario_id for s in after.scenarios)
    assert (summary.replaced, summary.skipped, summary.written) == (2, 2, 2)
    fingerprint = json.loads((out / MANIFEST_FILE).read_text())["fingerprint"]
    assert fingerprint["scenarios"] == 4
    with LocalEngine(1) as engine:  # the new inputs are now the directory's own
        again = run_batch(after, out, engine=engine, resume=True, report=False)
    assert again.written == 0


def test_allow_changed_reruns_only_the_scenarios_of_a_reimported_catalog(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    with CatalogStore(data) as store:
        store.put(_small(), tenant="default")
    doc = fast_spec([24.0, 48.0], catalogs=["small-test", "infiniband-ndr"])
    out = tmp_path / "out"
    with LocalEngine(1) as engine:
        run_batch(_plan(doc, data), out, engine=engine, report=False)
        with CatalogStore(data) as store:
            store.put(_small(price_bump_cents=100), tenant="default")
        plan = _plan(doc, data)
        summary = run_batch(plan, out, engine=engine, resume=True, allow_changed=True, report=False)
    assert _ids_once_each(out) == sorted(s.scenario_id for s in plan.scenarios)
    assert (summary.replaced, summary.skipped, summary.written) == (2, 2, 2)


def test_the_cli_refuses_a_changed_spec_with_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path / "spec.json", fast_spec([24.0]))
    out = str(tmp_path / "out")
    assert run(capsys, "batch", str(spec), "--out", out, "--workers", "1", "-q").code == 0
    write_spec(spec, fast_spec([48.0]))
    refused = run(capsys, "batch", str(spec), "--out", out, "--workers", "1", "--resume")
    assert refused.code == 3 and "--allow-changed" in refused.err
    allowed = run(
        capsys, "batch", str(spec), "--out", out, "--workers", "1", "--resume", "--allow-changed"
    )
    assert allowed.code == 0 and "2 rows of changed inputs replaced" in allowed.out


def test_allow_changed_without_resume_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path / "spec.json", fast_spec([24.0]))
    got = run(capsys, "batch", str(spec), "--out", str(tmp_path / "o"), "--allow-changed")
    assert got.code == 2
