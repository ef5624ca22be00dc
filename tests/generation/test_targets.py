"""Targets of evalstone-style suites (recorded, prompt, http) and `{{var}}` templates."""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from scorewire.core.context import CheckContext
from scorewire.core.errors import SpecError
from scorewire.generation import templates
from scorewire.generation.generator import Generator, Group, JobResult, run_groups
from scorewire.generation.providers import GENERATION_ERROR, EchoProvider
from scorewire.generation.targets import HttpTarget, PromptTarget, RecordedTarget, response_value
from scorewire.suites.evalstone import load_suite_file, load_suite_text, suite_jobs


def fields(doc: str) -> list[str]:
    with pytest.raises(SpecError) as err:
        load_suite_text(textwrap.dedent(doc))
    return [v.field for v in err.value.violations]


# ---- templates ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "values", "rendered"),
    [
        # spaces inside the braces are optional
        ("Hi {{name}} / {{ name }}", {"name": "Ada"}, "Hi Ada / Ada"),
        # dotted paths read mappings and list items
        ("{{a.b}} {{a.c.1}}", {"a": {"b": "x", "c": [1, 2]}}, "x 2"),
        # non-strings are inserted as JSON; null as nothing
        ("{{n}} {{l}} [{{z}}]", {"n": 3, "l": ["x"], "z": None}, '3 ["x"] []'),
        # what is not a variable stays as written
        ("{ {{ 1 + 2 }} {{missing}}", {}, "{ {{ 1 + 2 }} {{missing}}"),
        # non-ASCII passes through
        ("{{q}}", {"q": "東京"}, "東京"),
    ],
)
def test_render(template: str, values: dict[str, Any], rendered: str) -> None:
    assert templates.render(template, values) == rendered


RENDER_CASES = [
    ("Hi {{name}} / {{ name }}", {"name": "Ada"}),
    ("{{a.b}} {{a.c.1}}", {"a": {"b": "x", "c": [1, 2]}}),
    ("{{n}} {{l}} [{{z}}]", {"n": 3, "l": ["x", {"k": "é"}], "z": None}),
    ("{ {{ 1 + 2 }} {{missing}}", {}),
    ("{{e}}" * 50, {"e": ""}),  # shorter than what it replaces
]


@pytest.mark.parametrize(("template", "values"), RENDER_CASES)
def test_rendered_length_is_what_render_writes(template: str, values: dict[str, Any]) -> None:
    assert templates.rendered_length(template, values) == len(templates.render(template, values))


def test_rendered_length_stops_past_its_limit_without_rendering() -> None:
    # 2,000 uses of a value that is 40 MB as JSON: counted to just past the limit.
    big = [["x" * 4000] * 1000] * 10
    assert 1_000 < templates.rendered_length("{{big}} " * 2000, {"big": big}, 1_000) < 10_000
    # An empty value shrinks the text: the count never says "over" too early.
    assert templates.rendered_length("{{e}}" * 1000, {"e": ""}, 10) == 0


def test_missing_vars_names_the_first_segment_path() -> None:
    # a dotted path is missing when any part is
    assert templates.missing_vars("{{a.b}} {{c}} {{a.b}}", {"a": {}}) == ["a.b", "c"]


def test_render_value_keeps_json_types_of_whole_placeholders() -> None:
    # "{{n}}" alone becomes the number; embedded placeholders become text
    body = {"n": "{{n}}", "q": "Q: {{n}}", "list": ["{{obj}}"], "k": 1}
    got = templates.render_value(body, {"n": 2, "obj": {"a": 1}})
    assert got == {"n": 2, "q": "Q: 2", "list": [{"a": 1}], "k": 1}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        # dotted keys and list indices both ways
        ("choices.0.text", "a"),
        ("choices[0].text", "a"),
        ("meta", {"n": 1}),
    ],
)
def test_response_path(path: str, value: Any) -> None:
    assert response_value({"choices": [{"text": "a"}], "meta": {"n": 1}}, path) == value


# ---- parsing --------------------------------------------------------------------------------

BASE = "checks:\n  a: {type: length, max_chars: 300}\n"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        # a prompt target needs a provider and a template
        ("{type: prompt}", ["suites.s.target.provider", "suites.s.target.template"]),
        # the provider must be a known backend
        ("{type: prompt, provider: 'llama:x', template: t}", ["suites.s.target.provider"]),
        # http needs an http(s) URL; method and timeout are checked
        (
            "{type: http, url: 'ftp://x', method: DELETE, timeout_s: 0}",
            ["suites.s.target.url", "suites.s.target.method", "suites.s.target.timeout_s"],
        ),
        # unknown keys of a target
        ("{type: http, url: 'http://x', verb: GET}", ["suites.s.target.verb"]),
        # an unknown type
        ("{type: grpc}", ["suites.s.target.type"]),
        # a generating target is a mapping, not a bare word
        ("prompt", ["suites.s.target"]),
    ],
)
def test_target_errors_carry_paths(target: str, expected: list[str]) -> None:
    assert fields(BASE + f"suites:\n  s: {{target: {target}}}\n") == expected


def test_targets_parse() -> None:
    # recorded by default, prompt and http with their fields
    suite = load_suite_text(
        BASE
        + "suites:\n"
        + "  r: {}\n"
        + "  p: {target: {type: prompt, provider: 'openai:gpt-4o', template: 'Q {{input}}'}}\n"
        + "  h: {target: {type: http, url: 'http://127.0.0.1:1/a', body: {q: '{{input}}'}}}\n"
    )
    assert isinstance(suite.suites["r"].target, RecordedTarget)
    p = suite.suites["p"].target
    assert isinstance(p, PromptTarget) and p.provider.id == "openai:gpt-4o"
    h = suite.suites["h"].target
    assert isinstance(h, HttpTarget) and h.method == "POST" and h.timeout_s == 30.0


def test_rows_need_outputs_only_for_recorded_targets(tmp_path: Path) -> None:
    # a dataset used only by a prompt target may omit outputs; a recorded one may not
    (tmp_path / "d.jsonl").write_text('{"id": "a", "input": "x"}\n')
    suite = BASE + "datasets:\n  d: d.jsonl\nsuites:\n"
    gen = "  g: {dataset: d, target: {type: prompt, provider: echo, template: '{{input}}'}}\n"
    (tmp_path / "ok.yaml").write_text(suite + gen)
    assert load_suite_file(tmp_path / "ok.yaml").suites["g"].cases is not None
    (tmp_path / "bad.yaml").write_text(suite + gen + "  r: {dataset: d}\n")
    with pytest.raises(SpecError) as err:
        load_suite_file(tmp_path / "bad.yaml")
    assert [v.field for v in err.value.violations] == ["datasets.d[0].output"]


# ---- running --------------------------------------------------------------------------------


async def _run(groups: list[Group], gen: Generator) -> list[JobResult]:
    try:
        return [r async for r in run_groups(groups, gen, CheckContext())]
    finally:
        await gen.aclose()


async def test_prompt_target_renders_each_sample() -> None:
    # the template sees the input's keys, `input`, `expected` and `id`
    doc = BASE + textwrap.dedent(
        """
        datasets:
          d:
            cases:
              - {id: a, input: {q: "two plus two"}, expected: "4"}
              - {id: b, input: {q: "three"}, expected: "3"}
        suites:
          s:
            dataset: d
            target: {type: prompt, provider: echo, template: "[{{id}}] {{q}} = {{expected}}"}
            compact: ["contains:="]
        """
    )
    suite = load_suite_text(doc).select("s")
    results = await _run(
        [Group("s", suite.plan, suite_jobs(suite))], Generator({"echo": EchoProvider()})
    )
    texts = {r.job.sample.id: r.produced.output.text for r in results}
    assert texts == {"a": "[a] two plus two = 4", "b": "[b] three = 3"}
    assert all(r.result.passed for r in results)


def test_prompt_target_sample_missing_a_variable_is_a_load_error() -> None:
    # the sample is named, at the target's template
    doc = BASE + textwrap.dedent(
        """
        datasets: {d: {cases: [{id: a, input: {x: 1}}]}}
        suites:
          s: {dataset: d, target: {type: prompt, provider: echo, template: "{{q}}"}}
        """
    )
    with pytest.raises(SpecError) as err:
        suite_jobs(load_suite_text(doc).select("s"))
    (v,) = err.value.violations
    assert v.field == "suites.s.target.template" and "'a'" in v.description


class _App(BaseHTTPRequestHandler):
    """A loopback application: answers {"answer": ..., "echo": <request>}."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("q") == "boom":
            self.send_response(500)
            self.end_headers()
            return
        out = json.dumps(
            {"answer": f"A: {body['q']}", "echo": body, "auth": self.headers.get("X-Key")}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def app_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _App)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/answer"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("response_path", "q", "text", "error"),
    [
        # the output is read at the response path
        ("answer", "hello", "A: hello", None),
        # a path into the echoed request keeps JSON types (n stays a number)
        ("echo.n", "hello", "7", None),
        # headers are templated too
        ("auth", "hello", "key-a", None),
        # a 5xx is a generation error for that case
        ("answer", "boom", None, "HTTP 500"),
        # a missing path is a generation error
        ("nope", "hello", None, "has no 'nope'"),
    ],
)
async def test_http_target(
    app_url: str, response_path: str, q: str, text: str | None, error: str | None
) -> None:
    doc = BASE + textwrap.dedent(
        f"""
        datasets: {{d: {{cases: [{{id: a, input: {{q: "{q}", n: 7}}}}]}}}}
        suites:
          s:
            dataset: d
            target:
              type: http
              url: "{app_url}"
              headers: {{X-Key: "key-{{{{id}}}}"}}
              body: {{q: "{{{{q}}}}", n: "{{{{n}}}}"}}
              response_path: {response_path}
        """
    )
    suite = load_suite_text(doc).select("s")
    (r,) = await _run([Group("s", suite.plan, suite_jobs(suite))], Generator({}))
    if error is None:
        assert r.produced.output is not None and r.produced.output.text == text
        assert r.result.passed
    else:
        (score,) = r.result.scores
        assert score.error is not None and score.error.code == GENERATION_ERROR
        assert error in score.error.message and not score.passed
