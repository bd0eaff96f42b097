"""The BOM as a table a procurement team pastes into a purchase request (CSV or XLSX).

Text cells that a spreadsheet would read as a formula (starting with = + - @, tab or carriage
return) are prefixed with a single quote (OWASP "CSV injection"). Money is shown in US dollars
with cents, from exact integer cents.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pandas as pd

from optimizer.errors import InvalidInput
from optimizer.topology.bom import BillOfMaterials

COLUMNS = (
    "category",
    "sku",
    "vendor",
    "tier",
    "length_m",
    "quantity",
    "unit_price_usd",
    "extended_price_usd",
    "power_kw",
    "rack_units",
    "source",
)
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_text(text: str) -> str:
    """``text`` that a spreadsheet shows as text, never evaluates."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _usd(cents: int) -> Decimal:
    return Decimal(cents) / 100


def bom_to_frame(bom: BillOfMaterials) -> pd.DataFrame:
    """One row per line plus a TOTAL row; text cells made formula-safe."""
    rows = [
        {
            "category": line.category,
            "sku": safe_text(line.sku),
            "vendor": safe_text(line.vendor),
            "tier": safe_text(line.tier),
            "length_m": line.length_m,
            "quantity": line.quantity,
            "unit_price_usd": _usd(line.unit_price_cents),
            "extended_price_usd": _usd(line.extended_price_cents),
            "power_kw": round(line.power_kw, 3),
            "rack_units": line.rack_units,
            "source": safe_text(line.source),
        }
        for line in bom.lines
    ]
    rows.append(
        {
            "category": "TOTAL",
            "sku": "",
            "vendor": "",
            "tier": f"{bom.racks} racks",
            "length_m": None,
            "quantity": None,
            "unit_price_usd": None,
            "extended_price_usd": _usd(bom.capex_cents),
            "power_kw": round(bom.power_kw, 3),
            "rack_units": bom.rack_units,
            "source": f"network share {bom.network_share:.1%} of capex",
        }
    )
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype({"quantity": "Int64", "rack_units": "Int64", "length_m": "Float64"})


def write_bom(bom: BillOfMaterials, path: str | Path) -> Path:
    """Write ``bom`` to ``path`` (.csv or .xlsx, chosen by the suffix)."""
    dest = Path(path)
    frame = bom_to_frame(bom)
    money = ["unit_price_usd", "extended_price_usd"]
    if dest.suffix.lower() == ".csv":
        frame[money] = frame[money].map(lambda v: "" if v is None else f"{v:.2f}")
        frame.to_csv(dest, index=False)
    elif dest.suffix.lower() == ".xlsx":
        frame[money] = frame[money].map(lambda v: None if v is None else float(v))
        frame.to_excel(dest, index=False, sheet_name="BOM")
    else:
        msg = f"got {dest.suffix or 'no suffix'!r}, expected .csv or .xlsx"
        raise InvalidInput(msg, field="path")
    return dest
