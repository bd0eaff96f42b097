"""The batch guarantee as a property: after any sequence of runs stopped by SIGTERM or
killed, spec edits, catalog re-imports and damage to the output, one more resume leaves
every output (Parquet parts, responses.jsonl, results.csv) holding each scenario of the
final spec exactly once, with the rows and responses of a clean run (issue 20).

Scenarios run in-process on an engine that remembers each result by scenario id: the task
is a pure function of its scenario (tests/test_batch_engines.py checks the real engines),
and this keeps a hundred runs to seconds. A kill is modelled exactly: the directory is put
back to what was on disk when the kill came (committed parts only, the buffer lost), plus
what a flush cut short leaves (text past the last commit, a temporary part)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Generator, Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from batch_support import FAST_DEFAULTS
from catalog_files import SMALL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client.commands.batch import _sigterm_as_interrupt
from optimizer.batch import BatchPlan, plan_batch, run_batch
from optimizer.batch.engines import Engine, LocalEngine
from optimizer.batch.runner import iter_batch, open_output
from optimizer.batch.spec import Scenario, spec_from_document
from optimizer.batch.tasks import TaskResult, run_scenario
from optimizer.batch.writer import (
    CSV_FILE,
    RESPONSES_FILE,
    RESULTS_DIR,
    TIMING_COLUMNS,
    has_results,
    read_results,
)
from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.catalog.store import CatalogStore

TARGETS = (6.0, 12.0, 24.0, 48.0)
DAMAGE = (
    "truncate_last_part",
    "empty_last_part",
    "delete_a_part",
    "truncate_responses",
    "truncate_csv",
    "delete_responses",
)
_RESULTS: dict[str, TaskResult] = {}  # by scenario id, across examples


class RememberingEngine(Engine):
    """Runs each scenario in this process once; afterwards answers from memory."""

    workers = 1

    def run(
        self,
        catalogs: Mapping[str, bytes],
        scenarios: Iterable[Scenario],
        *,
        timeout_s: float | None = None,
    ) -> Generator[TaskResult, None, None]:
        for s in scenarios:
            if s.scenario_id not in _RESULTS:
                _RESULTS[s.scenario_id] = run_scenario(s, catalogs[s.catalog_id], timeout_s)
            yield _RESULTS[s.scenario_id]


class Killed(Exception):
    """Stands for SIGKILL of the driver: nothing after it runs (the directory is restored)."""


def _variant(n: int) -> Catalog:
    catalog = load_catalog(SMALL)
    server = dataclasses.replace(
        catalog.servers[0], price_cents=catalog.servers[0].price_cents + 100 * n
    )
    return dataclasses.replace(catalog, servers=(server, *catalog.servers[1:]))


@dataclasses.dataclass
class World:
    root: Path
    targets: tuple[float, ...] = TARGETS[:2]
    variant: int = 0

    @property
    def out(self) -> Path:
        return self.root / "out"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def plan(self) -> BatchPlan:
        doc = {
            "catalogs": ["small-test", "infiniband-ndr"],
            "defaults": FAST_DEFAULTS,
            "grid": {"constraints.target_training_hours": list(self.targets)},
        }
        return plan_batch(spec_from_document(doc), data_dir=self.data, validate=True)

    def reimport(self) -> None:
        self.variant += 1
        with CatalogStore(self.data) as store:
            store.put(_variant(self.variant), tenant="default")

    def run(self, engine: Engine, stop_after: int, how: str) -> None:
        plan = self.plan()
        writer = open_output(
            plan,
            self.out,
            resume=has_results(self.out),
            allow_changed=True,
            csv=True,
            flush_rows=2,
        )
        snapshot = self.root / "snapshot"
        seen = 0
        try:
            with _sigterm_as_interrupt():
                for _ in iter_batch(plan, self.out, engine=engine, writer=writer):
                    seen += 1
                    if seen == stop_after and how == "sigterm":
                        os.kill(os.getpid(), signal.SIGTERM)
                    if seen == stop_after and how == "kill":
                        shutil.copytree(self.out, snapshot)
                        raise Killed
        except (KeyboardInterrupt, Killed):
            pass
        if snapshot.exists():  # the disk as the kill left it, and a flush cut short
            shutil.rmtree(self.out)
            snapshot.rename(self.out)
            for name in (RESPONSES_FILE, CSV_FILE):
                with open(self.out / name, "a", encoding="utf-8") as f:
                    f.write('{"scenario_id": "torn", "half a li')
            (self.out / RESULTS_DIR / "part-999999.parquet.tmp").write_bytes(b"PAR1 torn")

    def damage(self, kind: str) -> None:
        parts = sorted((self.out / RESULTS_DIR).glob("part-*.parquet"))
        if not parts:
            return
        if kind == "truncate_last_part":
            data = parts[-1].read_bytes()
            parts[-1].write_bytes(data[: len(data) // 2])
        elif kind == "empty_last_part":
            parts[-1].write_bytes(b"")
        elif kind == "delete_a_part":
            parts[len(parts) // 2].unlink()
        elif kind in ("truncate_responses", "truncate_csv"):
            path = self.out / (RESPONSES_FILE if kind == "truncate_responses" else CSV_FILE)
            data = path.read_bytes() if path.exists() else b""
            path.write_bytes(data[: len(data) * 2 // 3])
        elif kind == "delete_responses":
            (self.out / RESPONSES_FILE).unlink(missing_ok=True)


RUN = st.tuples(
    st.just("run"), st.integers(min_value=1, max_value=5), st.sampled_from(["sigterm", "kill"])
)
STEP = st.one_of(
    RUN,
    st.tuples(st.just("edit"), st.sets(st.sampled_from(TARGETS), min_size=1, max_size=3)),
    st.tuples(st.just("reimport")),
    st.tuples(st.just("damage"), st.sampled_from(DAMAGE)),
)


def _rows(out: Path) -> pd.DataFrame:
    frame = read_results(out).drop(columns=list(TIMING_COLUMNS))
    return frame.sort_values("scenario_id").reset_index(drop=True)


def _without_timing(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _without_timing(v) for k, v in doc.items() if k not in TIMING_COLUMNS}
    if isinstance(doc, list):
        return [_without_timing(v) for v in doc]
    return doc


def _responses(out: Path) -> dict[str, Any]:
    lines = (out / RESPONSES_FILE).read_text(encoding="utf-8").splitlines()
    docs = [json.loads(x) for x in lines]
    by_id = {d["scenario_id"]: _without_timing(d) for d in docs}
    assert len(by_id) == len(docs), "a scenario appears twice in responses.jsonl"
    return by_id


def check_sequence(steps: list[tuple[Any, ...]], engine: Engine) -> None:
    with tempfile.TemporaryDirectory(prefix="batch-property-") as tmp:
        world = World(Path(tmp))
        world.reimport()
        for step in steps:
            if step[0] == "run":
                world.run(engine, step[1], step[2])
            elif step[0] == "edit":
                world.targets = tuple(sorted(step[1]))
            elif step[0] == "reimport":
                world.reimport()
            else:
                world.damage(step[1])
        plan = world.plan()
        run_batch(
            plan,
            world.out,
            engine=engine,
            resume=has_results(world.out),
            allow_changed=True,
            csv=True,
        )
        clean = world.root / "clean"
        run_batch(plan, clean, engine=engine, csv=True)
        expected = sorted(s.scenario_id for s in plan.scenarios)
        got = _rows(world.out)
        assert list(got["scenario_id"]) == expected  # each scenario once, no stale one
        pd.testing.assert_frame_equal(got, _rows(clean))
        assert _responses(world.out) == _responses(clean)
        csv_ids = sorted(pd.read_csv(world.out / CSV_FILE)["scenario_id"])
        assert csv_ids == expected


# Every kind of step once after output exists, so the default suite covers each whatever
# the generated examples happen to be.
_AFTER_A_RUN = [
    [("edit", {24.0, 48.0})],
    [("reimport",)],
    *([("damage", kind)] for kind in DAMAGE),
    [("run", 1, "kill"), ("damage", "delete_a_part"), ("reimport",)],
    [("run", 3, "sigterm"), ("edit", {6.0}), ("run", 1, "kill")],
]


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(RUN, st.lists(STEP, max_size=5))
def test_any_sequence_then_resume_holds_each_final_scenario_once_as_a_clean_run(
    first: tuple[Any, ...], steps: list[tuple[Any, ...]]
) -> None:
    check_sequence([first, *steps], RememberingEngine())


@pytest.mark.parametrize(
    "steps",
    _AFTER_A_RUN,
    ids=lambda steps: "-".join(s[-1] if s[0] == "damage" else s[0] for s in steps),
)
def test_each_kind_of_step_after_a_run_then_resume(steps: list[tuple[Any, ...]]) -> None:
    check_sequence([("run", 3, "sigterm"), *steps], RememberingEngine())


@pytest.mark.soak
@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RUN, st.lists(STEP, max_size=8))
def test_any_longer_sequence_on_the_process_pool(
    first: tuple[Any, ...], steps: list[tuple[Any, ...]]
) -> None:
    with LocalEngine(2) as engine:
        check_sequence([first, *steps], engine)
