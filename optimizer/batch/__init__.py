"""Batch optimization: many scenarios against many vendor catalogs, locally or on Dask.

See ``optimizer.batch.runner`` for the entry points and docs/batch.md for the spec format.
"""

from __future__ import annotations

from optimizer.batch.engines import (
    DaskEngine,
    Engine,
    EngineUnavailable,
    LocalEngine,
    make_engine,
)
from optimizer.batch.runner import (
    BatchProgress,
    BatchSummary,
    InputsChanged,
    ScenariosRejected,
    iter_batch,
    open_output,
    run_batch,
)
from optimizer.batch.spec import BatchPlan, BatchSpec, load_spec, plan_batch
from optimizer.batch.writer import read_results

__all__ = [
    "BatchPlan",
    "BatchProgress",
    "BatchSpec",
    "BatchSummary",
    "DaskEngine",
    "Engine",
    "EngineUnavailable",
    "InputsChanged",
    "LocalEngine",
    "ScenariosRejected",
    "iter_batch",
    "load_spec",
    "make_engine",
    "open_output",
    "plan_batch",
    "read_results",
    "run_batch",
]
