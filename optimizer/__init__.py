"""Cluster procurement optimizer.

catalog -> performance model -> topology sizing -> MIP -> ranked, verified BOMs.
"""

__version__ = "0.1.0"
