"""Which OSErrors are the user's to fix (exit 3) and which are ours (exit 1).

A file the user named that cannot be read or written is invalid input; a data file of the
program itself that is missing (a broken installation) is an internal error, never blamed
on the user's input.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from cli_support import ROOT, SMALL_SCENARIO, run

import optimizer
from client import transport

ESTIMATE_SPEC = str(ROOT / "examples" / "estimate-llama3-70b.json")


def _missing(path: Path) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))


def test_an_output_file_in_a_missing_folder_is_invalid_input_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "no-such-folder" / "estimate.json"
    result = run(capsys, "estimate", ESTIMATE_SPEC, "--format", "json", "-o", str(target))
    assert result.code == 3
    assert result.err == f"error: {target}: No such file or directory\n"


def test_missing_package_data_is_an_internal_error_naming_the_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure of a wheel built without its data (issue 12): exit 1, not 3."""
    fabrics_csv = Path(optimizer.__file__).parent / "performance" / "fabrics.csv"

    def without_package_data(self: object, req: object) -> None:
        raise _missing(fabrics_csv)

    monkeypatch.setattr(transport.Embedded, "optimize", without_package_data)
    result = run(capsys, "optimize", *SMALL_SCENARIO, "--target-hours", "24")
    assert result.code == 1
    assert result.err.startswith(f"internal error: {fabrics_csv}: No such file or directory")
    assert "reinstall" in result.err


def test_a_missing_bundled_catalog_file_is_an_internal_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a checkout the bundled catalogs live in the top-level catalogs/ folder that
    optimizer/catalogs links to; they are still the program's own files."""
    servers_csv = (Path(optimizer.__file__).parent / "catalogs").resolve() / "x" / "servers.csv"

    def without_catalog_file(self: object, req: object) -> None:
        raise _missing(servers_csv)

    monkeypatch.setattr(transport.Embedded, "optimize", without_catalog_file)
    result = run(capsys, "optimize", *SMALL_SCENARIO, "--target-hours", "24")
    assert result.code == 1


def test_an_oserror_naming_no_file_is_an_internal_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def out_of_processes(self: object, req: object) -> None:
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(transport.Embedded, "optimize", out_of_processes)
    result = run(capsys, "optimize", *SMALL_SCENARIO, "--target-hours", "24")
    assert result.code == 1
    assert result.err.startswith("internal error: BlockingIOError:")
