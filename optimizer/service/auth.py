"""Bearer tokens: each maps to one tenant; the tenant comes from the token, never the request.

Token file format (docs/service.md): UTF-8 text, one ``<tenant> <token>`` pair per line,
separated by whitespace; blank lines and lines starting with ``#`` are ignored. A token is at
least MIN_TOKEN_CHARS printable characters; a tenant may hold several tokens (rotation), a
token names one tenant. Keep the file readable by the server's user only.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from optimizer.errors import InvalidInput, Unauthenticated

MIN_TOKEN_CHARS = 16
LOCAL_TENANT = "default"
"""The tenant of every call when the server runs without a token file (loopback only)."""
_SCHEME = "bearer "


@dataclass(frozen=True)
class TokenTable:
    """Tokens and their tenants; ``tenant_for`` checks a presented token against all of them."""

    entries: tuple[tuple[bytes, str], ...]

    def tenant_for(self, authorization: str | None) -> str:
        """The tenant of an ``authorization: Bearer <token>`` header value.

        Every entry is compared (in constant time each) so the time taken says nothing about
        which token came close.
        """
        if not authorization:
            raise Unauthenticated(
                "missing credentials; expected metadata 'authorization: Bearer <token>'"
            )
        if authorization[: len(_SCHEME)].lower() != _SCHEME:
            raise Unauthenticated("expected metadata 'authorization: Bearer <token>'")
        presented = authorization[len(_SCHEME) :].strip().encode()
        tenant = None
        for token, owner in self.entries:
            if hmac.compare_digest(token, presented) and tenant is None:
                tenant = owner
        if tenant is None:
            raise Unauthenticated("invalid bearer token")
        return tenant


def parse_tokens(lines: Sequence[str], origin: str) -> TokenTable:
    """Parse the token file's lines; errors name the line, never the token."""
    entries: list[tuple[bytes, str]] = []
    seen: set[bytes] = set()
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split()
        where = f"{origin}:{number}"
        if len(parts) != 2:
            raise InvalidInput("expected '<tenant> <token>'", field=where)
        tenant, token = parts
        if len(token) < MIN_TOKEN_CHARS or not token.isprintable():
            raise InvalidInput(
                f"token must be at least {MIN_TOKEN_CHARS} printable characters", field=where
            )
        raw = token.encode()
        if raw in seen:
            raise InvalidInput("token already given on an earlier line", field=where)
        seen.add(raw)
        entries.append((raw, tenant))
    if not entries:
        raise InvalidInput("no tokens; expected '<tenant> <token>' lines", field=origin)
    return TokenTable(tuple(entries))


def load_tokens(path: Path) -> TokenTable:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInput(
            f"cannot read token file ({type(e).__name__})", field=str(path)
        ) from None
    return parse_tokens(text.splitlines(), str(path))
