"""`procure sweep --workload` takes preset names only (issue 17, fixB): the portfolio spelling
NAME:TARGET_HOURS (or NAME@RUNS/yr) of `procure optimize` is refused with exit 3 naming the
flag, instead of failing as an unknown model."""

from __future__ import annotations

import pytest
from catalog_files import SMALL
from cli_support import run

from client.exits import EXIT_INVALID_INPUT


@pytest.mark.parametrize("value", ["bert-large:8", "bert-large@4/yr", "bert-large:8@4/yr"])
def test_the_portfolio_spelling_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    result = run(capsys, "sweep", "--catalog", str(SMALL), "--workload", value, "--targets", "8")
    assert result.code == EXIT_INVALID_INPUT
    assert "--workload" in result.err
    assert repr(value) in result.err
    assert "procure optimize" in result.err


def test_a_preset_name_still_sweeps(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(
        capsys,
        "sweep",
        "--catalog",
        str(SMALL),
        "--workload",
        "bert-large",
        "--tokens",
        "2e10",
        "--targets",
        "8",
    )
    assert result.code == 0, result.err
