"""The served viewer: the pages over HTTP on their own port, in their own threads.

A `ThreadingHTTPServer` (the standard library's, as the /metrics endpoint uses) runs in a
background thread and each request in a thread of its own, so reading results files never
blocks the server's event loop. What a request gets, and who may ask, is the request
handler's (`handler`: routes, sign-in, CSRF); sessions and tokens are `sessions`'.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import threading
from collections.abc import Callable, Mapping
from http.server import ThreadingHTTPServer
from typing import Any

from scorewire.core.errors import StartupError
from scorewire.settings import Settings
from scorewire.viewer.handler import ViewerHandler
from scorewire.viewer.reviews import Reviews
from scorewire.viewer.sessions import Sessions, TokenCheck
from scorewire.viewer.source import ResultsDirectory, RunSource

log = logging.getLogger("scorewire.viewer")

SourceFor = Callable[[Any], RunSource]
"""The runs a caller may see: the principal (None when auth is off) -> its source."""


class ViewerServer:
    """The viewer's HTTP server: `serve(host, port)` starts it, `close()` stops it.

    `tokens` is read on every request: a session stops working as soon as its token is
    no longer in it for the same principal."""

    def __init__(
        self,
        source_for: SourceFor,
        *,
        principals: Mapping[str, Any] | None = None,
        max_cases: int = 1000,
        session_ttl_s: float = 12 * 3600,
        request_timeout_s: float = 30.0,
        tls: ssl.SSLContext | None = None,
        local_only: bool = False,
        reviews: Reviews | None = None,
        drift_limit: float = 0.1,
    ) -> None:
        self.source_for = source_for
        self.drift_limit = drift_limit
        """How far a judge check's holdout mean may move before the compare page flags it."""
        self.reviews = reviews
        """Where a person's review of a case is written (the label store); None: the
        pages offer no review."""
        self.local_only = local_only
        """Answer only requests addressed to this machine's loopback names (`Host`
        127.0.0.1 or localhost, with the port): a viewer without tokens on a developer's
        machine must not be readable by a web page whose name was rebound to 127.0.0.1."""
        self.allowed_hosts: frozenset[str] | None = None
        """The `Host` values answered once serving with `local_only`; None: any."""
        self.tokens = TokenCheck(principals or {})
        self.sessions = Sessions(session_ttl_s)
        self.max_cases = max_cases
        self.request_timeout_s = request_timeout_s
        self.tls = tls
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def serve(self, host: str, port: int) -> int:
        """Serve in a background thread; returns the bound port (0 picks one).
        Raises OSError when the port is taken."""
        viewer = self

        class Handler(ViewerHandler):
            server_viewer = viewer
            timeout = viewer.request_timeout_s  # per socket operation, handshake included

        httpd = ThreadingHTTPServer((host, port), Handler)
        httpd.daemon_threads = True
        if self.tls is not None:
            # The handshake happens in the request's thread, not in the accept loop.
            httpd.socket = self.tls.wrap_socket(
                httpd.socket, server_side=True, do_handshake_on_connect=False
            )
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, name="scorewire-viewer", daemon=True
        )
        self._thread.start()
        bound = int(httpd.server_address[1])
        if self.local_only:
            self.allowed_hosts = frozenset(
                f"{name}:{bound}" for name in ("127.0.0.1", "localhost", "[::1]")
            )
        log.info("viewer on http%s://%s:%d/", "s" if self.tls else "", host, bound)
        return bound

    @property
    def port(self) -> int | None:
        """The bound port, or None when not serving."""
        return None if self._httpd is None else int(self._httpd.server_address[1])

    def close(self) -> None:
        """Stop serving (idempotent)."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    async def aclose(self) -> None:
        """`close` off the event loop (shutdown waits for the poll loop)."""
        await asyncio.to_thread(self.close)


# ---- in the server ----------------------------------------------------------------------------

VIEWER_PORT_FIX = (
    "another server may hold it; pick another with SCOREWIRE_VIEWER_PORT "
    "(0 picks a free one), or unset it to serve no viewer"
)
"""What to do when the viewer's port is taken."""


def viewer_tls(settings: Settings) -> ssl.SSLContext | None:
    """HTTPS with the gRPC server's certificate when it has one (and client certificates
    when it requires them); None for plain HTTP."""
    if not (settings.tls_cert and settings.tls_key):
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(settings.tls_cert, settings.tls_key)
    if settings.tls_client_ca:
        context.load_verify_locations(cafile=settings.tls_client_ca)
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def start_viewer(
    settings: Settings,
    principals: Mapping[str, Any],
    source_for: SourceFor | None = None,
    reviews: Reviews | None = None,
) -> ViewerServer | None:
    """The viewer a server's settings ask for, already serving; None when
    `viewer_port` is unset.

    `source_for` (the server's run store: a function of the signed-in principal, None
    when auth is off, so that each caller sees its own runs) is what it shows, unless
    `viewer_results_dir` is set: then, or without a `source_for`, every caller sees the
    results files under that directory (`results` in the state directory by default).
    `reviews`: where a signed-in person's pass/fail and note on a case are written.
    """
    if settings.viewer_port is None:
        return None
    if source_for is None or settings.viewer_results_dir is not None:
        source = ResultsDirectory(settings.viewer_results_path())
        source_for = lambda _who: source  # noqa: E731
    viewer = ViewerServer(
        source_for,
        principals=principals,
        max_cases=settings.viewer_max_cases,
        session_ttl_s=settings.viewer_session_ttl_s,
        request_timeout_s=settings.viewer_request_timeout_s,
        tls=viewer_tls(settings),
        reviews=reviews,
        drift_limit=settings.judge_watch.drift_limit,
    )
    try:
        viewer.serve(settings.viewer_host, settings.viewer_port)
    except OSError as err:
        raise StartupError(
            f"the viewer port {settings.viewer_host}:{settings.viewer_port} is not available "
            f"({err.strerror}): {VIEWER_PORT_FIX}"
        ) from None
    return viewer
