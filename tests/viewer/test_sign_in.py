"""Signing in to the served viewer: no token in a page's address, `next` kept on the
server, sessions rotated at sign-in and bound to their token, and CSRF checks on every
POST. Over a real `scorewire serve` (raw HTTP where a client library would tidy up the
bytes), in process where the token set has to change, and in headless Chromium."""

from __future__ import annotations

import hashlib
import logging
import socket
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from scorewire.viewer import ResultsDirectory, handler
from scorewire.viewer.serving import ViewerServer
from scorewire.viewer.sessions import COOKIE, PRE_SESSION_COOKIE, TokenCheck

from tests.viewer.conftest import (
    FORM,
    TOKEN,
    KnownRuns,
    Signed,
    call,
    hidden,
    sign_in,
    sign_in_form,
)

# ---- no token in a page's address ----------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/runs/base", "/compare?base=base&run=nightly/new"])
def test_a_token_in_a_page_address_signs_nobody_in(served: str, path: str) -> None:
    # a link from another site carrying the attacker's token: no session, no redirect,
    # the token nowhere in the answer; the sign-in form instead
    sep = "&" if "?" in path else "?"
    reply = call(f"{served}{path}{sep}token={TOKEN}", **{"Sec-Fetch-Site": "cross-site"})
    assert reply.status == 400
    assert reply.cookie(COOKIE) is None and reply.headers.get("Location") is None
    assert TOKEN not in reply.body and TOKEN not in str(reply.headers)
    assert hidden(reply.body, "/login", "next") == path.replace("nightly/new", "nightly%2Fnew")
    assert "capitals" not in reply.body  # and no page


def test_a_browser_opening_a_link_with_a_token_is_not_signed_in(page: Any, served: str) -> None:
    assert page.goto(f"{served}/runs/base?token={TOKEN}").status == 400
    assert COOKIE not in {c["name"] for c in page.context.cookies()}
    assert page.locator("input[name=token]").is_visible()
    assert page.goto(served + "/runs/base").status == 401


def test_a_token_in_an_address_is_not_logged(
    known_runs: KnownRuns, caplog: pytest.LogCaptureFixture
) -> None:
    viewer = ViewerServer(
        lambda _who: ResultsDirectory(known_runs.root),
        principals={hashlib.sha256(TOKEN.encode()).hexdigest(): "alice"},
    )
    port = viewer.serve("127.0.0.1", 0)
    try:
        with caplog.at_level(logging.DEBUG, logger="scorewire"):
            reply = call(f"http://127.0.0.1:{port}/runs/base?token={TOKEN}")
        assert reply.status == 400
        assert "/runs/base" in caplog.text and TOKEN not in caplog.text
    finally:
        viewer.close()


# ---- next: a path on this server, nothing else -------------------------------------------------


def _raw_login(base: str, next_value: str) -> bytes:
    """POST /login with a valid token, form token and origin, and `next` as given, over
    a bare socket; the answer's header block exactly as sent."""
    pre, field = sign_in_form(base)
    body = urlencode({"token": TOKEN, "next": next_value, "csrf": field}).encode()
    netloc = urlsplit(base).netloc
    head = (
        f"POST /login HTTP/1.1\r\nHost: {netloc}\r\nOrigin: {base}\r\n"
        f"Content-Type: {FORM}\r\nCookie: {PRE_SESSION_COOKIE}={pre}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    host, port = netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer.partition(b"\r\n\r\n")[0]


@pytest.mark.parametrize(
    "next_value",
    [
        "/x\r\nSet-Cookie: evil=1",  # response splitting
        "/x\nSet-Cookie: evil=1",
        "/x\rSet-Cookie: evil=1",
        "/x\tSet-Cookie: evil=1",  # echoed raw into Location
        "/x\x00evil",
        "/x\x7fevil",
        "/x\x85evil",  # C1 next line
        "/x\u2028evil",  # Unicode line and paragraph separators
        "/x\u2029evil",
    ],
)
def test_control_characters_in_next_never_reach_a_header(served: str, next_value: str) -> None:
    head = _raw_login(served, next_value)
    lines = head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 303 See Other"
    assert b"evil" not in head and b"\t" not in head and b"\n" not in head.replace(b"\r\n", b"")
    assert [line for line in lines if line.lower().startswith(b"location:")] == [b"Location: /"]
    assert all(b" \t" not in line and line.isascii() for line in lines)


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/x",
        "/\\evil.example",
        "/x\\..\\\\evil.example",
        "\\\\evil.example",
        "https://evil.example",
        "javascript:alert(1)",
        "evil.example/x",
        "",
    ],
)
def test_sign_in_never_redirects_off_the_server(served: str, target: str) -> None:
    # a crafted `next` sends the browser home, not elsewhere
    head = _raw_login(served, target)
    assert head.startswith(b"HTTP/1.1 303 ") and b"\r\nLocation: /\r\n" in head + b"\r\n"


def test_no_header_is_written_with_a_line_break_even_if_next_were_let_through(
    known_runs: KnownRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the check where headers are written holds on its own: with `next` not cleaned at
    # all, the sign-in is a 500 page and nothing reaches the header block
    monkeypatch.setattr(handler, "_local", lambda target: target)
    viewer = ViewerServer(
        lambda _who: ResultsDirectory(known_runs.root),
        principals={hashlib.sha256(TOKEN.encode()).hexdigest(): "alice"},
    )
    base = f"http://127.0.0.1:{viewer.serve('127.0.0.1', 0)}"
    try:
        head = _raw_login(base, "/x\r\nSet-Cookie: evil=1")
        assert head.startswith(b"HTTP/1.1 500 ") and b"evil" not in head
        assert b"scorewire_viewer=" not in head  # no session either
    finally:
        viewer.close()


def test_a_path_of_this_server_is_kept_and_made_ascii(served: str) -> None:
    head = _raw_login(served, "/runs/caf\u00e9?check=a b&outcome=all")
    assert b"\r\nLocation: /runs/caf%C3%A9?check=a%20b&outcome=all" in head


# ---- sessions ----------------------------------------------------------------------------


def test_signing_in_rotates_the_session(served: str) -> None:
    first = sign_in(served)
    # signing in again from the same browser: a new id, and the old one is dropped
    second = sign_in(served, cookie=first.cookie)
    assert second.sid != first.sid and second.csrf != first.csrf
    assert call(served + "/", Cookie=first.cookie).status == 401
    assert call(served + "/", Cookie=second.cookie).status == 200
    # an id the browser was handed by someone else (session fixation) is never adopted
    planted = f"{COOKIE}=planted-by-an-attacker"
    third = sign_in(served, cookie=planted)
    assert third.sid != "planted-by-an-attacker"
    assert call(served + "/", Cookie=planted).status == 401


def test_a_session_ends_when_its_token_is_no_longer_configured(known_runs: KnownRuns) -> None:
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    other = hashlib.sha256(b"another token").hexdigest()
    viewer = ViewerServer(
        lambda _who: ResultsDirectory(known_runs.root), principals={digest: "alice"}
    )
    base = f"http://127.0.0.1:{viewer.serve('127.0.0.1', 0)}"
    try:
        signed = sign_in(base)
        assert call(base + "/", Cookie=signed.cookie).status == 200
        # alice's token replaced by another: her session goes with it
        viewer.tokens = TokenCheck({other: "alice"})
        assert call(base + "/", Cookie=signed.cookie).status == 401
        # the same token now another tenant's: the session was alice's, not the token's
        viewer.tokens = TokenCheck({digest: "bob"})
        assert call(base + "/", Cookie=signed.cookie).status == 401
        viewer.tokens = TokenCheck({digest: "alice"})
        assert call(base + "/", Cookie=signed.cookie).status == 200
    finally:
        viewer.close()


# ---- CSRF --------------------------------------------------------------------------------


def _logout(base: str, signed: Signed, form: dict[str, str], **headers: str) -> int:
    return call(base + "/logout", "POST", form, Cookie=signed.cookie, **headers).status


@pytest.mark.parametrize(
    ("why", "field", "headers"),
    [
        ("no CSRF token", None, {"Origin": "{base}"}),
        ("an empty CSRF token", "", {"Origin": "{base}"}),
        ("another session's CSRF token", "other", {"Origin": "{base}"}),
        ("another site's Origin", "own", {"Origin": "http://evil.example"}),
        ("an opaque Origin", "own", {"Origin": "null"}),
        ("another port of the same host", "own", {"Origin": "http://127.0.0.1:1"}),
        ("a cross-site fetch", "own", {"Sec-Fetch-Site": "cross-site"}),
        ("a same-site fetch", "own", {"Sec-Fetch-Site": "same-site"}),
        ("another site's Referer", "own", {"Referer": "http://evil.example/{base}/"}),
        ("no origin at all", "own", {}),
        ("a same-origin Referer but a cross-site fetch", "own", {
            "Referer": "{base}/", "Sec-Fetch-Site": "cross-site"
        }),
    ],
)  # fmt: skip
def test_a_post_without_its_sessions_csrf_token_from_the_viewer_is_refused(
    served: str, why: str, field: str | None, headers: dict[str, str]
) -> None:
    signed, other = sign_in(served), sign_in(served)
    form = (
        {}
        if field is None
        else {"csrf": {"own": signed.csrf, "other": other.csrf}.get(field, field)}
    )
    sent = {k: v.format(base=served) for k, v in headers.items()}
    assert _logout(served, signed, form, **sent) == 403, why
    assert call(served + "/", Cookie=signed.cookie).status == 200  # still signed in


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "{base}"}, {"Sec-Fetch-Site": "same-origin"}, {"Referer": "{base}/runs/base"}],
)
def test_a_post_from_the_viewers_own_page_with_its_token_is_accepted(
    served: str, headers: dict[str, str]
) -> None:
    signed = sign_in(served)
    sent = {k: v.format(base=served) for k, v in headers.items()}
    reply = call(served + "/logout", "POST", {"csrf": signed.csrf}, Cookie=signed.cookie, **sent)
    assert reply.status == 303 and reply.headers["Location"] == "/"
    assert reply.cookie(COOKIE) == ""  # the cookie is cleared
    assert call(served + "/", Cookie=signed.cookie).status == 401  # and the session gone


def test_a_script_with_a_bearer_header_needs_no_csrf_token(served: str) -> None:
    # browsers never add an Authorization header to a request another site makes
    reply = call(served + "/logout", "POST", {}, Authorization=f"Bearer {TOKEN}")
    assert reply.status == 303
    assert call(served + "/logout", "POST", {}, Authorization="Bearer nope").status == 401


@pytest.mark.parametrize(
    ("why", "field", "cookie", "headers"),
    [
        ("another site's form", "own", "own", {"Origin": "http://evil.example"}),
        ("a cross-site fetch", "own", "own", {"Sec-Fetch-Site": "cross-site"}),
        ("no origin at all", "own", "own", {}),
        ("no form token", None, "own", {"Origin": "{base}"}),
        ("no pre-session cookie", "own", None, {"Origin": "{base}"}),
        ("a form token of another cookie", "own", "other", {"Origin": "{base}"}),
    ],
)
def test_another_sites_form_cannot_sign_a_browser_in(
    served: str, why: str, field: str | None, cookie: str | None, headers: dict[str, str]
) -> None:
    # login CSRF: the attacker's token posted by the victim's browser signs nobody in
    pre, token_field = sign_in_form(served)
    other, _ = sign_in_form(served)
    form = {"token": TOKEN, "next": "/"}
    if field is not None:
        form["csrf"] = token_field
    sent = {k: v.format(base=served) for k, v in headers.items()}
    if cookie is not None:
        sent["Cookie"] = f"{PRE_SESSION_COOKIE}={pre if cookie == 'own' else other}"
    reply = call(served + "/login", "POST", form, **sent)
    assert reply.status == 403, why
    assert reply.cookie(COOKIE) is None


def test_a_sign_in_form_keeps_the_browsers_pre_session_token(served: str) -> None:
    # two tabs showing the form: both forms work, since the second reuses the cookie
    pre, first = sign_in_form(served)
    again = call(served + "/runs/base", Cookie=f"{PRE_SESSION_COOKIE}={pre}")
    assert again.status == 401 and again.cookie(PRE_SESSION_COOKIE) is None
    assert hidden(again.body, "/login") == first
