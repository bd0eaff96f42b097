"""The CLI spelling of a portfolio's workloads (issue 17): ``--workload NAME:TARGET_HOURS``,
``NAME@RUNS/yr`` or both; light enough for the CLI's start-up (protobuf messages only)."""

from __future__ import annotations

import math
import re

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.errors import InvalidInput

# The CLI spelling of one workload: NAME, NAME:TARGET_HOURS, NAME@RUNS/yr, NAME:TARGET_HOURS@RUNS/yr
_SPELLING = re.compile(r"^(?P<name>[^:@]+)(?::(?P<hours>[^@]*))?(?:@(?P<runs>.*))?$")
WORKLOAD_SPELLING = "NAME, NAME:TARGET_HOURS, NAME@RUNS/yr or NAME:TARGET_HOURS@RUNS/yr"


def _number(text: str, expected: str, flag: str, value: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise InvalidInput(f"got {value!r}, expected {expected}", field=flag)
    return number


def parse_workload_flag(value: str, flag: str = "--workload") -> optimize_pb2.WorkloadTarget:
    """One ``--workload`` value as a WorkloadTarget (target and runs 0 when not given).

    ``llama3-70b:720`` is 720 target hours; ``llama3-70b@4/yr`` is four runs a year sharing
    the cluster's usable hours; ``llama3-70b:720@4/yr`` both."""
    found = _SPELLING.match(value.strip())
    if found is None or not found["name"].strip():
        msg = f"got {value!r}, expected {WORKLOAD_SPELLING} (e.g. llama3-70b:720)"
        raise InvalidInput(msg, field=flag)
    out = optimize_pb2.WorkloadTarget()
    out.workload.model = found["name"].strip()
    if found["hours"] is not None:
        expected = "NAME:TARGET_HOURS with TARGET_HOURS a positive number of hours"
        out.target_training_hours = _number(found["hours"], expected, flag, value)
    if found["runs"] is not None:
        runs = found["runs"].strip()
        lowered = runs.lower()
        for suffix in ("/yr", "/year", "/y"):
            if lowered.endswith(suffix):
                runs = runs[: -len(suffix)]
                break
        else:
            runs = ""  # refused below: the runs need their unit
        expected = "NAME@RUNS/yr with RUNS a positive number of runs a year"
        out.runs_per_year = _number(runs, expected, flag, value)
    return out


def is_bare(value: str) -> bool:
    """A ``--workload`` value with no target and no runs: today's meaning (--target-hours)."""
    return ":" not in value and "@" not in value
