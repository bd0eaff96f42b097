"""A server that cannot run the workload itself (fp8 on A100, which has no FP8 tensor cores)
is named in the diagnosis with the field and why, wherever no other server can run it: not
blamed on memory, and not left out where a filter is named (docs/optimizer.md)."""

from __future__ import annotations

from pathlib import Path

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
A100 = "AI-A100-SXM4-8NVE"  # ethernet-budget's A100 server; its others are H100 and L40S
MEMORY = "no parallel plan fits its memory"


def _diagnosis(catalog: str, **fields: object) -> str:
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog=catalog,
            top_k=1,
            workload=estimate_pb2.Workload(model="llama3-8b", precision="fp8"),
            constraints=optimize_pb2.Constraints(target_training_hours=5000),
            **fields,  # type: ignore[arg-type]
        )
    )
    assert resp.status == "INFEASIBLE" and not resp.designs
    return resp.diagnosis


def _a100_only(tmp_path: Path) -> str:
    """ethernet-budget with its A100 server alone (and no row naming the others)."""
    src, dst = CATALOGS / "ethernet-budget", tmp_path / "a100-only"
    dst.mkdir()
    servers = (src / "servers.csv").read_text().splitlines()[1:]
    gone = {row.split(",")[0] for row in servers} - {A100}
    for f in src.iterdir():
        if not f.is_file():
            continue
        if f.suffix != ".csv":
            (dst / f.name).write_bytes(f.read_bytes())
            continue
        header, *rows = f.read_text().splitlines()
        kept = [row for row in rows if not gone & set(row.split(","))]
        (dst / f.name).write_text("\n".join([header, *kept]) + "\n")
    return str(dst)


def test_a_catalog_whose_servers_all_refuse_the_precision_says_so_not_memory(
    tmp_path: Path,
) -> None:
    text = _diagnosis(_a100_only(tmp_path))

    assert MEMORY not in text
    assert f"{A100} refuses it (workload.precision: fp8 needs the GPU's dense FP8 peak" in text


def test_a_vendor_filter_that_leaves_only_such_servers_names_them_beside_the_filter() -> None:
    text = _diagnosis("ethernet-budget", excluded_vendors=["Supermicro", "generic OEM"])

    assert "no design can be built from what excluded_vendors allows" in text
    assert f"of the servers allowed, {A100} refuses it (workload.precision" in text
