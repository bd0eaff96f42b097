"""Print, per acceptance scenario, the optimizer's rank 1 beside the enumerator's optimum.

Run from the repository root: ``python tests/enumerator_report.py``. Besides the issue 13
enumerator it prints the optimum over the design space of the tree before issue 13
(``issue13=False``: no buildability rules, no per-tier switch mixes, no switchless one-node
design), so a disagreement can be told apart: one the pre-issue space explains is a defect
issue 13 lists; one it does not is a search hole of the optimizer (or of the enumerator).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root

from benchmarks.enumerator import Found, enumerate_optimum
from benchmarks.realism_scenarios import SCENARIOS, catalog, describe, enumerated, solved
from optimizer.optimize.request import Objective


def _value(objective: Objective, capex_cents: int, seconds: int) -> tuple[int, int]:
    return (capex_cents, seconds) if objective is Objective.MIN_COST else (seconds, capex_cents)


def _found_value(objective: Objective, found: Found | None) -> tuple[int, int] | None:
    return None if found is None else _value(objective, found.capex_cents, found.seconds)


def main() -> None:
    for s in SCENARIOS:
        result = solved(s)
        top = result.designs[0] if result.designs else None
        got = (
            None
            if top is None
            else _value(s.objective, top.bom.capex_cents, math.ceil(top.time_hours * 3600))
        )
        want = enumerated(s)
        before = enumerate_optimum(
            catalog(s.catalog), s.spec(), max_nodes=s.max_nodes, issue13=False
        )
        verdict = "PASS" if got == _found_value(s.objective, want) else "FAIL"
        space = (
            "pre-issue space agrees"
            if got == _found_value(s.objective, before)
            else ("PRE-ISSUE SPACE DISAGREES")
        )
        print(f"{verdict} ({space}) {s.name}")
        if verdict == "FAIL" or "DIS" in space:
            print("   optimizer: ", result.status, describe(top) if top else result.diagnosis)
            print("   enumerator:", want.describe() if want else None)
            print("   pre-issue: ", before.describe() if before else None)


if __name__ == "__main__":
    main()
