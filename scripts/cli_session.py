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
    after: str = ""  # Markdown after the command's output


HTML_PAGE = """What the page holds:

- **Cost vs training time**: every design the responses report is one point, coloured by
  catalog (with its vendor in a batch) and shaped by fabric (a star for a one-node design
  without one); open markers are frontier points the response lists without a bill of
  materials. Lines: each workload's cost-time frontier, the budgets and the target times; a
  log axis (values spanning more than 20x) is labelled 1-2-5 in plain numbers. Hover: catalog,
  GPUs, server, fabric, topology, capex, TCO where the response carries one, training time
  with its low-high range. Click: the design's bill of materials beside the chart, line by
  line, with its total.
- **Ranked designs**: every scenario's designs, sortable by any column (click the header);
  with what binds each, why it ranks there (the optimizer's explanation) and the price
  sensitivity. Click a row for its bill of materials.
- **Cost breakdown** of the top designs (one answer: its ranked designs; a sweep or batch: the
  distinct rank-1 designs on a frontier, cheapest first, at most 8): servers and network
  above, the network alone split into switches, NICs, cables and optics on its own axis below.
- **What was asked**: each scenario's catalog as asked and its content hash, workload,
  objective, budget, target, status, solver and solve time, why there is no design, warnings;
  the OptimizeRequests as protobuf JSON; the tool and Plotly versions and the time (UTC).

Big batches stay openable: every design is a point, but bills of materials are inlined for the
first 1,000 designs, the designs table lists the first 1,000 and the requests the first 50.
"""


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
    printed = "".join(f"\n{line}" for line in lines)  # nothing printed: no blank line
    return "```console\n$ procure " + args + printed + status + "\n```\n"


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
            "## The main job: what does 30 days cost?\n\nThe README's first command: the "
            "cheapest cluster that trains Llama 3 70B (its preset's 15 trillion tokens) within "
            "720 hours, from NVIDIA's reference InfiniBand prices. The ranked designs are "
            "distinct bills of materials; each is switched (a fat-tree of switches: ConnectX "
            "NICs do not forward traffic between their ports, so no switchless torus of more "
            "than two nodes is offered) and cables every NIC it buys (the NIC and node-leaf "
            "lines have the same count). The table shows the network's share of capex (`net "
            "capex`) beside its share of step time (`net time`: exposed communication, what "
            "overlap cannot hide) and each design's scale-out `Gb/s/GPU` (NIC rate x NICs per "
            "node / GPUs per node); then the rank-1 bill of materials by category and tier, why "
            "each design ranks where it does, and the price sensitivity. Too wide for 120 "
            "columns, the designs table falls back to its narrow layout (the two network shares "
            "stacked in one cell).\n",
            "optimize --catalog infiniband-ndr --workload llama3-70b --target-hours 720 "
            f"--plot {optimize_png.relative_to(ROOT)}",
            after=f"![cost vs training time of the ranked designs]"
            f"({optimize_png.relative_to(DOC.parent)})\n",
        ),
        Step(
            "## One node: no fabric at all\n\nA job one server finishes in time needs no "
            "scale-out fabric: the one-node design buys no switch, cable or NIC (a DGX's "
            "built-in NICs stay in its BOM at $0 as spares) and its fabric shows as `none`. It "
            "is offered beside the same node on a switch, should the buyer plan to grow:\n",
            "optimize --catalog infiniband-ndr --workload bert-large --tokens 4e10 "
            "--target-hours 24",
        ),
        Step(
            "`--require-fabric` (request field `require_fabric`) leaves the one-node design out: "
            "every design then has a scale-out fabric.\n",
            "optimize --catalog infiniband-ndr --workload bert-large --tokens 4e10 "
            "--target-hours 24 --require-fabric --top-k 1",
        ),
        Step(
            "## What do I get for $20M?\n\nThe fastest design within a budget "
            "(`--objective min-time`):\n",
            "optimize --catalog roce-spectrum --workload llama3-70b --tokens 2e12 "
            "--budget-usd 2e7 --objective min-time --top-k 1",
        ),
        Step(
            "## A bandwidth policy, and quotes from several vendors\n\n"
            "`--min-nic-gbps-per-gpu G` (request field `constraints.min_nic_gbps_per_gpu`) is a "
            "buyer's policy, not physics: every design offered gives each GPU at least G Gb/s of "
            "scale-out bandwidth (NIC rate x NICs per node / GPUs per node; a NIC's rate is its "
            "line rate over all its planes, at most what its server's slot carries). Without it "
            "the cheapest design meeting the target may be lean on network; the `Gb/s/GPU` and "
            "`net time` columns show it at a glance:\n",
            "optimize --catalog roce-spectrum --workload llama3-8b --tokens 1e12 "
            "--target-hours 720 --top-k 2",
        ),
        Step(
            "With the policy, every design gives each GPU at least 400 Gb/s. A one-node design "
            "without a fabric has none (0 Gb/s per GPU), so the policy excludes it: a buyer who "
            "states a scale-out floor is buying a fabric. It applies to `optimize` and `sweep`; "
            "when no allowed server and NIC can reach it the answer says so, with the most they "
            "reach.\n",
            "optimize --catalog roce-spectrum --workload llama3-8b --tokens 1e12 "
            "--target-hours 720 --top-k 2 --min-nic-gbps-per-gpu 400",
        ),
        Step(
            "`--catalog` may be repeated: `optimize` then works on the union of the quotes, so "
            "the servers can come from one vendor and the fabric from another, and every BOM "
            "line names the catalog it is ordered from (`catalog` in JSON and CSV; a `catalog` "
            "column in the table when the BOM spans several). Each line keeps its own quote's "
            "price, volume breaks and stock. A SKU that two catalogs both list is two offers, "
            "named `CATALOG:SKU` (below, `infiniband-ndr:MCX75310AAS-NEAT`: both quotes list "
            "that ConnectX-7); a SKU only one catalog lists keeps its name. The same catalog "
            "twice, or catalogs in different currencies, are refused naming the flag's request "
            "field (`catalogs[0]`). (`sweep` keeps `--catalog` as an axis: each scenario runs "
            "against each catalog in turn.)\n",
            "optimize --catalog roce-spectrum --catalog infiniband-ndr --workload llama3-70b "
            "--tokens 2e12 --target-hours 720 --fabric infiniband --topology rail-optimized "
            "--min-nic-gbps-per-gpu 400 --top-k 1",
        ),
        # issue 17: lifetime cost, rent vs buy, facility limits, a portfolio of workloads
        Step(
            "## Lifetime cost: `--objective min-tco`\n\nThe design with the lowest total cost "
            "of ownership over `--years` (default 4): capex plus energy (IT power x utilisation "
            "x `--pue` x `--electricity-usd-per-kwh` x hours), support (`--support-rate` of the "
            "price a year, or the catalog row's) and space (`--rack-usd-per-month`), each "
            'design\'s TCO beside its capex (docs/optimizer.md, "Lifetime cost"). The answer '
            "says whether the cheapest design to buy is also the cheapest to own, and why:\n",
            "optimize --catalog ethernet-budget --workload llama3-70b --tokens 2e12 "
            "--target-hours 720 --objective min-tco --electricity-usd-per-kwh 0.5 --years 6 "
            "--top-k 1",
        ),
        Step(
            "## Rent vs buy\n\nEvery answer ends with the same training run rented from each "
            "cloud offer (the catalog's `cloud_offers` table, else the bundled one with its "
            "sources and dates), timed by the same estimator on the offer's interconnect, and "
            "the utilisation above which owning each design beats renting its GPU-hours, under "
            'the request\'s cost model (here 6 years; docs/optimizer.md, "Rent vs buy"):\n',
            "optimize --catalog ethernet-budget --workload llama3-70b --tokens 2e12 "
            "--target-hours 720 --years 6 --top-k 1",
        ),
        Step(
            "## Facility limits\n\nPower, racks, floor positions (racks plus in-row CDUs), "
            "rack density and cooling hold together; with any of them the table adds each "
            "design's racks, floor positions, fullest rack and cooling:\n",
            "optimize --catalog infiniband-ndr --workload llama3-8b --tokens 1e11 "
            "--target-hours 100 --max-rack-kw 20 --cooling air --top-k 2",
        ),
        Step(
            "When the hall excludes every design, the diagnosis names the binding limit and the "
            "number that would admit one:\n",
            "optimize --catalog infiniband-ndr --workload llama3-70b --target-hours 720 "
            "--max-racks 32",
        ),
        Step(
            "## A portfolio of workloads\n\nA request file may name several workloads, each "
            "with its own target hours and runs a year (`--workload NAME:TARGET_HOURS` on the "
            "command line); a design is feasible only if it meets every one, and the answer "
            'shows each workload\'s time on it (docs/optimizer.md, "Portfolio of workloads"):'
            "\n",
            "optimize examples/optimize-portfolio.json --top-k 1",
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
            "## A report page (`--format html`)\n\n`optimize` and `sweep` write one "
            "self-contained, interactive HTML page with `--format html -o FILE.html` (nothing "
            "on the terminal); `procure batch` writes `report.html` beside its Parquet results "
            "(from `responses.jsonl`). The page needs no network: Plotly's script and the data "
            "are inline.\n",
            "optimize --catalog infiniband-ndr --workload llama3-70b --tokens 2e12 "
            f"--target-hours 720 --format html -o {work / 'plan.html'}",
        ),
        Step(
            "",
            "sweep --catalog ethernet-budget --catalog roce-spectrum --workload llama3-8b "
            f"--tokens 2e11 --targets 100,300 --budgets 4e6 --top-k 3 --format html "
            f"-o {work / 'sweep.html'}",
        ),
        Step(
            "",
            "optimize --catalog infiniband-ndr --workload llama3-70b --target-hours 720 "
            "--format html",
            after=HTML_PAGE,
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
            block = _block(step.args, code, output, step.max_lines)
            parts.append(
                step.text + "\n" + block + took + (f"\n{step.after}" if step.after else "")
            )
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
