"""The batch summary an analyst reads: which vendor's catalog wins, at what cost, and the
cost-time frontier of each, as Markdown and a PNG plot.

Scenarios are compared across catalogs by ``comparison_key`` (the same request solved
against each catalog). The winner of a comparison is the catalog whose rank-1 design is
cheapest (``min_cost``) or fastest (``min_time``), the other measure breaking ties; a
catalog with no feasible design loses. "Median capex at equal target" takes only the
``min_cost`` comparisons every catalog could meet, so the medians are over the same
targets.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from optimizer.optimize.request import Objective
from optimizer.reporting.batch import write_batch_html
from optimizer.reporting.ticks import readable_log_axis

REPORT_FILE = "report.md"
PLOT_FILE = "frontier.png"
# Frontier points listed per catalog in the Markdown (all of them are plotted).
MAX_LISTED_POINTS = 12
# Workloads with a panel in the plot, most frequent first (the Markdown lists them all).
MAX_PLOTTED_WORKLOADS = 6


def workloads(rows: pd.DataFrame) -> dict[str, str]:
    """Workload key -> readable label, most scenarios first."""
    counts = (
        rows.groupby("workload_key", sort=False)
        .agg(
            n=("scenario_id", "size"),
            model=("workload_model", "first"),
            tokens=("training_tokens", "first"),
        )
        .sort_values("n", ascending=False, kind="stable")
    )
    return {
        str(key): (r["model"] or f"custom workload {str(key)[:8]}")
        + ("" if pd.isna(r["tokens"]) else f", {r['tokens']:.3g} tokens")
        for key, r in counts.iterrows()
    }


def winners(rows: pd.DataFrame) -> pd.Series:
    """The winning catalog of each comparison key that has at least one design."""
    solved = rows.dropna(subset=["capex_usd", "training_time_hours"])
    by_time = solved["objective"] == Objective.MIN_TIME.value
    first = solved["training_time_hours"].where(by_time, solved["capex_usd"])
    second = solved["capex_usd"].where(by_time, solved["training_time_hours"])
    ranked = solved.assign(_first=first, _second=second).sort_values(
        ["comparison_key", "_first", "_second", "catalog"]
    )
    return ranked.groupby("comparison_key")["catalog"].first()


def frontier(points: pd.DataFrame) -> pd.DataFrame:
    """Designs no other design beats on both capex and training time, fastest first."""
    pts = points.dropna(subset=["capex_usd", "training_time_hours"]).sort_values(
        ["training_time_hours", "capex_usd"]
    )
    cheapest = pts["capex_usd"].cummin()
    keep = pts["capex_usd"] < cheapest.shift(fill_value=float("inf"))
    return pts[keep][["training_time_hours", "capex_usd", "gpus", "fabric", "topology"]]


def vendor_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per catalog: scenarios, designs found, errors, wins, win rate, median capex at equal
    target."""
    win = winners(rows)
    contested = rows.groupby("comparison_key")["catalog"].nunique()
    contested_keys = contested[contested > 1].index
    wins = win[win.index.isin(contested_keys)].value_counts()
    cost = rows[(rows["objective"] == Objective.MIN_COST.value) & rows["capex_usd"].notna()]
    n_catalogs = rows["catalog"].nunique()
    complete = cost.groupby("comparison_key")["catalog"].nunique()
    common = cost[cost["comparison_key"].isin(complete[complete == n_catalogs].index)]
    out = rows.groupby("catalog").agg(
        vendor=("vendor", "first"),
        scenarios=("scenario_id", "size"),
        with_design=("capex_usd", "count"),
        errors=("status", lambda s: int((s == "ERROR").sum())),
    )
    out["contested"] = (
        rows[rows["comparison_key"].isin(contested_keys)]
        .groupby("catalog")["scenario_id"]
        .size()
        .reindex(out.index, fill_value=0)
    )
    out["wins"] = wins.reindex(out.index, fill_value=0)
    out["win_rate"] = (out["wins"] / out["contested"].where(out["contested"] > 0)).fillna(0.0)
    out["median_capex_usd_equal_target"] = common.groupby("catalog")["capex_usd"].median()
    out["equal_target_scenarios"] = (
        common.groupby("catalog").size().reindex(out.index, fill_value=0)
    )
    return out


def errors_by_cause(rows: pd.DataFrame) -> pd.DataFrame:
    """Error rows grouped by their message: code, message, scenarios, catalogs; most first."""
    errors = rows[rows["status"] == "ERROR"]
    if errors.empty:
        return pd.DataFrame(columns=["error_code", "error", "scenarios", "catalogs"])
    grouped = (
        errors.fillna({"error_code": "", "error": ""})
        .groupby(["error_code", "error"], sort=False)
        .agg(scenarios=("scenario_id", "size"), catalogs=("catalog", "nunique"))
        .reset_index()
    )
    return grouped.sort_values(
        ["scenarios", "error"], ascending=[False, True], kind="stable"
    ).reset_index(drop=True)


def write_report(
    rows: pd.DataFrame, out_dir: str | Path, *, title: str = "Batch report"
) -> tuple[Path, Path]:
    """Write ``report.md``, ``frontier.png`` and ``report.html`` into ``out_dir``; the first
    two paths."""
    out = Path(out_dir)
    plot_path = out / PLOT_FILE
    _plot(rows, plot_path)
    md = out / REPORT_FILE
    md.write_text(_markdown(rows, title), encoding="utf-8")
    write_batch_html(rows, out, title=title)  # report.html, beside the Parquet results
    return md, plot_path


def _money(x: float) -> str:
    return "" if pd.isna(x) else f"{x:,.0f}"


def _markdown(rows: pd.DataFrame, title: str) -> str:
    lines = [
        f"# {title}",
        "",
        f"{len(rows):,} scenarios; status counts: "
        + ", ".join(f"{k} {v:,}" for k, v in rows["status"].value_counts().items()),
        "",
    ]
    if rows.empty:
        return "\n".join(lines) + "\n"
    causes = errors_by_cause(rows)
    if not causes.empty:
        lines += [
            "## Errors by cause",
            "",
            "| scenarios | catalogs | code | error |",
            "|--:|--:|---|---|",
        ]
        for _, c in causes.iterrows():
            message = str(c["error"]).replace("|", "\\|").replace("\n", " ")
            lines.append(
                f"| {c['scenarios']:,} | {c['catalogs']:,} | {c['error_code']} | {message} |"
            )
        lines.append("")
    table = vendor_table(rows)
    lines += [
        "## Per catalog",
        "",
        "| catalog | vendor | scenarios | with a design | errors | wins | win rate "
        "| median capex at equal target (USD) | over scenarios |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for cat, r in table.iterrows():
        lines.append(
            f"| {cat} | {r['vendor'] or ''} | {r['scenarios']:,} | "
            f"{r['with_design']:,} | {r['errors']:,} | {r['wins']:,} of "
            f"{r['contested']:,} | {r['win_rate']:.0%} | "
            f"{_money(r['median_capex_usd_equal_target'])} | "
            f"{r['equal_target_scenarios']:,} |"
        )
    lines += [
        "",
        "A win is the cheapest rank-1 design (fastest for `min_time`) among the "
        "catalogs that ran the same request; equal-target medians use only the "
        "`min_cost` requests every catalog met.",
        "",
    ]
    targets = rows[
        (rows["objective"] == Objective.MIN_COST.value)
        & rows["capex_usd"].notna()
        & rows["target_training_hours"].notna()
    ]
    if not targets.empty:
        pivot = targets.pivot_table(
            index="target_training_hours", columns="catalog", values="capex_usd", aggfunc="median"
        )
        lines += [
            "## Median capex (USD) by target training time",
            "",
            "| target (hours) | " + " | ".join(map(str, pivot.columns)) + " |",
            "|--:|" + "--:|" * len(pivot.columns),
        ]
        for target, r in pivot.iterrows():
            lines.append(f"| {target:g} | " + " | ".join(_money(v) for v in r) + " |")
        lines.append("")
    lines += [
        "## Cost-time frontier per catalog",
        "",
        "Per workload, the rank-1 designs no other design of the same catalog beats on "
        "both capex and training time (the grid's targets and budgets trace it).",
        "",
        f"![frontier]({PLOT_FILE})",
        "",
    ]
    for key, label in workloads(rows).items():
        lines += [f"### {label}", ""]
        for cat, group in rows[rows["workload_key"] == key].groupby("catalog"):
            front = frontier(group)
            catalog_name = str(cat)
            lines += [f"{catalog_name}:", ""]
            if front.empty:
                lines += ["no feasible design", ""]
                continue
            lines += [
                "| training time (hours) | capex (USD) | GPUs | fabric | topology |",
                "|--:|--:|--:|---|---|",
            ]
            for _, p in front.head(MAX_LISTED_POINTS).iterrows():
                lines.append(
                    f"| {p['training_time_hours']:,.1f} | {_money(p['capex_usd'])} "
                    f"| {p['gpus']:.0f} | {p['fabric']} | {p['topology']} |"
                )
            if len(front) > MAX_LISTED_POINTS:
                lines.append(f"| ... {len(front) - MAX_LISTED_POINTS} more | | | | |")
            lines.append("")
    return "\n".join(lines)


def _plot(rows: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and in workers
    import matplotlib.pyplot as plt

    panels = list(workloads(rows).items())[:MAX_PLOTTED_WORKLOADS] or [("", "no results")]
    cols = min(2, len(panels))
    nrows = -(-len(panels) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.5 * cols, 4.5 * nrows), dpi=100, squeeze=False)
    colors = {cat: f"C{i}" for i, cat in enumerate(sorted(rows["catalog"].unique()))}
    try:
        for ax, (key, label) in zip(axes.flat, panels, strict=False):
            solved = rows[(rows["workload_key"] == key) & rows["capex_usd"].notna()]
            for cat, group in solved.groupby("catalog"):
                ax.scatter(
                    group["training_time_hours"],
                    group["capex_usd"],
                    s=10,
                    alpha=0.3,
                    color=colors[cat],
                )
                front = frontier(group)
                ax.step(
                    front["training_time_hours"],
                    front["capex_usd"],
                    where="post",
                    marker="o",
                    markersize=3,
                    color=colors[cat],
                    label=str(cat),
                )
            ax.set_xscale("log")
            ax.set_yscale("log")
            readable_log_axis(ax.xaxis, solved["training_time_hours"].tolist())  # 1-2-5 ticks
            readable_log_axis(ax.yaxis, solved["capex_usd"].tolist(), "$")
            ax.set_title(label, fontsize=10)
            ax.set_xlabel("training time (hours)")
            ax.set_ylabel("capex (USD)")
            ax.grid(True, which="both", alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=8)
        for ax in list(axes.flat)[len(panels) :]:
            ax.set_visible(False)
        fig.suptitle("cost-time frontier per catalog (dots: all rank-1 designs)")
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
