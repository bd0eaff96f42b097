"""A portfolio of workloads in the request (issue 17): the --workload spelling, the
``workloads`` field, and errors that name the flag or field at fault."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_files import SMALL
from cli_support import run

from client.commands.optimize import read_optimize_request, request_from_flags
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.optimize.convert import spec_from_proto
from optimizer.optimize.portfolio import YEAR_HOURS
from optimizer.optimize.portfolio_spelling import parse_workload_flag
from optimizer.optimize.request import Objective
from optimizer.reporting.frontier import workload_label
from optimizer.request_limits import MAX_PORTFOLIO_WORKLOADS, check_optimize


def _target(name: str, hours: float = 0.0, runs: float = 0.0) -> optimize_pb2.WorkloadTarget:
    out = optimize_pb2.WorkloadTarget(target_training_hours=hours, runs_per_year=runs)
    out.workload.model = name
    return out


def test_name_colon_hours_is_a_target_in_hours() -> None:
    got = parse_workload_flag("llama3-70b:720")
    assert (got.workload.model, got.target_training_hours, got.runs_per_year) == (
        "llama3-70b",
        720.0,
        0.0,
    )


def test_name_at_runs_per_year_is_a_share_of_the_year() -> None:
    got = parse_workload_flag("mixtral-8x22b@4/yr")
    assert (got.workload.model, got.target_training_hours, got.runs_per_year) == (
        "mixtral-8x22b",
        0.0,
        4.0,
    )


def test_a_target_and_runs_may_be_given_together() -> None:
    got = parse_workload_flag("llama3-70b:720@4/yr")
    assert (got.target_training_hours, got.runs_per_year) == (720.0, 4.0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("llama3-70b:abc", "expected NAME:TARGET_HOURS"),
        ("llama3-70b:-5", "expected NAME:TARGET_HOURS"),
        ("llama3-70b:", "expected NAME:TARGET_HOURS"),
        ("llama3-70b@4", "expected NAME@RUNS/yr"),
        ("llama3-70b@x/yr", "expected NAME@RUNS/yr"),
        (":720", "expected NAME"),
    ],
)
def test_a_bad_spelling_names_the_flag_and_the_expected_form(value: str, expected: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_workload_flag(value)
    assert err.value.field == "--workload"
    assert expected in str(err.value)
    assert repr(value) in str(err.value)


def test_cli_refuses_a_non_numeric_target_with_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    got = run(capsys, "optimize", "--catalog", str(SMALL), "--workload", "llama3-70b:abc")
    assert got.code == 3
    assert "--workload" in got.err
    assert "expected NAME:TARGET_HOURS" in got.err
    assert "Traceback" not in got.err


def test_a_first_bare_name_keeps_todays_meaning() -> None:
    req = request_from_flags(workload=("llama3-70b",), target_hours=720.0)
    assert req.workload.model == "llama3-70b"
    assert not req.workloads
    assert req.constraints.target_training_hours == 720.0


def test_a_single_string_workload_is_todays_request() -> None:
    """The sweep passes one name as a string: unchanged."""
    req = request_from_flags(workload="llama3-8b")
    assert req.workload.model == "llama3-8b"
    assert not req.workloads


def test_repeated_workloads_with_targets_fill_the_workloads_field() -> None:
    req = request_from_flags(workload=("llama3-70b:720", "mixtral-8x22b:480"))
    assert not req.HasField("workload")
    assert [(w.workload.model, w.target_training_hours) for w in req.workloads] == [
        ("llama3-70b", 720.0),
        ("mixtral-8x22b", 480.0),
    ]


def test_tokens_with_a_portfolio_is_refused_naming_the_flag() -> None:
    with pytest.raises(InvalidInput) as err:
        request_from_flags(workload=("llama3-70b:720", "llama3-8b:100"), tokens=1e12)
    assert err.value.field == "--tokens"


def test_the_portfolios_target_is_the_first_workloads_target() -> None:
    req = optimize_pb2.OptimizeRequest(
        workloads=[_target("llama3-70b", 720.0), _target("mixtral-8x22b", 480.0)]
    )
    spec = spec_from_proto(req)
    assert spec.workload.name == "llama3-70b"
    assert spec.constraints.target_training_hours == 720.0
    assert [(w.workload.name, w.target_training_hours) for w in spec.portfolio] == [
        ("llama3-70b", 720.0),
        ("mixtral-8x22b", 480.0),
    ]


def test_runs_a_year_alone_make_the_years_usable_hours_the_target() -> None:
    req = optimize_pb2.OptimizeRequest(
        workloads=[_target("llama3-70b", runs=4.0), _target("mixtral-8x22b", runs=1.0)]
    )
    spec = spec_from_proto(req)
    assert spec.constraints.target_training_hours == YEAR_HOURS
    assert [w.runs_per_year for w in spec.portfolio] == [4.0, 1.0]


def test_one_workload_with_a_target_is_todays_request_not_a_portfolio() -> None:
    req = optimize_pb2.OptimizeRequest(workloads=[_target("llama3-70b", 720.0)])
    spec = spec_from_proto(req)
    assert spec.portfolio == ()
    assert (spec.workload.name, spec.constraints.target_training_hours) == ("llama3-70b", 720.0)


def test_workload_and_workloads_together_put_workload_first_with_the_request_target() -> None:
    req = optimize_pb2.OptimizeRequest(
        workloads=[_target("mixtral-8x22b", 480.0)],
        constraints=optimize_pb2.Constraints(target_training_hours=720.0),
    )
    req.workload.model = "llama3-70b"
    spec = spec_from_proto(req)
    assert [(w.workload.name, w.target_training_hours) for w in spec.portfolio] == [
        ("llama3-70b", 720.0),
        ("mixtral-8x22b", 480.0),
    ]


def test_a_workload_without_a_target_takes_the_requests_target() -> None:
    req = optimize_pb2.OptimizeRequest(
        workloads=[_target("llama3-70b"), _target("llama3-8b", 100.0)],
        constraints=optimize_pb2.Constraints(target_training_hours=720.0),
    )
    assert [w.target_training_hours for w in spec_from_proto(req).portfolio] == [720.0, 100.0]


@pytest.mark.parametrize(
    ("workloads", "field"),
    [
        (
            [_target("llama3-70b", 720.0), _target("llama3-8b")],
            "workloads[1].target_training_hours",
        ),
        (
            [_target("llama3-70b", -1.0), _target("llama3-8b", 9.0)],
            "workloads[0].target_training_hours",
        ),
        (
            [_target("llama3-70b", 720.0), _target("llama3-8b", runs=-2)],
            "workloads[1].runs_per_year",
        ),
        (
            [_target("llama3-70b", 720.0), _target("no-such-model", 9.0)],
            "workloads[1].workload.model",
        ),
        (
            [_target("llama3-70b", 720.0), optimize_pb2.WorkloadTarget(target_training_hours=9)],
            "workloads[1].workload",
        ),
    ],
)
def test_a_bad_workloads_entry_names_its_field(
    workloads: list[optimize_pb2.WorkloadTarget], field: str
) -> None:
    req = optimize_pb2.OptimizeRequest(workloads=workloads)
    with pytest.raises(InvalidInput) as err:
        spec_from_proto(req)
    assert err.value.field == field


def test_min_time_portfolio_without_targets_is_refused() -> None:
    req = optimize_pb2.OptimizeRequest(
        workloads=[_target("llama3-70b"), _target("llama3-8b")],
        objective="min_time",
        constraints=optimize_pb2.Constraints(budget_usd=1e7),
    )
    with pytest.raises(InvalidInput) as err:
        spec_from_proto(req)
    assert err.value.field == "workloads[0].target_training_hours"
    assert (
        spec_from_proto(
            optimize_pb2.OptimizeRequest(
                workloads=[_target("llama3-70b", 720.0), _target("llama3-8b", 100.0)],
                objective="min_time",
                constraints=optimize_pb2.Constraints(budget_usd=1e7),
            )
        ).objective
        is Objective.MIN_TIME
    )


def test_a_portfolio_of_more_than_the_limit_is_refused_before_any_work() -> None:
    req = optimize_pb2.OptimizeRequest(
        workloads=[_target("llama3-8b", 100.0)] * (MAX_PORTFOLIO_WORKLOADS + 1)
    )
    with pytest.raises(InvalidInput) as err:
        check_optimize(req)
    assert err.value.field == "workloads"
    assert f"at most {MAX_PORTFOLIO_WORKLOADS}" in str(err.value)


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        (_target("llama3-8b", runs=-1.0), "workloads[1].runs_per_year"),
        (_target("llama3-8b", hours=float("inf")), "workloads[1].target_training_hours"),
        (_target("llama3-8b", runs=1e12), "workloads[1].runs_per_year"),
    ],
)
def test_request_limits_name_the_portfolio_field(
    entry: optimize_pb2.WorkloadTarget, field: str
) -> None:
    req = optimize_pb2.OptimizeRequest(workloads=[_target("llama3-70b", 720.0), entry])
    with pytest.raises(InvalidInput) as err:
        check_optimize(req)
    assert err.value.field == field


def test_report_titles_name_every_workload_of_a_portfolio() -> None:
    req = request_from_flags(workload=("llama3-70b", "mixtral-8x22b:480"))
    assert workload_label(req) == "llama3-70b + mixtral-8x22b"


def test_the_portfolio_example_reads_as_a_two_workload_portfolio() -> None:
    example = Path(__file__).parents[1] / "examples" / "optimize-portfolio.json"
    spec = spec_from_proto(read_optimize_request(str(example)))
    assert [
        (w.workload.name, w.target_training_hours, w.runs_per_year) for w in spec.portfolio
    ] == [
        ("llama3-70b", 720.0, 4.0),
        ("mixtral-8x22b", 240.0, 1.0),
    ]
