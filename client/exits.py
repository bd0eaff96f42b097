"""Process exit statuses of ``procure`` (documented in ``procure --help`` and docs/cli.md).

Errors raised on purpose carry their own status (``ProcurementError.exit_code``); these are the
ones the CLI decides by itself.
"""

from __future__ import annotations

EXIT_INTERNAL = 1
EXIT_USAGE = 2  # click's own status for a bad option or argument
EXIT_INVALID_INPUT = 3  # InvalidInput, NotFound, LimitExceeded (optimizer.errors)
EXIT_INFEASIBLE = 4
EXIT_SERVER_UNAVAILABLE = 5
# A batch engine that cannot be reached or was lost mid-run (a Dask scheduler that is down
# or went away): optimizer.batch.engines.EngineUnavailable. Not the input's fault; the rows
# committed so far are kept and ``--resume`` continues.
EXIT_ENGINE_UNAVAILABLE = 6
