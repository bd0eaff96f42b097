"""Issue 13's acceptance scenarios, under the name the tests import.

They live in ``benchmarks/realism_scenarios.py`` (the benchmarks time the optimizer against the
enumerator on them); the re-export keeps the tests' ``from realism_scenarios import ...``.
"""

from benchmarks.realism_scenarios import *  # noqa: F403
