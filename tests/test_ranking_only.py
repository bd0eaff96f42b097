"""Ranking only (issue 19, batch): ``OptimizeRequest.ranking_only`` skips the explanation
re-solves and nothing else. The designs, BOMs and times are those of the explained answer; what
is left out (rank 1's binding constraints, sensitivity, an infeasible request's diagnosis, the
rule-of-thumb baseline, the TCO comparison) is empty or says "not computed: ranking only"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from cli_support import SMALL_SCENARIO, run
from google.protobuf import json_format

from client.commands.optimize import request_from_flags
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.api import optimize
from optimizer.batch import plan_batch
from optimizer.batch.spec import spec_from_document
from tests.service_support import SMALL_CATALOG, Stubs, serving


def _request(**fields: object) -> optimize_pb2.OptimizeRequest:
    """BERT-Large on a bundled catalog, top 3: the explained answer has a baseline, binding
    constraints and a sensitivity sentence to leave out."""
    return optimize_pb2.OptimizeRequest(
        catalog="infiniband-ndr",
        workload=estimate_pb2.Workload(model="bert-large", training_tokens=2e10),
        constraints=optimize_pb2.Constraints(target_training_hours=24),
        top_k=3,
        **fields,
    )


def _infeasible(**fields: object) -> optimize_pb2.OptimizeRequest:
    """No design trains BERT-Large on 2e10 tokens in 4 hours for $100,000."""
    return optimize_pb2.OptimizeRequest(
        catalog=str(SMALL_CATALOG),
        workload=estimate_pb2.Workload(model="bert-large", training_tokens=2e10),
        constraints=optimize_pb2.Constraints(target_training_hours=4, budget_usd=1e5),
        top_k=1,
        **fields,
    )


def _ranking(resp: optimize_pb2.OptimizeResponse) -> list[dict[str, object]]:
    """The designs without what only the explanations fill (rank 1's binding and the
    sentences), so the explained and the ranking-only answers compare field by field."""
    out = []
    for d in resp.designs:
        copy = optimize_pb2.Design()
        copy.CopyFrom(d)
        copy.ClearField("binding")
        copy.ClearField("explanation")
        out.append(json_format.MessageToDict(copy))
    return out


@pytest.fixture(scope="module")
def both() -> tuple[optimize_pb2.OptimizeResponse, optimize_pb2.OptimizeResponse]:
    return optimize(_request()), optimize(_request(ranking_only=True))


def test_ranking_only_returns_the_same_designs_boms_and_times(both) -> None:
    explained, ranked = both
    assert len(ranked.designs) == 3
    assert _ranking(ranked) == _ranking(explained)
    assert ranked.status == explained.status
    assert [json_format.MessageToDict(p) for p in ranked.pareto] == [
        json_format.MessageToDict(p) for p in explained.pareto
    ]


def test_ranking_only_leaves_out_what_the_re_solves_fill(both) -> None:
    explained, ranked = both
    assert explained.sensitivity and explained.baseline  # there was something to leave out
    assert ranked.sensitivity == "" and ranked.baseline == ""
    assert list(ranked.designs[0].binding) == []
    assert "Binding constraints: not computed: ranking only." in ranked.designs[0].explanation


def test_an_infeasible_request_keeps_its_status_and_has_no_diagnosis() -> None:
    explained = optimize(_infeasible())
    ranked = optimize(_infeasible(ranking_only=True))
    assert explained.status == ranked.status == "INFEASIBLE"
    assert explained.diagnosis  # the explained answer says why
    assert ranked.diagnosis == ""
    assert list(ranked.designs) == []


def test_the_cli_flag_sets_the_request_field() -> None:
    assert request_from_flags(ranking_only=True).ranking_only is True
    assert request_from_flags().ranking_only is False


def test_procure_optimize_ranking_only_answers_without_explanations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = (*SMALL_SCENARIO, "--target-hours", "8", "--top-k", "1", "--format", "json")
    result = run(capsys, "optimize", *args, "--ranking-only")
    assert result.code == 0, result.err
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert resp.designs and resp.baseline == "" and resp.sensitivity == ""
    assert "not computed: ranking only" in resp.designs[0].explanation


def test_a_request_file_may_ask_for_ranking_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "request.json"
    request = _infeasible(ranking_only=True)
    path.write_text(json_format.MessageToJson(request))
    result = run(capsys, "optimize", str(path), "--format", "json")
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert resp.status == "INFEASIBLE" and resp.diagnosis == ""


def _batch_requests(doc: dict[str, object]) -> list[dict[str, object]]:
    plan = plan_batch(spec_from_document(doc))
    return [json.loads(s.request_json) for s in plan.scenarios]


def test_the_batch_spec_defaults_set_ranking_only_for_every_scenario() -> None:
    requests = _batch_requests(
        {
            "catalogs": ["infiniband-ndr"],
            "defaults": {"ranking_only": True, "top_k": 1},
            "scenarios": [
                {"workload": {"model": "bert-large"}},
                {"workload": {"model": "llama3-8b"}},
            ],
        }
    )
    assert [r.get("rankingOnly", r.get("ranking_only")) for r in requests] == [True, True]


def test_a_scenario_may_ask_for_its_explanations_back() -> None:
    requests = _batch_requests(
        {
            "catalogs": ["infiniband-ndr"],
            "defaults": {"ranking_only": True},
            "scenarios": [
                {"workload": {"model": "bert-large"}},
                {"workload": {"model": "bert-large"}, "ranking_only": False, "top_k": 2},
            ],
        }
    )
    flags = [r.get("rankingOnly", r.get("ranking_only", False)) for r in requests]
    assert flags == [True, False]


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    for address in serving(tmp_path_factory.mktemp("ranking_only")):
        with grpc.insecure_channel(address) as channel:
            yield Stubs(channel)


@pytest.mark.slow  # starts a server
def test_ranking_only_round_trips_over_grpc(stubs: Stubs, both) -> None:
    explained, _ = both
    reply = stubs.optimizer.Optimize(_request(ranking_only=True), timeout=120)
    assert _ranking(reply) == _ranking(explained)
    assert reply.sensitivity == "" and reply.baseline == ""
    assert "not computed: ranking only" in reply.designs[0].explanation
