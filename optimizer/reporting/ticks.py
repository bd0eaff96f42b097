"""Readable ticks for a logarithmic axis: 1-2-5 steps written as plain numbers.

Plotting libraries label a log axis with powers of ten (10^3) and leave the steps between
them bare, so a reader cannot tell 700 hours from 2,000. Both the HTML report and the
PNG/SVG plots use these ticks.
"""

from __future__ import annotations

import math
from typing import Any

# Whether an axis spanning this ratio (largest / smallest value) is drawn logarithmic.
LOG_SCALE_RATIO = 20.0
_STEPS = (1.0, 2.0, 5.0)


def wants_log(values: list[float]) -> bool:
    """A log axis for positive values that span more than LOG_SCALE_RATIO."""
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > LOG_SCALE_RATIO


def log_ticks(low: float, high: float) -> list[float]:
    """The 1-2-5 values from the step at or below ``low`` to the one at or above ``high``."""
    if low <= 0 or high <= 0:
        raise ValueError(f"log ticks need positive bounds, got {low} and {high}")
    low, high = min(low, high), max(low, high)
    ticks: list[float] = []
    for exponent in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        ticks += [step * 10.0**exponent for step in _STEPS]
    below = [t for t in ticks if t <= low * (1 + 1e-9)]
    above = [t for t in ticks if t >= high * (1 - 1e-9)]
    first, last = (below[-1] if below else ticks[0]), (above[0] if above else ticks[-1])
    return [t for t in ticks if first <= t <= last]


def tick_label(value: float, prefix: str = "") -> str:
    """A tick value as a plain number: 0.5, 20, 1,000, or $2M / $500k with a prefix of $."""
    if prefix == "$":
        for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
            if value >= scale:
                return f"${value / scale:,.3g}{suffix}"
        return f"${value:,.3g}"
    return f"{value:,.0f}" if value >= 1 else f"{value:.3g}"


def readable_log_axis(axis: Any, values: list[float], prefix: str = "") -> None:
    """Put 1-2-5 ticks labelled as plain numbers on a matplotlib axis drawn logarithmic
    (``ax.xaxis`` or ``ax.yaxis``), instead of bare powers of ten."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullFormatter

    positive = [v for v in values if v > 0]
    if not positive:
        return
    ticks = log_ticks(min(positive), max(positive))
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FixedFormatter([tick_label(t, prefix) for t in ticks]))
    axis.set_minor_formatter(NullFormatter())
