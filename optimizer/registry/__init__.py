"""The domain's vocabulary as registered types: fabrics, topology families, objectives.

Each kind is one descriptor record in one module (``fabrics``, ``topologies``,
``objectives``); compatibility checks, sizing, search, explanations, rendering and CLI help
read those records instead of comparing strings. ``base.Registry`` parses what users type
(any case, ``-`` or ``_``) and names the allowed values when it cannot. This package imports
nothing at import time so that any layer may import its submodules without a cycle.
"""
