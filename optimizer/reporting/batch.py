"""The report page of a batch directory: every scenario's response from ``responses.jsonl``,
each catalog labelled with its vendor from the result rows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from optimizer.reporting.html import write_html
from optimizer.reporting.model import batch_scenarios

HTML_FILE = "report.html"


def write_batch_html(rows: pd.DataFrame, out_dir: str | Path, *, title: str) -> Path:
    """Write ``report.html`` into the batch directory ``out_dir``; its path."""
    from optimizer.batch.writer import RESPONSES_FILE

    out = Path(out_dir)
    vendors: dict[str, str] = {}
    if {"catalog_id", "vendor"} <= set(rows.columns):
        known = rows.dropna(subset=["catalog_id", "vendor"])
        vendors = dict(zip(known["catalog_id"], known["vendor"], strict=True))
    responses = out / RESPONSES_FILE
    scenarios = batch_scenarios(responses, vendors) if responses.exists() else []
    return write_html(str(out / HTML_FILE), scenarios, title=title)
