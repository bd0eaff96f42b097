"""The explanations' re-solves run on parts of the request's catalog, which may lack a vendor
the request's filters name: the request was checked once, against the whole catalog."""

from __future__ import annotations

import pytest

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2


@pytest.mark.slow
def test_excluding_a_vendor_only_left_out_servers_carry_does_not_fail_the_sensitivity() -> None:
    # gen-2026's ASUS parts are servers of the 8-GPU domain: the scale-up sensitivity
    # re-solves on the other domain's servers alone, and refused the request there with
    # "excluded_vendors[0]: got 'ASUS', expected a vendor of this catalog" (found by a
    # diagnosis hunt; --ranking-only answered).
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="gen-2026",
            objective="min_time",
            top_k=1,
            workload=estimate_pb2.Workload(model="llama3-70b", training_tokens=1e12),
            constraints=optimize_pb2.Constraints(budget_usd=1e7),
            excluded_vendors=["ASUS"],
        )
    )

    assert resp.status == "OPTIMAL", resp.diagnosis
    assert "Scale-up domain" in resp.sensitivity
