"""Report pages of results: one self-contained, interactive HTML file per answer, sweep or
batch, built from the response messages (``write_html``; Plotly is imported only there)."""

from optimizer.reporting.html import render_html, write_html
from optimizer.reporting.model import DesignPoint, Scenario, batch_scenarios, design_points

__all__ = [
    "DesignPoint",
    "Scenario",
    "batch_scenarios",
    "design_points",
    "render_html",
    "write_html",
]
