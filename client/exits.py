"""Process exit statuses of ``procure`` (documented in ``procure --help`` and docs/cli.md).

Errors raised on purpose carry their own status (``ProcurementError.exit_code``); these are the
ones the CLI decides by itself.
"""

from __future__ import annotations

EXIT_INTERNAL = 1
EXIT_USAGE = 2  # click's own status for a bad option or argument
EXIT_INFEASIBLE = 4
EXIT_SERVER_UNAVAILABLE = 5
