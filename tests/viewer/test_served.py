"""The viewer served by a real `scorewire serve` (SCOREWIRE_VIEWER_PORT), behind the
server's bearer tokens, driven in headless Chromium; and, in process, without auth.
Signing in, sessions and CSRF: test_sign_in.py."""

from __future__ import annotations

import hashlib
import http.client
import ssl
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode

import pytest
from scorewire.settings import Settings
from scorewire.viewer import ResultsDirectory
from scorewire.viewer.serving import ViewerServer, start_viewer
from scorewire.viewer.sessions import COOKIE, PRE_SESSION_COOKIE

from tests.viewer.conftest import FORM, TOKEN, KnownRuns, hidden, screenshot


def _get(url: str, **headers: str) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode()


def _signed_in(page: Any, url: str) -> Any:
    """Open `url`, sign in on the form it shows; the page lands on `url`."""
    assert page.goto(url).status == 401
    page.fill("input[name=token]", TOKEN)
    with page.expect_navigation() as navigation:
        page.click("form.login button[type=submit]")
    response = navigation.value
    assert response.status == 200
    return response


@pytest.mark.parametrize("path", ["/", "/runs/base", "/compare?base=base&run=nightly/new"])
def test_pages_are_refused_without_a_token(served: str, path: str) -> None:
    status, headers, body = _get(served + path)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
    assert "capitals" not in body and "Lyon" not in body
    # a wrong token is no better
    assert _get(served + path, Authorization="Bearer nope")[0] == 401


def test_a_bearer_header_opens_the_pages(served: str) -> None:
    # scripts pass the token as gRPC callers do
    status, headers, body = _get(served + "/", Authorization=f"Bearer {TOKEN}")
    assert status == 200 and "capitals" in body
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_a_browser_signs_in_on_the_form(page: Any, served: str) -> None:
    response = page.goto(served + "/runs/nightly/new")
    assert response.status == 401
    page.fill("input[name=token]", "wrong")
    page.click("button[type=submit]")
    assert page.locator("input[name=token]").is_visible()  # still the sign-in page
    assert "not one of the server's tokens" in page.locator("section.message").inner_text()
    page.fill("input[name=token]", TOKEN)
    page.click("button[type=submit]")
    assert page.url == served + "/runs/nightly/new"
    assert page.locator("[data-stat=pass-rate]").inner_text() == "91.7%"


def test_signing_in_gives_an_http_only_cookie(page: Any, served: str) -> None:
    _signed_in(page, served + "/")
    assert page.url == served + "/"
    cookies = {c["name"]: c for c in page.context.cookies()}
    for name in (COOKIE, PRE_SESSION_COOKIE):
        assert cookies[name]["httpOnly"] and cookies[name]["sameSite"] == "Strict"
        assert TOKEN not in cookies[name]["value"]
    # the cookie, not the token, opens the next page
    assert page.goto(served + "/runs/base").status == 200


def test_signing_out_ends_the_session(page: Any, served: str) -> None:
    _signed_in(page, served + "/runs/base")
    with page.expect_navigation() as navigation:
        page.click("form.signout button")
    assert navigation.value.status == 401 and page.url == served + "/"
    assert COOKIE not in {c["name"] for c in page.context.cookies()}
    assert page.goto(served + "/runs/base").status == 401


def test_the_runs_list_shows_every_run_and_sorts(page: Any, served: str) -> None:
    _signed_in(page, served + "/")
    rows = page.locator("#runs tbody tr")

    def order() -> list[str | None]:
        return [rows.nth(i).get_attribute("data-run") for i in range(rows.count())]

    assert order() == ["qa", "nightly/new", "base"]  # newest first
    new = page.locator("#runs tr[data-run='nightly/new']")
    cells = new.locator("td").all_inner_texts()
    assert cells[2:7] == ["12", "91.7%", "0.0%", "$0.0000", "gate failed"]
    assert "model=m2" in cells[7]
    page.locator("#runs thead th", has_text="pass rate").click()
    assert order() == ["qa", "base", "nightly/new"]  # 50 %, 66.7 %, 91.7 %
    page.locator("#runs thead th", has_text="name").click()
    assert order()[2] == "qa"  # both "capitals" before "qa"
    screenshot(page, "served-runs")


def test_the_run_page_filters_on_the_server(page: Any, served: str) -> None:
    _signed_in(page, served + "/runs/nightly/new")
    rows = page.locator("#case-table tbody tr")
    assert rows.count() == 1 and rows.first.locator(".sid").inner_text() == "t0/p1/echo:b"
    assert "found 0 of 1" in rows.first.inner_text()  # the failing score's reason
    with page.expect_navigation():
        page.select_option("#filter-outcome", "all")
    assert "outcome=all" in page.url and rows.count() == 12
    with page.expect_navigation():
        page.select_option("#filter-check", "starts_with")
    assert rows.count() == 4
    assert page.locator("#matrix td.cell").count() == 4
    screenshot(page, "served-run")


def test_the_compare_page_lists_the_regression_first(page: Any, served: str) -> None:
    _signed_in(page, served + "/")
    page.select_option("select[name=run]", "nightly/new")
    page.select_option("select[name=base]", "base")
    with page.expect_navigation():
        page.click("form.compare-form button")
    first = page.locator("#change-table tbody tr").first
    assert first.get_attribute("data-kind") == "regressed"
    assert first.get_attribute("data-key") == "t0/p1/echo:b"
    assert "Lyon" in first.inner_text() and "Paris!" in first.inner_text()
    screenshot(page, "served-compare")


def test_served_outputs_are_escaped(page: Any, served: str) -> None:
    _signed_in(page, served + "/runs/nightly/new?outcome=all")
    assert page.evaluate("window.__xss") is None
    assert page.locator("script:not([type='application/json'])").count() == 1
    assert page.locator("#case-table img").count() == 0


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/runs/nightly/new?outcome=bogus", 400, "outcome must be one of"),
        ("/runs/nightly/new?check=nope", 400, "check: this run has no check named"),
        ("/runs/nope", 404, "No run with the id"),
        ("/runs/../qa", 404, "No run with the id"),
        ("/compare?base=base", 400, "base and run"),
        ("/elsewhere", 404, "No page at"),
    ],
)
def test_bad_requests_name_the_parameter(served: str, path: str, status: int, says: str) -> None:
    code, _, body = _get(served + path, Authorization=f"Bearer {TOKEN}")
    assert code == status and says in body


def test_without_auth_a_long_run_page_is_cut_at_max_cases(page: Any, known_runs: KnownRuns) -> None:
    # in process, auth off, viewer_max_cases 2: the page says how many it left out
    source = ResultsDirectory(known_runs.root)
    viewer = ViewerServer(lambda _who: source, max_cases=2)
    port = viewer.serve("127.0.0.1", 0)
    try:
        assert page.goto(f"http://127.0.0.1:{port}/runs/base?outcome=all").status == 200
        assert page.locator("#case-table tbody tr").count() == 2
        assert "Showing the first 2 of 12" in page.locator("p.note").inner_text()
    finally:
        viewer.close()


def test_with_tls_settings_the_viewer_speaks_https_and_asks_for_client_certificates(
    known_runs: KnownRuns, pki: dict[str, Any]
) -> None:
    # the gRPC server's certificate and client CA serve the viewer too; cookies are Secure
    settings = Settings(
        viewer_port=0,
        viewer_results_dir=str(known_runs.root),
        tls_cert=str(pki["srv_cert_path"]),
        tls_key=str(pki["srv_key_path"]),
        tls_client_ca=str(pki["ca_path"]),
    )
    viewer = start_viewer(settings, {hashlib.sha256(TOKEN.encode()).hexdigest(): "alice"})
    assert viewer is not None and viewer.port
    try:
        trusted = ssl.create_default_context(cadata=pki["ca"].decode())
        anonymous = http.client.HTTPSConnection("localhost", viewer.port, context=trusted)
        with pytest.raises((ssl.SSLError, ConnectionError)):  # no client certificate
            anonymous.request("GET", "/")
            anonymous.getresponse()
        anonymous.close()
        trusted.load_cert_chain(pki["cli_cert_path"], pki["cli_key_path"])
        conn = http.client.HTTPSConnection("localhost", viewer.port, context=trusted)
        conn.request("GET", "/runs/base")
        form = conn.getresponse()
        pre = form.getheader("Set-Cookie") or ""
        assert form.status == 401 and pre.startswith(PRE_SESSION_COOKIE) and "Secure" in pre
        fields = {
            "token": TOKEN,
            "next": "/runs/base",
            "csrf": hidden(form.read().decode(), "/login"),
        }
        headers = {"Content-Type": FORM, "Cookie": pre.split(";")[0]}
        headers["Origin"] = f"https://localhost:{viewer.port}"
        conn.request("POST", "/login", urlencode(fields), headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 303 and response.getheader("Location") == "/runs/base"
        cookie = response.getheader("Set-Cookie") or ""
        assert "HttpOnly" in cookie and "Secure" in cookie and "SameSite=Strict" in cookie
        conn.request("GET", "/runs/base", headers={"Cookie": cookie.split(";")[0]})
        page = conn.getresponse()
        assert page.status == 200 and "66.7%" in page.read().decode()
        conn.close()
    finally:
        viewer.close()


def test_no_viewer_unless_its_port_is_set() -> None:
    # off by default
    assert Settings().viewer_port is None
    assert start_viewer(Settings(), {}) is None


def test_signing_in_returns_to_the_page_asked_for_with_its_query(page: Any, served: str) -> None:
    assert page.goto(served + "/compare?base=base&run=nightly/new").status == 401
    page.fill("input[name=token]", TOKEN)
    with page.expect_navigation():
        page.click("form.login button[type=submit]")
    assert page.url == served + "/compare?base=base&run=nightly%2Fnew"
    assert page.locator("#change-table tbody tr").first.get_attribute("data-kind") == "regressed"
