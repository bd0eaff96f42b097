"""Exact money: USD text <-> integer cents, never through binary floating point.

The MIP needs integer coefficients, and a price list must round-trip to the cent.
"""

from __future__ import annotations

import re
from decimal import Decimal

CENTS_PER_USD = 100
_USD = re.compile(r"([0-9]{1,12})(?:\.([0-9]{1,2}))?")


def parse_usd_cents(text: str) -> int | None:
    """Cents of a plain decimal USD amount such as ``1234.5``; None unless it is exactly that.

    No sign, exponent, thousands separator, currency symbol or third decimal place is
    accepted: each would mean guessing what the author meant.
    """
    m = _USD.fullmatch(text)
    if m is None:
        return None
    whole, frac = m.group(1), m.group(2) or ""
    return int(whole) * CENTS_PER_USD + int(frac.ljust(2, "0"))


def format_usd(cents: int) -> str:
    """The canonical text of an amount: ``1234.50``; ``parse_usd_cents`` inverts it."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), CENTS_PER_USD)
    return f"{sign}{whole}.{frac:02d}"


def cents_to_usd(cents: int) -> Decimal:
    """The exact dollar amount of ``cents`` (for reports and JSON)."""
    return Decimal(cents).scaleb(-2)
