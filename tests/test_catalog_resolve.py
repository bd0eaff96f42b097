"""Where bundled catalog names resolve: the package's own data, or ``$PROCURE_CATALOGS``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from catalog_files import SMALL

from optimizer.catalog.resolve import bundled_catalogs, bundled_catalogs_dir, resolve_catalog

ROOT = Path(__file__).resolve().parents[1]


def test_in_a_checkout_the_bundled_catalogs_are_the_top_level_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """optimizer/catalogs links to catalogs/, which stays the one copy to edit."""
    monkeypatch.delenv("PROCURE_CATALOGS", raising=False)
    assert bundled_catalogs_dir() == (ROOT / "catalogs").resolve()
    assert [p.name for p in bundled_catalogs()] == [
        "ethernet-budget",
        "gen-2026",
        "infiniband-ndr",
        "roce-spectrum",
    ]


def test_procure_catalogs_replaces_the_bundled_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shutil.copytree(SMALL, tmp_path / "mine")
    monkeypatch.setenv("PROCURE_CATALOGS", str(tmp_path))
    assert bundled_catalogs() == [tmp_path / "mine"]
    assert resolve_catalog("mine", data_dir=tmp_path / "store").servers
