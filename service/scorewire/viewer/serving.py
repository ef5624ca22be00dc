"""The served viewer: the pages over HTTP on their own port, in their own threads.

A `ThreadingHTTPServer` (the standard library's, as the /metrics endpoint uses) runs in a
background thread and each request in a thread of its own, so reading results files never
blocks the server's event loop. Routes:

| path | page |
|---|---|
| `/` | the runs list |
| `/runs/<id>?check=&outcome=` | a run; outcome: failing (default), passed, failed, errored, |
| | skipped or all |
| `/compare?base=<id>&run=<id>` | two runs, regressions first |
| `POST /login` | exchange a bearer token (form field `token`) for a session cookie |

Auth (when the server has tokens): a request carries `Authorization: Bearer <token>`
(scripts), or the `scorewire_viewer` session cookie. A browser gets the cookie by signing
in on the form a 401 page shows, or by opening any page with `?token=<token>` once (the
server answers with a redirect to the same page without it). The cookie holds a random
session id, never the token; it is HttpOnly, SameSite=Strict, Secure over TLS, and lasts
`SCOREWIRE_VIEWER_SESSION_TTL_S`. Sessions live in the process: a restart signs everyone out.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from scorewire.core.errors import StartupError
from scorewire.settings import Settings
from scorewire.viewer.compare import prompt_matrix
from scorewire.viewer.model import RunNotFound, SourceUnavailable
from scorewire.viewer.render import (
    OUTCOME_FILTERS,
    csp,
    matches,
    render_compare,
    render_message,
    render_run,
    render_runs,
)
from scorewire.viewer.source import ResultsDirectory, RunSource

log = logging.getLogger("scorewire.viewer")

COOKIE = "scorewire_viewer"
"""The session cookie's name."""
MAX_FORM_BYTES = 8192
"""Largest sign-in form body read (a token and a path)."""

SourceFor = Callable[[Any], RunSource]
"""The runs a caller may see: the principal (None when auth is off) -> its source."""


class Sessions:
    """Signed-in browsers: random session ids -> (principal, expiry). Thread-safe."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._by_id: dict[str, tuple[Any, float]] = {}

    def create(self, who: Any) -> str:
        """A new session for `who`; expired ones are dropped on the way."""
        sid = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            self._by_id = {k: v for k, v in self._by_id.items() if v[1] > now}
            self._by_id[sid] = (who, now + self.ttl_s)
        return sid

    def get(self, sid: str) -> Any | None:
        """The principal of a live session, or None."""
        with self._lock:
            found = self._by_id.get(sid)
        if found is None or found[1] <= time.monotonic():
            return None
        return found[0]


class TokenCheck:
    """Bearer tokens as the gRPC interceptor checks them: SHA-256 digests, compared in
    constant time against every configured digest."""

    def __init__(self, principals: Mapping[str, Any]) -> None:
        self._principals = dict(principals)

    @property
    def enabled(self) -> bool:
        """Whether auth is on (some token is configured)."""
        return bool(self._principals)

    def principal(self, token: str) -> Any | None:
        """The principal of `token`, or None when it is not a configured token."""
        digest = hashlib.sha256(token.strip().encode("utf-8")).hexdigest()
        ok = False
        for d in self._principals:  # every digest, so timing does not tell which matched
            ok |= hmac.compare_digest(digest, d)
        return self._principals[digest] if ok else None


class _BadRequest(Exception):
    """A query parameter the viewer cannot use: 400, naming the parameter."""


def _local(target: str) -> str:
    """`target` when it is a path on this server, else `/`: never redirect elsewhere
    (`//host/...` and `/\\host` are other servers to a browser)."""
    if not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    return target


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[-1] if values else None


class ViewerServer:
    """The viewer's HTTP server: `serve(host, port)` starts it, `close()` stops it."""

    def __init__(
        self,
        source_for: SourceFor,
        *,
        principals: Mapping[str, Any] | None = None,
        max_cases: int = 1000,
        session_ttl_s: float = 12 * 3600,
        request_timeout_s: float = 30.0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.source_for = source_for
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

        class Handler(_Handler):
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


class _Handler(BaseHTTPRequestHandler):
    server_viewer: ViewerServer
    server_version = "scorewire-viewer"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    # ---- plumbing ------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        # Never the query string: it may carry ?token=.
        log.debug("viewer %s %s", self.command, urlsplit(self.path).path)

    def _send(
        self,
        status: HTTPStatus,
        body: str = "",
        *,
        nonce: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("Content-Security-Policy", csp(nonce or "-", header=True))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _page(self, status: HTTPStatus, render: Callable[[str], str]) -> None:
        nonce = secrets.token_urlsafe(16)
        self._send(status, render(nonce), nonce=nonce)

    def _message(self, status: HTTPStatus, title: str, text: str, **kw: Any) -> None:
        self._page(status, lambda n: render_message(title, text, nonce=n, **kw))

    def _cookie(self, sid: str, max_age: int) -> str:
        secure = "; Secure" if self.server_viewer.tls is not None else ""
        return f"{COOKIE}={sid}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}"

    # ---- auth --------------------------------------------------------------------------------

    def _session_principal(self) -> tuple[bool, Any]:
        viewer = self.server_viewer
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token:
            who = viewer.tokens.principal(token)
            return who is not None, who
        raw = self.headers.get("Cookie")
        if raw:
            try:
                jar = SimpleCookie(raw)
            except CookieError:
                jar = SimpleCookie()
            if COOKIE in jar:
                who = viewer.sessions.get(jar[COOKIE].value)
                if who is not None:
                    return True, who
        return False, None

    def _authorize(self, parts: Any, query: dict[str, list[str]]) -> tuple[bool, Any]:
        """(allowed, principal); when not allowed the response has been sent."""
        viewer = self.server_viewer
        if not viewer.tokens.enabled:
            return True, None
        rest = {k: v for k, v in query.items() if k != "token"}
        here = _local(parts.path + ("?" + urlencode(rest, doseq=True) if rest else ""))
        token = _one(query, "token")
        if token is not None:
            who = viewer.tokens.principal(token)
            if who is not None:
                sid = viewer.sessions.create(who)
                self._send(
                    HTTPStatus.SEE_OTHER,
                    headers={
                        "Location": here,
                        "Set-Cookie": self._cookie(sid, int(viewer.sessions.ttl_s)),
                    },
                )
                return False, None
        ok, who = self._session_principal()
        if ok:
            return True, who
        self._unauthorized(here)
        return False, None

    def _unauthorized(
        self, path: str, why: str = "This viewer needs one of the server's bearer tokens."
    ) -> None:
        nonce = secrets.token_urlsafe(16)
        body = render_message(
            "Sign in",
            why,
            login=_local(path),
            nonce=nonce,
        )
        self._send(
            HTTPStatus.UNAUTHORIZED,
            body,
            nonce=nonce,
            headers={"WWW-Authenticate": 'Bearer realm="scorewire viewer"'},
        )

    # ---- routes ------------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        allowed, who = self._authorize(parts, query)
        if not allowed:
            return
        try:
            source = self.server_viewer.source_for(who)
            if parts.path == "/":
                runs = source.list_runs()
                self._page(HTTPStatus.OK, lambda n: render_runs(runs, nonce=n))
            elif parts.path.startswith("/runs/"):
                self._run(source, unquote(parts.path[len("/runs/") :]), query)
            elif parts.path == "/compare":
                self._compare(source, query)
            else:
                self._message(HTTPStatus.NOT_FOUND, "Not found", f"No page at {parts.path}.")
        except RunNotFound as err:
            self._message(HTTPStatus.NOT_FOUND, "Not found", f"No run with the id {err.args[0]!r}.")
        except _BadRequest as err:
            self._message(HTTPStatus.BAD_REQUEST, "Bad request", str(err))
        except SourceUnavailable as err:
            self._message(HTTPStatus.SERVICE_UNAVAILABLE, "Unavailable", str(err))
        except Exception:  # a fault of ours: logged, never shown
            log.exception("viewer: %s failed", parts.path)
            self._message(HTTPStatus.INTERNAL_SERVER_ERROR, "Error", "The page could not be made.")

    def _run(self, source: RunSource, run_id: str, query: dict[str, list[str]]) -> None:
        detail = source.get_run(run_id)
        check = _one(query, "check") or None
        outcome = _one(query, "outcome") or "failing"
        if outcome not in OUTCOME_FILTERS:
            raise _BadRequest(f"outcome must be one of {', '.join(OUTCOME_FILTERS)}")
        if check is not None and check not in {c.name for c in detail.checks}:
            raise _BadRequest(f"check: this run has no check named {check!r}")
        every = source.results(run_id)
        chosen = [c for c in every if matches(c, check, outcome)]
        limit = self.server_viewer.max_cases
        cut = len(chosen) if len(chosen) > limit else None
        matrix = prompt_matrix(every)
        self._page(
            HTTPStatus.OK,
            lambda n: render_run(
                detail,
                chosen[:limit],
                check=check,
                outcome=outcome,
                truncated_from=cut,
                matrix=matrix,
                nonce=n,
            ),
        )

    def _compare(self, source: RunSource, query: dict[str, list[str]]) -> None:
        base, run = _one(query, "base"), _one(query, "run")
        if not base or not run:
            raise _BadRequest("base and run: give the ids of the two runs to compare")
        comparison = source.compare(base, run)
        self._page(HTTPStatus.OK, lambda n: render_compare(comparison, nonce=n))

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        if parts.path != "/login":
            self._message(HTTPStatus.NOT_FOUND, "Not found", f"No page at {parts.path}.")
            return
        origin = self.headers.get("Origin")
        if origin and urlsplit(origin).netloc != self.headers.get("Host"):
            # Another site's form signing this browser in (with a token of its choosing).
            self.close_connection = True
            self._message(HTTPStatus.FORBIDDEN, "Forbidden", "Sign in from the viewer's own page.")
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_FORM_BYTES:
            self.close_connection = True  # the body is left unread
            self._message(HTTPStatus.BAD_REQUEST, "Bad request", "The sign-in form is too large.")
            return
        form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
        target = _local(_one(form, "next") or "/")
        viewer = self.server_viewer
        who = viewer.tokens.principal(_one(form, "token") or "") if viewer.tokens.enabled else None
        if viewer.tokens.enabled and who is None:
            self._unauthorized(target, "That is not one of the server's tokens.")
            return
        headers = {"Location": target}
        if viewer.tokens.enabled:
            sid = viewer.sessions.create(who)
            headers["Set-Cookie"] = self._cookie(sid, int(viewer.sessions.ttl_s))
        self._send(HTTPStatus.SEE_OTHER, headers=headers)


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
    settings: Settings, principals: Mapping[str, Any], source_for: SourceFor | None = None
) -> ViewerServer | None:
    """The viewer a server's settings ask for, already serving; None when
    `viewer_port` is unset.

    `source_for` (the server's run store: a function of the signed-in principal, None
    when auth is off, so that each caller sees its own runs) is what it shows, unless
    `viewer_results_dir` is set: then, or without a `source_for`, every caller sees the
    results files under that directory (`results` in the state directory by default).
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
    )
    try:
        viewer.serve(settings.viewer_host, settings.viewer_port)
    except OSError as err:
        raise StartupError(
            f"the viewer port {settings.viewer_host}:{settings.viewer_port} is not available "
            f"({err.strerror}): {VIEWER_PORT_FIX}"
        ) from None
    return viewer
