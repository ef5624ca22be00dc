"""The served viewer's requests: who is asking, and the page or form answer. Routes:

| path | page |
|---|---|
| `/` | the runs list |
| `/runs/<id>?check=&outcome=` | a run; outcome: failing (default), passed, failed, errored, |
| | skipped or all |
| `/runs/<id>/agreement` | its judge-backed checks against the labels of its outputs |
| `/runs/<id>/queue` | its judged outputs without a label, least sure first, one at a time |
| `/compare?base=<id>&run=<id>` | two runs, regressions first |
| `/export?run=<id>&format=<csv or json>&check=&outcome=&q=` | the run's cases under the run |
| | page's filter, as a download |
| `POST /login` | exchange a bearer token (form field `token`) for a session cookie |
| `POST /logout` | end the session |
| `POST /review` | a person's verdict on a case (fields `run`, `case` (its index), |
| | `passed` true or false, `note`, `next`), written as a label |

Auth (when the server has tokens): a request carries `Authorization: Bearer <token>`
(scripts), or the `scorewire_viewer` session cookie. A browser gets the cookie only by
posting a token to the sign-in form a 401 page shows; a page's address never signs anyone
in (`?token=` is answered 400 with the form: a link from another site could sign the
browser in as the attacker's tenant, and a token in an address stays in history, proxies'
logs and `Referer`). Each sign-in makes a new random session id and drops the one the
browser had; the cookie holds that id, never the token; it is HttpOnly, SameSite=Strict,
Secure over TLS, and lasts `SCOREWIRE_VIEWER_SESSION_TTL_S`. A session belongs to the
principal and the token digest it was made with, and stops working when that token is no
longer configured for that principal. Sessions live in the process: a restart signs
everyone out.

Every state-changing request passes `ViewerHandler._writable` before anything changes (see
there): a bearer header, or the viewer's own origin plus the form field `csrf` matching
the session's CSRF token (the sign-in form: its pre-session cookie, double-submit).

The handler runs in a thread of the viewer's `ThreadingHTTPServer` (`serving`); sessions
and tokens are `sessions`'.
"""

from __future__ import annotations

import functools
import logging
import re
import secrets
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from scorewire.labels.label_model import Label
from scorewire.viewer.agreement_view import case_reviews, review_queue, run_agreement
from scorewire.viewer.export import download
from scorewire.viewer.render import (
    OUTCOME_FILTERS,
    csp,
    matches,
    render_agreement,
    render_compare,
    render_message,
    render_queue,
    render_run,
    render_runs,
)
from scorewire.viewer.reviews import NO_AUTH_LABELLER, Review, Reviews, case_at, review_label
from scorewire.viewer.run_views import assertion_stats, prompt_matrix
from scorewire.viewer.sessions import (
    COOKIE,
    CSRF_FIELD,
    PRE_SESSION_COOKIE,
    Session,
    same_token,
)
from scorewire.viewer.source import RunSource
from scorewire.viewer.view_model import CaseResult, RunDetail, RunNotFound, SourceUnavailable

if TYPE_CHECKING:  # `serving` imports this module; the handler needs only the server's type
    from scorewire.viewer.serving import ViewerServer

log = logging.getLogger("scorewire.viewer")

_LABELLED: dict[str, tuple[Callable[..., Any], Callable[..., str]]] = {
    "agreement": (run_agreement, render_agreement),
    "queue": (review_queue, render_queue),
}
"""The pages under `/runs/<id>/` that read the run's labels: their view and renderer."""
_LABELLED_PAGES = tuple(f"/{page}" for page in _LABELLED)
MAX_FORM_BYTES = 8192
"""Largest form body read (a token, a path and a CSRF token)."""

_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")
"""What `secrets.token_urlsafe(32)` makes: the only pre-session cookie value reused."""
_HEADER_VALUE = re.compile(r"[\x20-\x7e]*")
"""What a header value written by the viewer may hold: printable ASCII, no CR, LF or tab."""
_NOT_IN_A_PATH = frozenset({"Cc", "Zl", "Zp"})
"""Unicode categories `next` may not hold: C0 and C1 controls, DEL, line and paragraph
separators."""
_PATH_SAFE = "/?#&=+%:@!$'()*,;[]~"
"""Left as they are when a path is made ASCII for `Location` (everything else is
percent-encoded, non-ASCII as UTF-8)."""
NO_TOKEN_IN_ADDRESS = (
    "A token in a page's address is not accepted: it would stay in the browser's history "
    "and in logs. Sign in on this form, or send an Authorization header."
)


class _BadRequest(Exception):
    """A query parameter the viewer cannot use: 400, naming the parameter."""


def _local(target: str) -> str:
    """`target` when it is a path on this server, made ASCII for a `Location` header;
    else `/`. Never a redirect elsewhere (`//host/...`, `/\\host` and `\\host` are
    other servers to a browser, `https:...` and `javascript:...` are no path) and never
    a control character or line break, which would end or split a header."""
    if (
        not target.startswith("/")
        or target.startswith("//")
        or "\\" in target
        or any(unicodedata.category(c) in _NOT_IN_A_PATH for c in target)
    ):
        return "/"
    return quote(target, safe=_PATH_SAFE)


def _reviewed(
    reviews: Reviews | None, detail: RunDetail, shown: list[CaseResult], caller: _Caller
) -> dict[int, list[Label]] | None:
    """The labels already on the outputs of the cases the run page shows (each labeller's
    latest), read in the run's tenant; None for a viewer that keeps no labels."""
    if reviews is None:
        return None
    tenant = detail.info.tenant or getattr(caller.who, "name", None) or ""
    return case_reviews(shown, functools.partial(reviews.labels_of, tenant))


def _run_filter(detail: RunDetail, query: dict[str, list[str]]) -> tuple[str | None, str, str]:
    """The run page's filter from the query: (check, outcome, text searched)."""
    check = _one(query, "check") or None
    outcome = _one(query, "outcome") or "failing"
    if outcome not in OUTCOME_FILTERS:
        raise _BadRequest(f"outcome must be one of {', '.join(OUTCOME_FILTERS)}")
    if check is not None and check not in {c.name for c in detail.checks}:
        raise _BadRequest(f"check: this run has no check named {check!r}")
    return check, outcome, (_one(query, "q") or "").strip()


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[-1] if values else None


@dataclass(frozen=True, slots=True)
class _Caller:
    """Who a page is for: the principal (None when auth is off) and, for a browser
    with a session, the session's CSRF token (the page's forms carry it)."""

    who: Any
    csrf: str | None = None


def _run_page(
    viewer: ViewerServer,
    detail: RunDetail,
    every: list[CaseResult],
    query: dict[str, list[str]],
    caller: _Caller,
    review_csrf: str | None,
) -> dict[str, Any]:
    """The run page's arguments but the run: the cases the query chooses (a page's worth),
    the reviews on them, and the matrix and checks table of every case."""
    check, outcome, text = _run_filter(detail, query)
    chosen = [c for c in every if matches(c, check, outcome, text)]
    limit, reviews = viewer.max_cases, viewer.reviews
    return {
        "cases": chosen[:limit],
        "check": check,
        "outcome": outcome,
        "query": text,
        "review_csrf": review_csrf if reviews is not None else None,
        "reviewed": _reviewed(reviews, detail, chosen[:limit], caller),
        "truncated_from": len(chosen) if len(chosen) > limit else None,
        "matrix": prompt_matrix(every),
        "assertions": assertion_stats(detail.checks, every),
    }


def _one_local_user(viewer: ViewerServer) -> bool:
    """Auth off on a viewer that answers only at its loopback address (`scorewire view`):
    whoever opens the page is the machine's own user, who may review without signing in
    (the form still carries the pre-session CSRF token, and the origin is checked)."""
    return not viewer.tokens.enabled and viewer.allowed_hosts is not None


class ViewerHandler(BaseHTTPRequestHandler):
    """One request to the served viewer: who is asking (a bearer header or a session), then
    the page, or the answer to the sign-in or sign-out form. `ViewerServer.serve` subclasses
    it with `server_viewer` set to itself."""

    server_viewer: ViewerServer
    server_version = "scorewire-viewer"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    # ---- plumbing ------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:
        # Never the query string: someone may have put a token in it.
        log.debug("viewer %s %s", self.command, urlsplit(self.path).path)

    def _send(
        self,
        status: HTTPStatus,
        body: str = "",
        *,
        nonce: str | None = None,
        headers: Mapping[str, str] | None = None,
        content_type: str = "text/html; charset=utf-8",
    ) -> None:
        # The one place the viewer's own headers are written: none may hold a line break
        # (response splitting) or anything else a header cannot carry.
        for key, value in (headers or {}).items():
            if not _HEADER_VALUE.fullmatch(value):
                raise ValueError(f"the viewer's {key} header would hold an unsafe character")
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
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

    def _page(
        self,
        status: HTTPStatus,
        render: Callable[..., str],
        *args: Any,
        headers: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> None:
        nonce = secrets.token_urlsafe(16)
        self._send(status, render(*args, nonce=nonce, **kw), nonce=nonce, headers=headers)

    def _message(self, status: HTTPStatus, title: str, text: str) -> None:
        self._page(status, render_message, title, text)

    def _cookie(self, name: str, value: str, max_age: int | None = None) -> str:
        attributes = [f"{name}={value}", "Path=/", "HttpOnly", "SameSite=Strict"]
        if max_age is not None:
            attributes.append(f"Max-Age={max_age}")
        if self.server_viewer.tls is not None:
            attributes.append("Secure")
        return "; ".join(attributes)

    def _cookie_value(self, name: str) -> str | None:
        raw = self.headers.get("Cookie")
        if not raw:
            return None
        try:
            jar = SimpleCookie(raw)
        except CookieError:
            return None
        return jar[name].value if name in jar else None

    def _read_form(self) -> dict[str, list[str]] | None:
        """The request's form, or None when it is too large (the 400 has been sent)."""
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_FORM_BYTES:
            self.close_connection = True  # the body is left unread
            self._message(HTTPStatus.BAD_REQUEST, "Bad request", "The form is too large.")
            return None
        return parse_qs(self.rfile.read(length).decode("utf-8", "replace"))

    # ---- auth --------------------------------------------------------------------------------

    def _bearer(self) -> tuple[bool, Any] | None:
        """None without a bearer header; else (valid, principal)."""
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        found = self.server_viewer.tokens.lookup(token)
        return (False, None) if found is None else (True, found[1])

    def _session(self) -> Session | None:
        """The live session the cookie names, while its token is configured for it."""
        sid = self._cookie_value(COOKIE)
        session = None if sid is None else self.server_viewer.sessions.get(sid)
        if session is None or not self.server_viewer.tokens.holds(session.digest, session.who):
            return None
        return session

    def _same_origin(self) -> bool:
        """Whether the browser says the request comes from the viewer's own pages: every
        one of `Origin` and `Sec-Fetch-Site` it sent says so, and, when it sent neither,
        the `Referer`'s origin does. A request with none of them is not."""
        host = self.headers.get("Host")
        if not host:
            return False
        own = f"{'https' if self.server_viewer.tls else 'http'}://{host}".lower()
        origin = self.headers.get("Origin")
        site = self.headers.get("Sec-Fetch-Site")
        if origin is None and site is None:
            referer = urlsplit(self.headers.get("Referer", ""))
            return f"{referer.scheme}://{referer.netloc}".lower() == own
        return (origin is None or origin.lower() == own) and site in (None, "same-origin")

    def _pre_session_token(self) -> tuple[str, dict[str, str]]:
        """The CSRF token of a browser without a session (the sign-in form's), and the
        header that sets its cookie when the browser has none yet. A browser keeps one,
        so two tabs' forms both work."""
        token = self._cookie_value(PRE_SESSION_COOKIE)
        if token is not None and _TOKEN_SHAPE.fullmatch(token):
            return token, {}
        token = secrets.token_urlsafe(32)
        return token, {"Set-Cookie": self._cookie(PRE_SESSION_COOKIE, token)}

    def _writable(self, form: dict[str, list[str]], *, signing_in: bool = False) -> _Caller | None:
        """The check every state-changing request passes before it changes anything: who
        may make it, or None when it is refused (the answer has been sent).

        A script shows a bearer header (no browser adds one to a request another site
        makes it send). A browser's request must come from the viewer's own pages
        (`_same_origin`) and carry in the form field `csrf` its session's CSRF token, or,
        when `signing_in` or with auth off, the token of its pre-session cookie
        (double-submit); tokens are compared in constant time."""
        viewer = self.server_viewer
        bearer = self._bearer()
        if bearer is not None:
            if bearer[0]:
                return _Caller(bearer[1])
            self._sign_in(HTTPStatus.UNAUTHORIZED, "/", "That is not one of the server's tokens.")
            return None
        if not self._same_origin():
            self._message(
                HTTPStatus.FORBIDDEN, "Forbidden", "Send this from the viewer's own page."
            )
            return None
        session = None
        if signing_in or not viewer.tokens.enabled:
            expected = self._cookie_value(PRE_SESSION_COOKIE)
        else:
            session = self._session()
            if session is None:
                self._sign_in(HTTPStatus.UNAUTHORIZED, "/")
                return None
            expected = session.csrf
        if not same_token(expected, _one(form, CSRF_FIELD)):
            self._message(
                HTTPStatus.FORBIDDEN, "Forbidden", "This form has expired: open the page again."
            )
            return None
        return _Caller(None, None) if session is None else _Caller(session.who, session.csrf)

    def _authorize(self, parts: Any, query: dict[str, list[str]]) -> _Caller | None:
        """Who a page is for; None when it is refused (the answer has been sent). A page
        never signs anyone in."""
        viewer = self.server_viewer
        rest = {k: v for k, v in query.items() if k != "token"}
        here = parts.path + ("?" + urlencode(rest, doseq=True) if rest else "")
        if "token" in query:
            self._sign_in(HTTPStatus.BAD_REQUEST, here, NO_TOKEN_IN_ADDRESS)
            return None
        if not viewer.tokens.enabled:
            return _Caller(None)
        bearer = self._bearer()
        if bearer is not None and bearer[0]:
            return _Caller(bearer[1])
        session = self._session() if bearer is None else None
        if session is not None:
            return _Caller(session.who, session.csrf)
        self._sign_in(HTTPStatus.UNAUTHORIZED, here)
        return None

    def _sign_in(
        self,
        status: HTTPStatus,
        path: str,
        why: str = "This viewer needs one of the server's bearer tokens.",
    ) -> None:
        """A page refused before sign-in: `why`, and with auth on the sign-in form, which
        returns to `path`."""
        if not self.server_viewer.tokens.enabled:
            self._message(status, "Bad request", why)
            return
        token, headers = self._pre_session_token()
        if status == HTTPStatus.UNAUTHORIZED:
            headers["WWW-Authenticate"] = 'Bearer realm="scorewire viewer"'
        title = "Sign in" if status == HTTPStatus.UNAUTHORIZED else "Bad request"
        self._page(
            status,
            render_message,
            title,
            why,
            login=_local(path),
            login_csrf=token,
            headers=headers,
        )

    # ---- routes ------------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def _host_allowed(self) -> bool:
        """Whether the request is addressed to a name this viewer answers to (see
        `ViewerServer.local_only`); when not, the 421 has been sent."""
        allowed = self.server_viewer.allowed_hosts
        if allowed is None or (self.headers.get("Host") or "").lower() in allowed:
            return True
        self.close_connection = True
        self._message(
            HTTPStatus.MISDIRECTED_REQUEST,
            "Misdirected request",
            "This viewer answers only at its loopback address (127.0.0.1 or localhost).",
        )
        return False

    def do_GET(self) -> None:
        if not self._host_allowed():
            return
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        try:
            caller = self._authorize(parts, query)
            if caller is None:
                return
            source = self.server_viewer.source_for(caller.who)
            if parts.path == "/":
                self._page(HTTPStatus.OK, render_runs, source.list_runs(), csrf=caller.csrf)
            elif parts.path.startswith("/runs/") and parts.path.endswith(_LABELLED_PAGES):
                run_id, _, page = unquote(parts.path[len("/runs/") :]).rpartition("/")
                self._labelled(source, run_id, page, caller)
            elif parts.path.startswith("/runs/"):
                self._run(source, unquote(parts.path[len("/runs/") :]), query, caller)
            elif parts.path == "/compare":
                self._compare(source, query, caller)
            elif parts.path == "/export":
                self._export(source, query)
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

    def _run(
        self, source: RunSource, run_id: str, query: dict[str, list[str]], caller: _Caller
    ) -> None:
        detail = source.get_run(run_id)
        review_csrf, viewer = caller.csrf, self.server_viewer
        headers: dict[str, str] = {}
        if viewer.reviews is not None and review_csrf is None and _one_local_user(viewer):
            review_csrf, headers = self._pre_session_token()  # double-submit, as sign-in
        args = _run_page(viewer, detail, source.results(run_id), query, caller, review_csrf)
        self._page(HTTPStatus.OK, render_run, detail, csrf=caller.csrf, headers=headers, **args)

    def _labelled(self, source: RunSource, run_id: str, page: str, caller: _Caller) -> None:
        """A run's agreement page or its reviewer queue: both read its outputs' labels."""
        if (reviews := self.server_viewer.reviews) is None:
            raise RunNotFound(run_id)  # a viewer without a label store has no such pages
        detail = source.get_run(run_id)  # another tenant's run is not found
        tenant = detail.info.tenant or getattr(caller.who, "name", None) or ""
        labels_of, (view, render) = functools.partial(reviews.labels_of, tenant), _LABELLED[page]
        shown = view(source.results(run_id), labels_of)
        self._page(HTTPStatus.OK, render, detail, shown, csrf=caller.csrf)

    def _export(self, source: RunSource, query: dict[str, list[str]]) -> None:
        """A run's cases under the run page's filter, every one, as a CSV or JSON download
        (from the caller's own source: a tenant exports only the runs it may see)."""
        run_id, fmt = _one(query, "run"), _one(query, "format") or "csv"
        if not run_id:
            raise _BadRequest("run: give the id of the run to export")
        if fmt not in ("csv", "json"):
            raise _BadRequest("format must be csv or json")
        detail = source.get_run(run_id)
        check, outcome, text = _run_filter(detail, query)
        chosen = [c for c in source.results(run_id) if matches(c, check, outcome, text)]
        filters = {"check": check or "", "outcome": outcome, "q": text}
        body, kind, disposition = download(run_id, fmt, filters, chosen)
        self._send(
            HTTPStatus.OK, body, headers={"Content-Disposition": disposition}, content_type=kind
        )

    def _compare(self, source: RunSource, query: dict[str, list[str]], caller: _Caller) -> None:
        base, run = _one(query, "base"), _one(query, "run")
        if not base or not run:
            raise _BadRequest("base and run: give the ids of the two runs to compare")
        cmp = replace(source.compare(base, run), drift_limit=self.server_viewer.drift_limit)
        self._page(HTTPStatus.OK, render_compare, cmp, csrf=caller.csrf)

    def do_POST(self) -> None:
        # Every POST route is here, and every one passes `_writable` first.
        if not self._host_allowed():
            return
        parts = urlsplit(self.path)
        routes = {"/login": self._login, "/logout": self._logout, "/review": self._review}
        try:
            form = self._read_form()
            if form is None:
                return
            route = routes.get(parts.path)
            if route is None:
                self._message(HTTPStatus.NOT_FOUND, "Not found", f"No page at {parts.path}.")
                return
            caller = self._writable(form, signing_in=parts.path == "/login")
            if caller is not None:
                route(form, caller)
        except RunNotFound as err:
            self._message(HTTPStatus.NOT_FOUND, "Not found", f"No run with the id {err.args[0]!r}.")
        except _BadRequest as err:
            self._message(HTTPStatus.BAD_REQUEST, "Bad request", str(err))
        except SourceUnavailable as err:
            self._message(HTTPStatus.SERVICE_UNAVAILABLE, "Unavailable", str(err))
        except Exception:  # a fault of ours: logged, never shown
            log.exception("viewer: POST %s failed", parts.path)
            self._message(HTTPStatus.INTERNAL_SERVER_ERROR, "Error", "That could not be done.")

    def _login(self, form: dict[str, list[str]], caller: _Caller) -> None:
        viewer = self.server_viewer
        target = _local(_one(form, "next") or "/")
        if not viewer.tokens.enabled:
            self._send(HTTPStatus.SEE_OTHER, headers={"Location": target})
            return
        found = viewer.tokens.lookup(_one(form, "token") or "")
        if found is None:
            self._sign_in(
                HTTPStatus.UNAUTHORIZED, target, "That is not one of the server's tokens."
            )
            return
        digest, who = found
        # A new id at every sign-in, and the browser's old one (perhaps planted) dropped.
        sid = viewer.sessions.create(who, digest, replacing=self._cookie_value(COOKIE))
        cookie = self._cookie(COOKIE, sid, int(viewer.sessions.ttl_s))
        self._send(HTTPStatus.SEE_OTHER, headers={"Location": target, "Set-Cookie": cookie})

    def _review(self, form: dict[str, list[str]], caller: _Caller) -> None:
        """A person's pass/fail and note on one case of a run the caller may see, written
        to the label store as a label on the exact output the page showed."""
        reviews = self.server_viewer.reviews
        if reviews is None:
            self._message(HTTPStatus.NOT_FOUND, "Not found", "This viewer keeps no reviews.")
            return
        run_id, index, verdict = _one(form, "run"), _one(form, "case"), _one(form, "passed")
        if not run_id or not (index or "").isdigit() or verdict not in ("true", "false"):
            raise _BadRequest("run, case (an index) and passed (true or false) are required")
        source = self.server_viewer.source_for(caller.who)
        detail = source.get_run(run_id)  # another tenant's run is not found
        case = case_at(source.results(run_id), int(index or 0))
        if case is None:
            raise _BadRequest(f"case: run {run_id!r} has no output at index {index}")
        name = getattr(caller.who, "name", None)
        label = review_label(
            case,
            Review(verdict == "true", (_one(form, "note") or "").strip()),
            labeller=name or NO_AUTH_LABELLER,
            tenant=detail.info.tenant or name or "",
        )
        reviews.write(label)
        target = _local(_one(form, "next") or f"/runs/{quote(run_id, safe='/')}")
        self._send(HTTPStatus.SEE_OTHER, headers={"Location": target})

    def _logout(self, form: dict[str, list[str]], caller: _Caller) -> None:
        sid = self._cookie_value(COOKIE)
        if sid is not None:
            self.server_viewer.sessions.drop(sid)
        cookie = self._cookie(COOKIE, "", 0)
        self._send(HTTPStatus.SEE_OTHER, headers={"Location": "/", "Set-Cookie": cookie})
