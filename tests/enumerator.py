"""The independent enumerator, under the name the tests import (``from enumerator import ...``).

It lives in ``benchmarks/enumerator.py`` so that ``python -m benchmarks`` times the optimizer
against it without a copy; this module re-exports it for the tests that predate the move.
"""

import math

from benchmarks.enumerator import *  # noqa: F403
from benchmarks.enumerator import enumerate_optimum
from optimizer.catalog.model import Catalog
from optimizer.optimize.request import OptimizeSpec
from optimizer.optimize.solve import optimize


def assert_rank_one_is_the_optimum(catalog: Catalog, spec: OptimizeSpec, max_nodes: int) -> None:
    """The optimizer's rank 1 has the enumerator's optimum: its capex and its time in whole
    seconds (as the optimizer ranks it)."""
    top = optimize(catalog, spec, explain=False).designs[0]
    want = enumerate_optimum(catalog, spec, max_nodes=max_nodes)
    assert want is not None
    got = (top.bom.capex_cents, math.ceil(top.time_hours * 3600))
    assert got == (want.capex_cents, want.seconds), want.describe()
