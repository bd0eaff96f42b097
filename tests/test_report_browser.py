"""The report page in a real browser: headless Chromium from the system's packages (installed
by .ci/run), driven by Playwright, the page opened from disk with every non-file request
aborted. No console errors, one chart point per design, hovering a point shows its capex and
clicking it opens a bill of materials whose lines add up to that capex.

Set PROCURE_SCREENSHOT=PATH to save a screenshot of the page (docs/img/report.png in the
README is one).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_process
from google.protobuf import json_format

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.reporting.frontier import points_of

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Two vendor catalogs x two target times: designs of two fabrics, ranked ones with a bill of
# materials and frontier-only ones without; a few seconds embedded.
SWEEP = (
    "sweep",
    "--catalog",
    "ethernet-budget",
    "--catalog",
    "roce-spectrum",
    "--workload",
    "llama3-8b",
    "--tokens",
    "2e11",
    "--targets",
    "100,300",
    "--budgets",
    "4e6",
    "--top-k",
    "3",
)
POINTS = "#frontier .scatterlayer .trace .points path.point"
CAPEX = re.compile(r"capex: \$([\d,]+)")

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')"
)
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason=f"no browser: {CHROMIUM} is missing (.ci/run installs it: apt-get install chromium)",
)


@dataclass(frozen=True)
class Report:
    path: Path
    expected_points: int  # distinct designs per catalog, from the sweep's JSON


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    page = tmp_path_factory.mktemp("report") / "sweep.html"
    done = run_process("--quiet", *SWEEP, "--format", "html", "-o", str(page))
    assert done.code == 0, done.err
    as_json = run_process("--quiet", *SWEEP, "--format", "json")
    assert as_json.code == 0, as_json.err
    by_catalog: dict[str, list[optimize_pb2.OptimizeResponse]] = {}
    for s in json.loads(as_json.out)["scenarios"]:
        resp = json_format.ParseDict(s["response"], optimize_pb2.OptimizeResponse())
        by_catalog.setdefault(s["request"]["catalog"], []).append(resp)
    expected = sum(len(points_of(responses)) for responses in by_catalog.values())
    return Report(page, expected)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield b
        b.close()


@dataclass
class Opened:
    page: Any
    console_errors: list[str]
    blocked: list[str]


@pytest.fixture
def opened(browser: Any, report: Report) -> Iterator[Opened]:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    blocked: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r: Any) -> None:
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(report.path.as_uri())
    page.wait_for_selector(POINTS)
    yield Opened(page, errors, blocked)
    page.close()


HOVER_TIMEOUT_MS = 5_000


def _centre(page: Any, n: int) -> tuple[float, float]:
    box = page.locator(POINTS).nth(n).bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def _clear_hover(page: Any) -> None:
    """Take the last point's label down before the next hover: Plotly redraws hover on an
    animation frame, so a label read right after the move may still be the last point's (and
    a click then opens a point that label does not describe)."""
    hover = page.locator("#frontier .hoverlayer .hovertext")
    # The mouse leaves the plot by two moves, each a fresh event. A label has still been seen
    # to outlive both by 5 s each: once in about 20 runs here (session 31), and in CI on
    # stop 48, where three moves and 20 s did not take it down. Plotly then missed the mouse
    # leaving; its own unhover call clears the label. What is under test is the label a
    # hover shows, not how Plotly notices that the mouse left.
    for corner in ((0, 0), (1, 1)):
        page.mouse.move(*corner)
        if not hover.count():
            return
        with contextlib.suppress(sync_api.TimeoutError):
            hover.first.wait_for(state="detached", timeout=HOVER_TIMEOUT_MS)
            return
    page.evaluate("Plotly.Fx.unhover(document.getElementById('frontier'))")
    hover.first.wait_for(state="detached", timeout=HOVER_TIMEOUT_MS)


def _hover_text(page: Any, n: int) -> str:
    """Point ``n``'s hover label, read after the last point's label is gone."""
    _clear_hover(page)
    hover = page.locator("#frontier .hoverlayer .hovertext")
    page.mouse.move(*_centre(page, n))
    hover.first.wait_for(timeout=HOVER_TIMEOUT_MS)
    return str(hover.first.text_content())


def _usd(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def test_the_page_opens_offline_without_console_errors(opened: Opened) -> None:
    assert opened.console_errors == []
    assert opened.blocked == []


def test_the_frontier_has_one_point_per_design(opened: Opened, report: Report) -> None:
    assert opened.page.locator(POINTS).count() == report.expected_points > 4


def test_hovering_a_point_shows_its_capex_and_clicking_it_a_bom_that_adds_up(
    opened: Opened,
) -> None:
    page = opened.page
    checked = 0
    biggest_bom = (0, 0)  # (lines, point): the page's screenshot shows the longest BOM
    for n in range(page.locator(POINTS).count()):
        text = _hover_text(page, n)
        capex = CAPEX.search(text)
        assert capex is not None, text
        if "click for its bill of materials" not in text:
            continue
        page.mouse.click(*_centre(page, n))
        page.wait_for_selector("#bom-table")
        lines = page.locator("#bom-table tr.bom-line td:last-child").all_text_contents()
        shown_total = page.locator("#bom-table tr.bom-total td:last-child").text_content()
        # Whole dollars on screen: each line may round by up to half a dollar.
        assert abs(sum(map(_usd, lines)) - _usd(capex.group(1))) <= 0.5 * len(lines)
        assert _usd(str(shown_total)) == _usd(capex.group(1))
        checked += 1
        biggest_bom = max(biggest_bom, (len(lines), n))
    # At least three ranked designs answer a hover with their BOM. Issue 14 (causal attention,
    # dropout) moved the 16-GPU torus frontier points of ethernet-budget within a few hours
    # of each other, and one of them now covers a ranked point at this plot size (it was 4).
    assert checked >= 3
    shot = os.environ.get("PROCURE_SCREENSHOT")
    if shot:
        _hover_text(page, biggest_bom[1])
        page.mouse.click(*_centre(page, biggest_bom[1]))
        page.screenshot(path=shot)
    assert opened.console_errors == []


def test_a_frontier_only_point_says_it_has_no_bill_of_materials(opened: Opened) -> None:
    page = opened.page
    for n in range(page.locator(POINTS).count()):
        if "no bill of materials" in _hover_text(page, n):
            page.mouse.click(*_centre(page, n))
            assert "frontier only" in str(page.locator("#bom-body").text_content())
            return
    pytest.fail("the sweep reported no frontier-only design")


def test_clicking_a_column_header_sorts_the_designs_table(opened: Opened) -> None:
    page = opened.page
    capex_header = page.locator("#designs th", has_text="capex")
    capex_header.click()

    def column() -> list[float]:
        cells = page.locator("#designs tbody tr td:nth-child(8)").all()
        return [float(str(c.get_attribute("data-sort"))) for c in cells]

    assert column() == sorted(column())
    capex_header.click()
    assert column() == sorted(column(), reverse=True)
