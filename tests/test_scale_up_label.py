"""A table names a design's scale-up domain by its size, not by one vendor's link: an AMD
MI355X server's 8 GPUs share Infinity Fabric and an L40S server's share PCIe, so "(8-GPU
NVLink)" beside either was wrong (it was printed for every design with a named domain)."""

from __future__ import annotations

from client.narrow import design_label
from optimizer._pb.procurement.v1 import optimize_pb2


def test_a_named_domain_says_its_size_and_no_vendors_link() -> None:
    server = "MI355X-8GPU-DLC-SERVER"
    d = optimize_pb2.Design(gpus=16_384, server_sku=server, fabric="infiniband", scale_up_gpus=8)
    label = design_label(d, name_domain=True)
    assert "MI355X-8GPU-DLC-SERVER (8-GPU domain)" in label
    assert "NVLink" not in label
