"""The fabric table: data with sources, ranges, and user overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.errors import InvalidInput
from optimizer.performance.fabrics import DEFAULT_FABRICS, DEFAULT_FABRICS_CSV, load_fabrics


def test_every_default_fabric_has_a_source_and_a_range() -> None:
    for profile in DEFAULT_FABRICS.values():
        assert profile.source
        assert profile.efficiency_low <= profile.efficiency_expected <= profile.efficiency_high
        assert profile.base_latency_us_low <= profile.base_latency_us_high


def test_seed_latency_ordering_holds() -> None:
    """Seed: InfiniBand < 1 us, RoCE 1-3 us, TCP 10-50 us."""
    f = DEFAULT_FABRICS
    assert f["infiniband"].base_latency_us_high <= 1.0
    assert (
        f["infiniband"].base_latency_s("expected")
        < f["roce"].base_latency_s("expected")
        < f["ethernet"].base_latency_s("expected")
    )


def test_a_user_table_replaces_the_defaults(tmp_path: Path) -> None:
    text = DEFAULT_FABRICS_CSV.read_text().replace(
        "infiniband,0.95,0.96,0.98", "infiniband,0.90,0.93,0.97"
    )
    path = tmp_path / "fabrics.csv"
    path.write_text(text)
    assert load_fabrics(path)["infiniband"].efficiency_expected == 0.93


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("infiniband,0.95,0.96,0.98", "infiniband,0.95,0.99,0.98", "efficiency_low <="),
        ("infiniband,0.95,0.96,0.98", "infiniband,x,0.96,0.98", "column efficiency_low"),
        ("infiniband,0.95,0.96,0.98", "infiniband,0.95,0.96,1.5", r"\(0, 1\]"),
    ],
)
def test_a_bad_row_is_refused_with_its_location(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    path = tmp_path / "fabrics.csv"
    path.write_text(DEFAULT_FABRICS_CSV.read_text().replace(old, new))
    with pytest.raises(InvalidInput, match=message):
        load_fabrics(path)
