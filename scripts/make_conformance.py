"""Regenerate the optimizer conformance set: tests/data/conformance/scenarios.json.

Each scenario is an OptimizeRequest (protobuf JSON) on a bundled catalog with its expected
rank-1 objective, solved here with CP-SAT. tests/test_optimizer_conformance.py solves every
scenario with every installed backend and compares, so the file cannot go stale silently:
after a deliberate model change, rerun this script and review the diff.

Run: python scripts/make_conformance.py
"""

from __future__ import annotations

import json
from pathlib import Path

from google.protobuf import json_format

from optimizer import api
from optimizer._pb.procurement.v1 import optimize_pb2

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "conformance" / "scenarios.json"

CATALOGS = ("infiniband-ndr", "roce-spectrum", "ethernet-budget")


def scenarios() -> list[dict]:
    """24 requests: both objectives, every catalog, and every kind of constraint."""
    out: list[dict] = []
    small = {"model": "llama3-8b", "training_tokens": 2e11}
    bert = {"model": "bert-large", "training_tokens": 4e10}
    for cat in CATALOGS:
        out += [
            {"catalog": cat, "workload": small, "constraints": {"target_training_hours": 200}},
            {"catalog": cat, "workload": small, "constraints": {"target_training_hours": 50}},
            {
                "catalog": cat,
                "workload": bert,
                "constraints": {"target_training_hours": 3},
                "top_k": 3,
            },
            {
                "catalog": cat,
                "workload": small,
                "objective": "min_time",
                "constraints": {"budget_usd": 3_000_000},
            },
            {
                "catalog": cat,
                "workload": bert,
                "objective": "min_time",
                "constraints": {"budget_usd": 1_000_000},
                "top_k": 2,
            },
            {
                "catalog": cat,
                "workload": small,
                "constraints": {"target_training_hours": 100, "max_power_kw": 400},
            },
            {
                "catalog": cat,
                "workload": small,
                "allowed_topologies": ["fat_tree"],
                "constraints": {"target_training_hours": 80},
            },
            {
                "catalog": cat,
                "workload": small,
                "confidence": "pessimistic",
                "constraints": {"target_training_hours": 120, "budget_usd": 20_000_000},
            },
        ]
    return out


def solve(request: dict) -> dict:
    resp = api.optimize(json_format.ParseDict(request, optimize_pb2.OptimizeRequest()))
    if not resp.designs:
        return {"status": resp.status}
    d = resp.designs[0]
    return {
        "status": "SOLVED",
        "capex_usd": d.capex_usd,
        "training_time_hours": d.training_time_hours,
    }


def main() -> None:
    data = [{"request": r, "expected": solve(r)} for r in scenarios()]
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {len(data)} scenarios to {OUT}")


if __name__ == "__main__":
    main()
