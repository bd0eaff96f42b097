"""Regenerate docs/cli.md: run a real `procure` session and write each command with its output.

    python scripts/cli_session.py            # writes docs/cli.md and docs/img/*.png

Every block in the page is what the command printed on this machine when the page was made;
nothing is edited by hand. Commands run in a scratch directory with an empty catalog store; the
remote part starts `procure serve` on a free loopback port and stops it at the end.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "cli.md"
IMG = ROOT / "docs" / "img"
MAX_LINES = 60  # longer outputs are cut, and the cut is said


@dataclass(frozen=True)
class Step:
    text: str  # Markdown before the command
    args: str  # what follows `procure`, as typed in a shell
    max_lines: int = MAX_LINES
    timed: bool = False  # say how long it took (wall clock, with Python start-up)


def _procure(args: str, env: dict[str, str], cwd: Path) -> tuple[int, str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "client.cli", *shlex.split(args)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
        check=False,
    )
    return done.returncode, done.stdout, time.perf_counter() - started


def _block(args: str, code: int, output: str, max_lines: int) -> str:
    lines = output.rstrip("\n").splitlines()
    if len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... ({len(lines) - max_lines} more lines)"]
    status = f"\n$ echo $?\n{code}" if code else ""
    return "```console\n$ procure " + args + "\n" + "\n".join(lines) + status + "\n```\n"


def _machine() -> str:
    info = Path("/proc/cpuinfo")
    names = (
        [
            line.split(":", 1)[1].strip()
            for line in info.read_text().splitlines()
            if line.startswith("model name")
        ]
        if info.exists()
        else []
    )
    return f"{os.cpu_count()} CPU cores" + (f" ({names[0]})" if names else "")


def _serve(env: dict[str, str], cwd: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "client.cli", "serve", "--address", "127.0.0.1:0", "--workers", "1"],
        cwd=cwd,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        address = re.search(r'"event": "listening", "address": "([^"]+)"', text)
        if address and '"event": "ready"' in text:
            return proc, address.group(1)
        if proc.poll() is not None:
            raise SystemExit(f"procure serve exited:\n{text}")
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("procure serve did not become ready")


def session(work: Path) -> list[Step]:
    sweep_png = IMG / "sweep.png"
    optimize_png = IMG / "optimize.png"
    return [
        Step("## Version and help\n", "--version"),
        Step("", "--help"),
        Step("Every command has its own `--help`:\n", "sweep --help"),
        Step(
            "## What does 30 days cost?\n\nThe cheapest cluster that trains Llama 3 70B on 2 "
            "trillion tokens within 720 hours, from NVIDIA's reference InfiniBand prices: the "
            "ranked designs, the rank-1 bill of materials grouped by category, and why.\n",
            "optimize --catalog infiniband-ndr --workload llama3-70b --tokens 2e12 "
            f"--target-hours 720 --top-k 3 --plot {optimize_png.relative_to(ROOT)}",
        ),
        Step(
            "## What do I get for $20M?\n\nThe fastest design within a budget "
            "(`--objective min-time`):\n",
            "optimize --catalog roce-spectrum --workload llama3-70b --tokens 2e12 "
            "--budget-usd 2e7 --objective min-time --top-k 1",
        ),
        Step(
            "## For scripts and spreadsheets\n\nCSV of the ranked designs (one row each):\n",
            "optimize --catalog infiniband-ndr --workload llama3-8b --tokens 1e12 "
            "--target-hours 720 --top-k 2 --format csv",
        ),
        Step(
            "JSON is the protobuf JSON of the `OptimizeResponse` message (first lines):\n",
            "optimize --catalog infiniband-ndr --workload llama3-8b --tokens 1e12 "
            "--target-hours 720 --top-k 1 --format json",
            max_lines=25,
        ),
        Step(
            "XLSX (no output on the terminal) holds a designs sheet and the rank-1 BOM sheet:\n",
            "optimize --catalog infiniband-ndr --workload llama3-8b --tokens 1e12 "
            f"--target-hours 720 --format xlsx --output {work / 'plan.xlsx'}",
        ),
        Step(
            "## Budget sweep\n\nThree vendor catalogs x 3 budgets x 6 target times = 54 "
            "scenarios, one row each (the rank-1 design or why none exists), then the "
            "cost-time frontier:\n",
            "sweep --catalog infiniband-ndr --catalog roce-spectrum --catalog ethernet-budget "
            "--workload llama3-70b --tokens 2e12 --budgets 1e7,2.5e7,5e7 "
            "--targets 720,1080,1440,2160,2880,4320 "
            f"--plot {sweep_png.relative_to(ROOT)}",
            max_lines=120,
            timed=True,
        ),
        Step(
            f"![cost vs training time]({sweep_png.relative_to(DOC.parent)})\n\n"
            "A sweep can also come from a scenario file in the `procure batch` spec format "
            "(JSON, YAML or CSV), and write CSV or XLSX for the spreadsheet:\n",
            f"sweep --scenarios {work / 'scenarios.csv'} --top-k 1 --format csv",
        ),
        Step(
            "## Errors\n\nOne line on stderr naming the field or file, and a documented exit "
            "status (2 usage, 3 invalid input, 4 infeasible with `--fail-on-infeasible`, "
            "5 server unavailable):\n",
            "optimize --catalog infiniband-ndr --workload llama3-70b --target-hours -720",
        ),
        Step("", "optimize --catalog no-such-catalog --workload llama3-70b --target-hours 720"),
        Step("", "sweep --catalog infiniband-ndr --workload llama3-70b --budgets 1e7,lots"),
        Step(
            "",
            "optimize --catalog infiniband-ndr --workload llama3-70b --tokens 2e12 "
            "--target-hours 100 --budget-usd 1e6 --top-k 1 --fail-on-infeasible",
        ),
        Step(
            "",
            "--server 127.0.0.1:1 optimize --catalog infiniband-ndr --workload llama3-70b "
            "--target-hours 720",
        ),
        Step(
            '## Shell completion\n\n`eval "$(procure completion bash)"` in ~/.bashrc '
            "(or zsh, fish):\n",
            "completion bash",
            max_lines=8,
        ),
    ]


def remote_session(address: str) -> list[Step]:
    return [
        Step(
            f"## Remote mode\n\nThe same commands against `procure serve` on {address}; a "
            "local catalog path is validated here and uploaded first. The result is the "
            "same as embedded:\n",
            f"--server {address} optimize --catalog tests/data/catalog_small "
            "--workload bert-large --tokens 2e10 --target-hours 8 --top-k 2",
        ),
        Step("", f"--server {address} catalog list"),
    ]


def main() -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="procure-session-") as tmp:
        work = Path(tmp)
        (work / "scenarios.csv").write_text(
            "catalog,model,training_tokens,budget_usd,target_training_hours\n"
            "infiniband-ndr,llama3-8b,1e12,5e6,720\n"
            "roce-spectrum,llama3-8b,1e12,5e6,720\n"
            "ethernet-budget,llama3-8b,1e12,5e6,720\n"
        )
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "PROCURE_DATA_DIR": str(work / "store"),
            "COLUMNS": "120",
        }
        parts = [
            (
                "# The `procure` command line\n\n"
                "A real session, produced by `python scripts/cli_session.py` (do not edit by hand; "
                "rerun it). Embedded by default; `--server HOST:PORT` sends the same requests to "
                "`procure serve` (docs/service.md). Scratch files live in a temporary directory "
                "(shown as /tmp/procure-session-...).\n"
            )
        ]
        timings = []
        for step in session(work):
            code, output, seconds = _procure(step.args, env, ROOT)
            timings.append((step.args, seconds))
            took = (
                f"\nThat took {seconds:.1f} s (wall clock, start-up included) on {_machine()}.\n"
                if step.timed
                else ""
            )
            parts.append(step.text + "\n" + _block(step.args, code, output, step.max_lines) + took)
        proc, address = _serve(env, ROOT, work / "serve.log")
        try:
            for step in remote_session(address):
                code, output, seconds = _procure(step.args, env, ROOT)
                parts.append(step.text + "\n" + _block(step.args, code, output, step.max_lines))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
        text = "\n".join(parts).replace(str(work), "/tmp/procure-session-...")
    DOC.write_text(text)
    for args, seconds in timings:
        print(f"{seconds:6.1f} s  procure {args[:90]}")


if __name__ == "__main__":
    main()
