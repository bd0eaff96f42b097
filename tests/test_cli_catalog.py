"""`procure catalog validate|show`: what the user sees and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_files import SMALL, copy_small, set_cell

from client.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(["catalog", *args])
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    folder = copy_small(tmp_path)
    set_cell(folder, "switches", 2, "fabric_family", "omnipath")
    set_cell(folder, "nics", 3, "price_usd", "-800.00")
    return folder


def test_validate_a_valid_catalog_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "validate", str(SMALL))
    assert code == 0
    assert ": valid, 0 error(s)" in out


def test_validate_an_invalid_catalog_prints_every_error_and_exits_3(
    capsys: pytest.CaptureFixture[str], broken: Path
) -> None:
    code, out, _ = _run(capsys, "validate", str(broken))
    assert code == 3
    assert "omnipath" in out and "-800.00" in out and "fabric_family" in out
    assert "invalid, 2 error(s)" in out


def test_validate_json_lists_problems_with_their_location(
    capsys: pytest.CaptureFixture[str], broken: Path
) -> None:
    code, out, _ = _run(capsys, "validate", str(broken), "--format", "json")
    report = json.loads(out)
    assert code == 3 and report["valid"] is False and report["errors"] == 2
    assert sorted((p["table"], p["row"], p["column"]) for p in report["problems"]) == [
        ("nics", 3, "price_usd"),
        ("switches", 2, "fabric_family"),
    ]


def test_validate_a_missing_path_is_one_line_and_exit_3(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _run(capsys, "validate", str(tmp_path / "nope"))
    assert code == 3 and out == ""
    assert err.startswith("error:") and "Traceback" not in err


def test_show_summarises_counts_and_price_ranges(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _run(capsys, "show", str(SMALL), "--format", "json", "--data-dir", str(tmp_path))
    summary = json.loads(out)
    assert code == 0
    assert summary["name"] == "small-test"
    assert summary["rows"] == {
        "servers": 2,
        "nics": 2,
        "switches": 2,
        "links": 4,
        "price_breaks": 2,
    }
    ranges = {
        r["category"]: (r["min_price_usd"], r["max_price_usd"]) for r in summary["price_ranges"]
    }
    assert ranges == {
        "server": ("148390.00", "296644.00"),
        "nic": ("800.00", "2200.00"),
        "switch": ("18000.00", "36000.00"),
        "cable": ("60.00", "150.00"),
        "transceiver": ("450.00", "450.00"),
        "fiber": ("2.50", "2.50"),
    }


def test_show_as_a_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "show", str(SMALL), "--data-dir", str(tmp_path))
    assert code == 0
    assert "small-test" in out and "price ranges" in out and "296,644.00" in out


def test_show_a_bundled_catalog_by_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(
        capsys, "show", "infiniband-ndr", "--format", "json", "--data-dir", str(tmp_path)
    )
    assert code == 0 and json.loads(out)["name"] == "infiniband-ndr"


def test_show_an_invalid_catalog_exits_3(
    capsys: pytest.CaptureFixture[str], broken: Path, tmp_path: Path
) -> None:
    code, _, err = _run(capsys, "show", str(broken), "--data-dir", str(tmp_path))
    assert code == 3 and "omnipath" in err


def test_show_an_unknown_name_exits_3(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "show", "no-such-catalog", "--data-dir", str(tmp_path))
    assert code == 3 and "not found" in err
