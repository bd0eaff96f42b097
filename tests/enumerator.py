"""The independent enumerator, under the name the tests import (``from enumerator import ...``).

It lives in ``benchmarks/enumerator.py`` so that ``python -m benchmarks`` times the optimizer
against it without a copy; this module re-exports it for the tests that predate the move.
"""

from benchmarks.enumerator import *  # noqa: F403
