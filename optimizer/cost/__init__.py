"""Lifetime cost of a design: what it costs to own and run, not only to buy."""
