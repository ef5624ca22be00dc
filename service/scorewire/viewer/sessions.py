"""Who a browser of the served viewer is: the server's bearer tokens (`TokenCheck`), the
signed-in browsers (`Sessions`, in the process), and the names of the cookies and the form
field that carry them. How a browser signs in, and the CSRF check every state-changing
request passes, are the request handler's (`handler`, whose docstring describes them).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

COOKIE = "scorewire_viewer"
"""The session cookie's name."""
PRE_SESSION_COOKIE = "scorewire_viewer_csrf"
"""The cookie holding a browser's CSRF token before it has a session (the sign-in form's)."""
CSRF_FIELD = "csrf"
"""The form field every state-changing browser request carries its CSRF token in."""


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in browser."""

    who: Any
    """The principal it signed in as."""
    digest: str
    """The SHA-256 digest of the token it signed in with."""
    csrf: str
    """The token its state-changing requests carry in the form field `csrf`."""
    expires: float
    """When it ends, on the `time.monotonic` clock."""


class Sessions:
    """Signed-in browsers: random session ids -> `Session`. Thread-safe."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}

    def create(self, who: Any, digest: str, *, replacing: str | None = None) -> str:
        """A new session id for `who`, signed in with the token of `digest`; the session
        `replacing` names (the browser's before this sign-in) and expired ones are dropped."""
        sid = secrets.token_urlsafe(32)
        now = time.monotonic()
        session = Session(who, digest, secrets.token_urlsafe(32), now + self.ttl_s)
        with self._lock:
            self._by_id = {k: v for k, v in self._by_id.items() if v.expires > now}
            if replacing is not None:
                self._by_id.pop(replacing, None)
            self._by_id[sid] = session
        return sid

    def get(self, sid: str) -> Session | None:
        """The live session of `sid`, or None."""
        with self._lock:
            found = self._by_id.get(sid)
        if found is None or found.expires <= time.monotonic():
            return None
        return found

    def drop(self, sid: str) -> None:
        """End the session of `sid` (nothing when there is none)."""
        with self._lock:
            self._by_id.pop(sid, None)


class TokenCheck:
    """Bearer tokens as the gRPC interceptor checks them: SHA-256 digests, compared in
    constant time against every configured digest."""

    def __init__(self, principals: Mapping[str, Any]) -> None:
        self._principals = dict(principals)

    @property
    def enabled(self) -> bool:
        """Whether auth is on (some token is configured)."""
        return bool(self._principals)

    def lookup(self, token: str) -> tuple[str, Any] | None:
        """(digest, principal) of `token`, or None when it is not a configured token."""
        digest = hashlib.sha256(token.strip().encode("utf-8")).hexdigest()
        ok = False
        for d in self._principals:  # every digest, so timing does not tell which matched
            ok |= hmac.compare_digest(digest, d)
        return (digest, self._principals[digest]) if ok else None

    def holds(self, digest: str, who: Any) -> bool:
        """Whether the token of `digest` is still configured, for `who`."""
        return digest in self._principals and self._principals[digest] == who


def same_token(expected: str | None, given: str | None) -> bool:
    """Whether a CSRF token given matches the one expected, compared in constant time
    (as bytes: a form may carry any text)."""
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))
