"""The HTML report page (optimizer/reporting): self-contained, built from the response
messages alone, one point per design, bills of materials that add up, hostile text inert;
`--format html` on optimize and sweep, report.html from a batch. The browser checks are in
tests/test_report_browser.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_support import SMALL_SCENARIO, run
from google.protobuf import json_format
from service_support import TOKEN_A, serve_with_tokens

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.api import optimize
from optimizer.batch import load_spec, run_batch
from optimizer.batch.writer import read_results
from optimizer.reporting import Scenario, design_points, render_html
from optimizer.reporting.frontier import points_of
from optimizer.reporting.html import breakdown_figure
from optimizer.reporting.model import top_designs
from optimizer.reporting.ticks import log_ticks, tick_label

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
SMALL_CATALOG = SMALL_SCENARIO[1]


def _request(target_hours: float, catalog: str = SMALL_CATALOG) -> optimize_pb2.OptimizeRequest:
    req = optimize_pb2.OptimizeRequest(catalog=catalog, top_k=3)
    req.workload.model = "bert-large"
    req.workload.training_tokens = 2e10
    req.constraints.target_training_hours = target_hours
    return req


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    """Two targets on the small catalog: ranked designs with BOMs and frontier points."""
    return [
        Scenario(r, optimize(r), label=str(n)) for n, r in enumerate([_request(8), _request(24)], 1)
    ]


class _Loads(HTMLParser):
    """Every URL the page would fetch: script src, link href, img src, iframe src."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"script": "src", "link": "href", "img": "src", "iframe": "src"}.get(tag)
        self.urls += [v or "" for k, v in attrs if k == wanted]


def _embedded_boms(page: str) -> dict[str, dict[str, object]]:
    match = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page)
    assert match is not None
    return json.loads(match.group(1))["boms"]  # type: ignore[no-any-return]


def test_the_page_fetches_nothing_it_inlines_plotly_and_the_data(scenarios: list[Scenario]) -> None:
    page = render_html(scenarios, title="t", generated_at=WHEN)
    loads = _Loads()
    loads.feed(page)
    assert loads.urls == []
    assert "Plotly.newPlot" in page and 'id="report-data"' in page


def test_every_design_the_responses_report_is_one_point_per_catalog(
    scenarios: list[Scenario],
) -> None:
    responses = [s.response for s in scenarios if s.response is not None]
    assert len(design_points(scenarios)) == len(points_of(responses))
    twice = [*scenarios, Scenario(_request(8, catalog="copy"), scenarios[0].response)]
    assert len(design_points(twice)) == len(points_of(responses)) + len(
        points_of([scenarios[0].response])  # type: ignore[list-item]
    )


def test_a_ranked_design_on_the_frontier_is_one_point_with_its_bill_of_materials(
    scenarios: list[Scenario],
) -> None:
    """The response's frontier repeats its ranked designs with a lifetime cost (tco_usd) their
    own points leave out: keyed on every field, each was drawn twice, the frontier-only copy
    over the ranked one, and a click on it found no bill of materials."""
    resp = scenarios[0].response
    assert resp is not None
    on_front = [p for p in resp.pareto if p.tco_usd]
    assert on_front  # the case: frontier points that carry a TCO
    points = design_points(scenarios[:1])
    at = {(p.capex_usd, p.training_time_hours, p.gpus, p.topology): p for p in points}
    assert len(at) == len(points)  # no two points of one design
    ranked = [
        d
        for d in resp.designs
        if (d.capex_usd, d.training_time_hours)
        in {(p.capex_usd, p.training_time_hours) for p in on_front}
    ]
    assert ranked and all(
        at[d.capex_usd, d.training_time_hours, d.gpus, d.topology].design is not None
        for d in ranked
    )


def test_each_inlined_bill_of_materials_adds_up_to_its_capex(scenarios: list[Scenario]) -> None:
    boms = _embedded_boms(render_html(scenarios, title="t", generated_at=WHEN))
    ranked = sum(1 for p in design_points(scenarios) if p.design is not None)
    assert len(boms) == ranked > 0
    for bom in boms.values():
        lines = bom["lines"]
        assert isinstance(lines, list) and lines
        total = sum(line["extended_price_usd"] for line in lines)
        assert total == pytest.approx(bom["capex_usd"], abs=0.01)


def test_a_response_that_went_through_json_gives_the_same_page(scenarios: list[Scenario]) -> None:
    """What --server mode does to a response: the page cannot tell."""
    wired = [
        Scenario(
            s.request,
            json_format.Parse(
                json_format.MessageToJson(s.response), optimize_pb2.OptimizeResponse()
            ),
            label=s.label,
        )
        for s in scenarios
    ]
    assert render_html(wired, title="t", generated_at=WHEN) == render_html(
        scenarios, title="t", generated_at=WHEN
    )


def test_hostile_catalog_text_cannot_close_a_script_or_add_markup(
    scenarios: list[Scenario],
) -> None:
    evil = "</script><script>alert(1)</script><img src=x>"
    resp = optimize_pb2.OptimizeResponse()
    resp.CopyFrom(scenarios[0].response)
    resp.designs[0].server_sku = evil
    resp.designs[0].bom[0].sku = evil
    resp.designs[0].explanation = evil
    page = render_html([Scenario(_request(8, catalog=evil), resp)], title=evil, generated_at=WHEN)
    assert "<script>alert(1)" not in page
    assert "<img src=x>" not in page
    loads = _Loads()
    loads.feed(page)
    assert loads.urls == []


def test_the_network_split_has_its_own_axis_in_the_cost_breakdown(
    scenarios: list[Scenario],
) -> None:
    fig = breakdown_figure(top_designs(scenarios, 8))
    axes = {t.name: t.yaxis for t in fig.data}
    assert axes["servers"] == axes["network"] == "y"
    assert {axes[n] for n in ("switches", "NICs", "cables", "optics")} == {"y2"}


def test_log_ticks_step_1_2_5_and_read_as_plain_numbers() -> None:
    assert log_ticks(70, 4000) == [50, 100, 200, 500, 1000, 2000, 5000]
    assert [tick_label(v) for v in (0.5, 20, 1000)] == ["0.5", "20", "1,000"]
    assert [tick_label(v, "$") for v in (500, 2e5, 2.5e6, 1e9)] == ["$500", "$200k", "$2.5M", "$1B"]


def test_optimize_writes_the_page_with_the_request_and_tool_version(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "answer.html"
    result = run(
        capsys,
        "optimize",
        *SMALL_SCENARIO,
        "--target-hours",
        "8",
        "--format",
        "html",
        "-o",
        str(out),
    )
    assert result.code == 0, result.err
    page = out.read_text()
    assert "bert-large" in page and "catalog id (content hash)" in page
    assert re.search(r"by procure \d+\.\d+", page)


@pytest.mark.parametrize(
    ("args", "expected"),
    [((), "--output: html output needs a file"), (("-o", "x.txt"), "ending in .html")],
)
def test_html_without_an_html_file_name_fails_naming_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    result = run(
        capsys, "optimize", *SMALL_SCENARIO, "--target-hours", "8", "--format", "html", *args
    )
    assert result.code != 0
    assert expected in result.err
    assert "Traceback" not in result.err


def test_sweep_writes_one_row_per_scenario_into_the_page(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "sweep.html"
    grid = (*SMALL_SCENARIO, "--targets", "8,24", "--budgets", "1e5")
    result = run(capsys, "--quiet", "sweep", *grid, "--format", "html", "-o", str(out))
    assert result.code == 0, result.err
    scenarios_table = out.read_text().split('id="scenarios"')[1].split("</table>")[0]
    assert scenarios_table.count("<tr>") == 1 + 2  # header and two scenarios


def test_a_batch_writes_report_html_with_every_scenario(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "catalogs": [SMALL_CATALOG],
                "scenarios": [{"workload": {"model": "bert-large", "training_tokens": 2e10}}],
                "grid": {"constraints.target_training_hours": [8, 24]},
            }
        )
    )
    out = tmp_path / "out"
    run_batch(load_spec(str(spec)), out, report=True)
    page = (out / "report.html").read_text()
    assert len(read_results(out)) == 2
    scenarios_table = page.split('id="scenarios"')[1].split("</table>")[0]
    assert scenarios_table.count("<tr>") == 1 + 2
    assert _embedded_boms(page)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve_with_tokens(tmp_path_factory.mktemp("server"))


def _without_run_facts(page: str) -> str:
    """The page minus what two runs of the same question may differ in: when it was made
    and how long each solve took."""
    page = re.sub(r"Generated [^<]* UTC", "", page)
    return re.sub(r'<td data-sort="[^"]*" class="seconds">[^<]*</td>', "", page)


def test_a_sweep_against_a_server_writes_the_same_page_as_embedded(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PROCURE_TOKEN", TOKEN_A)
    grid = ("sweep", *SMALL_SCENARIO, "--targets", "8,24", "--format", "html")
    embedded, remote = tmp_path / "embedded.html", tmp_path / "remote.html"
    assert run(capsys, "--quiet", *grid, "-o", str(embedded)).code == 0
    assert run(capsys, "--quiet", "--server", server, *grid, "-o", str(remote)).code == 0
    assert _without_run_facts(remote.read_text()) == _without_run_facts(embedded.read_text())
