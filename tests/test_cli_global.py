"""What every `procure` run promises: --version, --help, completion, global options, and
errors as one stderr line with a documented exit status (never a traceback without --debug)."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_files import copy_small, set_cell
from cli_support import SMALL_SCENARIO, run, run_process

from client import transport
from optimizer import __version__

FEASIBLE = (*SMALL_SCENARIO, "--target-hours", "24", "--top-k", "1")


def test_version_is_printed_by_the_installed_entry_point() -> None:
    result = run_process("--version")
    assert result.code == 0
    assert result.out.strip() == f"procure, version {__version__}"


def test_help_lists_every_command_and_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "--help")
    assert result.code == 0
    for command in ("optimize", "sweep", "estimate", "catalog", "batch", "serve", "completion"):
        assert f"  {command} " in result.out
    assert "5 server unavailable" in " ".join(result.out.split())


def test_an_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "optimise")
    assert result.code == 2
    assert "No such command 'optimise'" in result.err and "Traceback" not in result.err


def test_a_missing_request_file_is_a_usage_error_naming_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "optimize", "no-such-request.json")
    assert result.code == 2 and "no-such-request.json" in result.err


def test_a_bad_value_is_one_line_naming_the_field_and_exits_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, "optimize", *SMALL_SCENARIO, "--target-hours", "-8")
    assert result.code == 3
    assert result.err == (
        "error: constraints.target_training_hours: got -8.0, expected a positive number\n"
    )


def test_an_invalid_catalog_prints_its_problems_and_exits_3(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = copy_small(tmp_path)
    set_cell(folder, "nics", 3, "price_usd", "-800.00")
    result = run(
        capsys,
        "optimize",
        "--catalog",
        str(folder),
        "--workload",
        "bert-large",
        "--target-hours",
        "24",
    )
    assert result.code == 3
    assert result.err.startswith("error: catalog has 1 error(s):")
    assert "nics, row 3, column price_usd: got '-800.00'" in result.err


def test_an_unexpected_error_is_one_line_without_debug(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: object, req: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(transport.Embedded, "optimize", broken)
    result = run(capsys, "optimize", *FEASIBLE)
    assert result.code == 1
    assert result.err == ("internal error: RuntimeError: boom (run with --debug for details)\n")


def test_debug_lets_the_traceback_through(monkeypatch: pytest.MonkeyPatch) -> None:
    from client.cli import main

    def broken(self: object, req: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(transport.Embedded, "optimize", broken)
    with pytest.raises(RuntimeError, match="boom"):
        main(["--debug", "optimize", *FEASIBLE])


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script_for_the_shell(
    capsys: pytest.CaptureFixture[str], shell: str
) -> None:
    result = run(capsys, "completion", shell)
    assert result.code == 0
    assert "_PROCURE_COMPLETE" in result.out and f"{shell}_complete" in result.out


def test_completion_completes_command_names() -> None:
    result = run_process(
        env={"_PROCURE_COMPLETE": "bash_complete", "COMP_WORDS": "procure sw", "COMP_CWORD": "1"}
    )
    assert result.code == 0
    assert "plain,sweep" in result.out.split()


def test_global_and_per_command_data_dir_and_tenant_mean_the_same_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = str(tmp_path / "store")
    imported = run(
        capsys, "--data-dir", store, "--tenant", "acme", "catalog", "import", SMALL_SCENARIO[1]
    )
    listed = run(
        capsys, "catalog", "list", "--data-dir", store, "--tenant", "acme", "--format", "json"
    )
    other = run(capsys, "--data-dir", store, "catalog", "list", "--format", "json")
    assert imported.code == 0 and imported.out.startswith("stored small-test@1")
    assert '"name": "small-test"' in listed.out
    assert other.out.strip() == "[]"  # tenant "default" sees nothing of acme's


def test_a_stored_catalog_id_resolves_through_the_global_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = str(tmp_path / "store")
    run(capsys, "--data-dir", store, "catalog", "import", SMALL_SCENARIO[1])
    result = run(
        capsys,
        "--data-dir",
        store,
        "optimize",
        "--catalog",
        "small-test@1",
        *FEASIBLE[2:],
        "--format",
        "json",
    )
    assert result.code == 0 and '"status": "OPTIMAL"' in result.out
