"""Fabric, topology, size and SKU selection as a mixed-integer program."""
