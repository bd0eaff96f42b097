"""Regenerate the committed Python stubs in optimizer/_pb/ from protos/.

Run: python scripts/gen_protos.py [OUT_DIR]
tests/test_protos_fresh.py regenerates into a temporary directory and fails on any difference.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_ROOT = ROOT / "protos"
PACKAGE = "optimizer._pb"


def generate(out_dir: Path) -> list[Path]:
    """Run protoc on every .proto under protos/ and make the imports package-relative."""
    import grpc_tools
    from grpc_tools import protoc

    protos = sorted(PROTO_ROOT.rglob("*.proto"))
    out_dir.mkdir(parents=True, exist_ok=True)
    include = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *(str(p) for p in protos),
    ]
    if protoc.main(args) != 0:
        msg = "protoc failed"
        raise SystemExit(msg)
    for stub in out_dir.rglob("*_pb2_grpc.py"):
        if "_to_server(" not in stub.read_text():  # the .proto declares no service
            stub.unlink()
    written = sorted(p for p in out_dir.rglob("*") if p.suffix in {".py", ".pyi"})
    top_packages = {p.relative_to(PROTO_ROOT).parts[0] for p in protos}
    pattern = re.compile(rf"^(from|import) ({'|'.join(map(re.escape, top_packages))})\b", re.M)
    for path in written:
        text = path.read_text()
        path.write_text(pattern.sub(rf"\1 {PACKAGE}.\2", text))
    for d in {p.parent for p in written} | {out_dir}:
        init = d / "__init__.py"
        if not init.exists():
            init.write_text("")
    return sorted(p for p in out_dir.rglob("*") if p.is_file())


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "optimizer" / "_pb"
    for f in generate(target):
        print(f.relative_to(target))
