"""The real grpcurl against the real server: `list`, `describe` with comments, and every
grpcurl example of the README's tour and of the docs pages that show grpcurl calls, run
as written (only the address changes).

An example followed by a ```json block must print that JSON (latencies aside); one followed
by a ```text block must print that text; one shown with a `$ ` prompt prints an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.components import require_component
from tests.support.pki import make_pki
from tests.support.servers import ROOT, serve_process, stop_process

PAGES = (
    ROOT / "README.md",
    ROOT / "docs" / "grpcurl.md",
    ROOT / "docs" / "runs.md",
)
TOKEN = "grpcurl-example-token"


@dataclass(frozen=True)
class Example:
    """A grpcurl shell block of a page and the output shown after it."""

    page: str
    script: str
    expected_kind: str  # "json", "text", "error" or ""
    expected: str

    @property
    def name(self) -> str:
        methods = re.findall(r"(\w+/\w+)(?:\s|$)", self.script)
        words = re.findall(r"\b(list|describe)\b", self.script)
        return f"{self.page}:" + ("+".join(methods or words) or "example")


def _examples() -> list[Example]:
    return [e for page in PAGES for e in _page_examples(page)]


def _page_examples(page: Path) -> list[Example]:
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w*)[^\n]*\n(.*?)^```$", text, flags=re.S | re.M)
    out = []
    for i, (lang, body) in enumerate(blocks):
        if lang != "sh" or "grpcurl" not in body:
            continue
        if body.startswith("$ "):  # a command and the error it prints
            lines = body.splitlines()
            n = 1
            while lines[n - 1].endswith("\\"):
                n += 1
            command = "\n".join(lines[:n]).removeprefix("$ ")
            out.append(Example(page.name, command, "error", "\n".join(lines[n:])))
            continue
        following = blocks[i + 1] if i + 1 < len(blocks) else ("", "")
        kind = following[0] if following[0] in ("json", "text") else ""
        out.append(Example(page.name, body, kind, following[1] if kind else ""))
    return out


EXAMPLES = _examples()


def _grpcurl() -> str:
    local = ROOT / ".tools" / "bin" / "grpcurl"
    found = str(local) if local.exists() else shutil.which("grpcurl")
    if found is None:
        require_component("grpcurl", "not in .tools/bin or on PATH (scripts/install_test_deps.sh)")
    return found


@dataclass
class Servers:
    plaintext: str
    tls_port: str
    workdir: Path
    grpcurl: str


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """A plaintext server and a TLS server with a bearer token, both real processes."""
    grpcurl = _grpcurl()
    work = tmp_path_factory.mktemp("grpcurl")
    pki = make_pki(work)  # writes ca.pem, which the TLS example names
    plain, address = serve_process({"SCOREWIRE_LABELS_PATH": str(work / "plain.db")})
    try:
        tls, tls_address = serve_process(
            {
                "SCOREWIRE_LABELS_PATH": str(work / "tls.db"),
                "SCOREWIRE_TLS_CERT": str(pki["srv_cert_path"]),
                "SCOREWIRE_TLS_KEY": str(pki["srv_key_path"]),
                "SCOREWIRE_AUTH_TOKEN_SHA256": hashlib.sha256(TOKEN.encode()).hexdigest(),
            }
        )
        try:
            yield Servers(address, tls_address.rsplit(":", 1)[1], work, grpcurl)
        finally:
            stop_process(tls)
    finally:
        stop_process(plain)


def _run(servers: Servers, script: str, token: str = TOKEN) -> subprocess.CompletedProcess[str]:
    script = script.replace("127.0.0.1:50051", servers.plaintext)
    script = script.replace("localhost:50051", f"localhost:{servers.tls_port}")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(servers.grpcurl).parent), env.get("PATH", "")])
    env["SCOREWIRE_TOKEN"] = token
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=servers.workdir,
        timeout=60,
    )


def _without_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_latency(v) for k, v in value.items() if k != "latencyMs"}
    if isinstance(value, list):
        return [_without_latency(v) for v in value]
    return value


def test_the_docs_have_an_example_of_every_rpc_asked_for() -> None:
    # RunSuite, ScoreStream with -d @, ValidateSuite, LabelService, health, TLS + token.
    scripts = "\n".join(e.script for e in EXAMPLES if e.page == "grpcurl.md")
    for needle in (
        "ScoringService/Score\n",
        "ScoringService/RunSuite",
        "-d @ ",
        "ScoringService/ValidateSuite",
        "LabelService/PutLabels",
        "LabelService/ListLabels",
        "grpc.health.v1.Health/Check",
        '-cacert ca.pem -H "authorization: Bearer',
    ):
        assert needle in scripts, needle


def test_the_readme_tour_calls_score_and_shows_its_answer() -> None:
    tour = [e for e in EXAMPLES if e.page == "README.md"]
    assert [(e.name, e.expected_kind) for e in tour] == [("README.md:ScoringService/Score", "json")]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_example_runs_as_shown(servers: Servers, example: Example) -> None:
    done = _run(servers, example.script)
    if example.expected_kind == "error":
        assert done.returncode != 0
        # every line: the code, the message and the decoded details (a status detail
        # whose type reflection does not serve prints as raw bytes instead)
        for line in example.expected.splitlines():
            assert line.strip() in done.stderr, done.stderr
        return
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    if example.expected_kind == "json":
        assert _without_latency(json.loads(done.stdout)) == _without_latency(
            json.loads(example.expected)
        )
    elif example.expected_kind == "text":
        assert example.expected.strip() in done.stdout


def test_list_names_both_reflection_versions_and_every_service(servers: Servers) -> None:
    # `grpcurl list` through reflection v1 (grpcurl asks v1 first, v1alpha as a fallback).
    done = _run(servers, "grpcurl -plaintext 127.0.0.1:50051 list")
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) >= {
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
        "scorewire.v1.LabelService",
        "scorewire.v1.ScoringService",
    }


def test_describe_shows_the_service_and_method_comments(servers: Servers) -> None:
    # Before: the descriptors came from _pb2 files without source info, so no comments.
    done = _run(servers, "grpcurl -plaintext 127.0.0.1:50051 describe scorewire.v1.ScoringService")
    assert done.returncode == 0, done.stderr
    assert "// ScoringService scores outputs against checks" in done.stdout
    assert "// ListChecks returns the catalog" in done.stdout


def test_describe_of_everything_succeeds(servers: Servers) -> None:
    # With no symbol grpcurl describes every listed service, the reflection ones included.
    done = _run(servers, "grpcurl -plaintext 127.0.0.1:50051 describe")
    assert done.returncode == 0, done.stderr
    assert "grpc.reflection.v1.ServerReflection is a service" in done.stdout


def test_the_tls_example_without_the_token_is_refused(servers: Servers) -> None:
    # The bearer token in the example is what lets the call through.
    tls = next(e for e in EXAMPLES if "-cacert" in e.script)
    done = _run(servers, tls.script, token="wrong-token")
    assert done.returncode != 0
    assert "Unauthenticated" in done.stderr
