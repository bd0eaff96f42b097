"""How long ``procure --help`` and ``procure --version`` take, beside a bare interpreter.

The CLI imports pandas, pyarrow, grpc and the solvers only inside the commands that use them,
so answering ``--help`` costs little more than starting Python. Each command runs as a child
process (``python -m client.cli``, what the ``procure`` script runs), RUNS times after one
warm-up; the table gives the median wall time and its ratio to ``python -c pass``.
Budget: under HELP_BUDGET_S each. Run: python -m benchmarks.cli_startup
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from benchmarks.measure import run_command
from benchmarks.report import Table, module_main, publish

RUNS = {"smallest": 3, "quick": 11, "full": 31}
HELP_BUDGET_S = 0.5
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "procure --help": [sys.executable, "-m", "client.cli", "--help"],
    "procure --version": [sys.executable, "-m", "client.cli", "--version"],
}


def median_wall_s(argv: list[str], runs: int) -> float:
    """Median wall time of ``argv`` over ``runs`` runs, after one untimed warm-up run
    (so the page cache, not the disk, serves the imports)."""
    warm = run_command(argv, timeout_s=60)
    if warm.returncode != 0:
        msg = f"{' '.join(argv)} exited {warm.returncode}: {warm.stdout[-500:]}"
        raise RuntimeError(msg)
    return statistics.median(run_command(argv, timeout_s=60).wall_s for _ in range(runs))


def run(level: str, out: Path) -> list[Table]:
    runs = RUNS[level]
    walls = {name: median_wall_s(argv, runs) for name, argv in COMMANDS.items()}
    baseline_s = walls["python -c pass"]
    table = Table(
        "CLI start-up",
        ("command", "median wall (s)", "ratio to python -c pass", "within budget"),
    )
    for name, wall_s in walls.items():
        within = "-" if name == "python -c pass" else "yes" if wall_s < HELP_BUDGET_S else "NO"
        table.add(name, round(wall_s, 3), round(wall_s / baseline_s, 1), within)
    table.notes.append(f"Median of {runs} runs each; budget {HELP_BUDGET_S} s.")
    publish("cli_startup", [table], out, {"level": level, "runs": runs})
    return [table]


if __name__ == "__main__":
    module_main(run, __doc__)
