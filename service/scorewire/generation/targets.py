"""Where a suite's outputs come from: recorded with the samples, a prompt, or an HTTP app.

```yaml
target: recorded                          # the default: outputs come with the samples
target: {type: prompt, provider: "openai:gpt-4o-mini", template: "Answer: {{input}}"}
target:
  type: http
  url: http://127.0.0.1:8080/answer       # {{vars}} allowed
  method: POST                            # default POST (GET sends no body)
  headers: {Authorization: "Bearer {{metadata.token}}"}
  body: {question: "{{input}}"}           # a JSON value, or a string sent as text
  response_path: answer                   # where the output is in the JSON reply
  timeout_s: 30
```

The variables of a sample are its input's keys when the input is a mapping, plus
`input`, `expected`, `id` and `metadata` (see `sample_vars`). A `body` that is a
mapping or list is sent as JSON; a string exactly `{{name}}` keeps the variable's JSON
type. `response_path` is dotted keys and list indices (`choices.0.message.content`,
`data[0].text`); empty means the whole body (a JSON string's text, else the raw body).
A reply that is not 2xx, not JSON when a path is given, or lacks the path is a
generation error for that case: every check of it scores an error, never a pass.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.model import Output, Sample
from scorewire.generation import templates
from scorewire.generation.providers import ProviderError, ProviderRef, parse_provider

_PATH_PART = re.compile(r"[^.\[\]]+|\[\d+\]")
_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
_METHODS = ("GET", "POST", "PUT", "PATCH")


@dataclass(frozen=True, slots=True)
class RecordedTarget:
    """Outputs come with the samples (dataset rows with `output`)."""

    type: str = "recorded"


@dataclass(frozen=True, slots=True)
class PromptTarget:
    """Each sample's output is a provider's answer to `template` rendered with its vars."""

    provider: ProviderRef
    template: str
    type: str = "prompt"


@dataclass(frozen=True, slots=True)
class HttpTarget:
    """Each sample's output is an HTTP application's reply to a request built from it."""

    url: str
    method: str = "POST"
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    response_path: str = ""
    timeout_s: float = 30.0
    type: str = "http"


Target = RecordedTarget | PromptTarget | HttpTarget

_KEYS = {
    "recorded": frozenset({"type"}),
    "prompt": frozenset({"type", "provider", "template"}),
    "http": frozenset({"type", "url", "method", "headers", "body", "response_path", "timeout_s"}),
}


def parse_target(raw: object, path: str) -> Target:
    """A suite's `target:`; SpecError with every problem under `path`."""
    kind = raw.get("type") if isinstance(raw, Mapping) else raw
    if kind not in _KEYS:
        raise SpecError.at(
            path if not isinstance(raw, Mapping) else join_path(path, "type"),
            f"unknown target {kind!r} (supported: recorded, prompt, http)",
        )
    if not isinstance(raw, Mapping):
        if kind != "recorded":
            raise SpecError.at(path, f"a {kind} target is a mapping: {{type: {kind}, ...}}")
        return RecordedTarget()
    violations = [
        FieldViolation(
            join_path(path, str(k)), f"unknown key (allowed: {', '.join(sorted(_KEYS[kind]))})"
        )
        for k in raw
        if k not in _KEYS[kind]
    ]
    target: Target | None = None
    if kind == "recorded":
        target = RecordedTarget()
    elif kind == "prompt":
        target = _prompt_target(raw, path, violations)
    else:
        target = _http_target(raw, path, violations)
    if violations or target is None:
        raise SpecError(violations)
    return target


def _prompt_target(
    raw: Mapping[str, Any], path: str, violations: list[FieldViolation]
) -> PromptTarget | None:
    provider, template = raw.get("provider"), raw.get("template")
    ref = None
    if not isinstance(provider, str):
        violations.append(FieldViolation(join_path(path, "provider"), "needs `backend:model`"))
    else:
        try:
            ref = parse_provider(provider)
        except ValueError as err:
            violations.append(FieldViolation(join_path(path, "provider"), str(err)))
    if not isinstance(template, str) or not template.strip():
        violations.append(FieldViolation(join_path(path, "template"), "needs a prompt template"))
        return None
    return PromptTarget(ref, template) if ref is not None else None


def _http_target(
    raw: Mapping[str, Any], path: str, violations: list[FieldViolation]
) -> HttpTarget | None:
    before = len(violations)
    url = raw.get("url")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
        violations.append(
            FieldViolation(join_path(path, "url"), "needs an http:// or https:// URL")
        )
    method = raw.get("method", "POST")
    if not isinstance(method, str) or method.upper() not in _METHODS:
        violations.append(
            FieldViolation(join_path(path, "method"), f"must be one of {', '.join(_METHODS)}")
        )
        method = "POST"
    headers = raw.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        violations.append(FieldViolation(join_path(path, "headers"), "must map names to strings"))
        headers = {}
    response_path = raw.get("response_path", "")
    if not isinstance(response_path, str):
        violations.append(FieldViolation(join_path(path, "response_path"), "must be a string"))
        response_path = ""
    timeout = raw.get("timeout_s", 30.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        violations.append(FieldViolation(join_path(path, "timeout_s"), "must be seconds > 0"))
        timeout = 30.0
    if len(violations) > before:
        return None
    assert isinstance(url, str)
    return HttpTarget(
        url=url,
        method=method.upper(),
        headers=dict(headers),
        body=raw.get("body"),
        response_path=response_path.strip(),
        timeout_s=float(timeout),
    )


def target_variables(target: Target) -> list[str]:
    """Every variable a target's templates use."""
    if isinstance(target, PromptTarget):
        return templates.variables(target.template)
    if isinstance(target, HttpTarget):
        return [
            *templates.variables(target.url),
            *(n for v in target.headers.values() for n in templates.variables(v)),
            *templates.value_variables(target.body),
        ]
    return []


def sample_vars(sample: Sample) -> dict[str, Any]:
    """The template variables of a sample: its input's keys (for a mapping input), and
    `input`, `expected`, `id`, `metadata`."""
    values: dict[str, Any] = dict(sample.input) if isinstance(sample.input, Mapping) else {}
    values.update(
        input=sample.input, expected=sample.expected, id=sample.id, metadata=sample.metadata
    )
    return values


def response_value(body: Any, response_path: str) -> Any:
    """The value at `response_path` in a parsed JSON body; KeyError when absent."""
    current = body
    for part in _PATH_PART.findall(response_path):
        key: str | int = int(part[1:-1]) if part.startswith("[") else part
        if isinstance(current, list) and isinstance(key, str) and key.isdigit():
            key = int(key)
        in_list = isinstance(current, list) and isinstance(key, int) and key < len(current)
        in_map = isinstance(current, Mapping) and isinstance(key, str) and key in current
        if not (in_list or in_map):
            raise KeyError(response_path)
        current = current[key]
    return current


def _request(target: HttpTarget, values: Mapping[str, Any]) -> urllib.request.Request:
    url = templates.render(target.url, values)
    headers = {k: templates.render(v, values) for k, v in target.headers.items()}
    data: bytes | None = None
    if target.method != "GET" and target.body is not None:
        if isinstance(target.body, str):
            data = templates.render(target.body, values).encode("utf-8")
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        else:
            rendered = templates.render_value(target.body, values)
            data = json.dumps(rendered, ensure_ascii=False).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
    return urllib.request.Request(url, data=data, headers=headers, method=target.method)


def _fetch(request: urllib.request.Request, timeout_s: float) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as resp:
            return int(resp.status), resp.read(_MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as err:
        return int(err.code), b""
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise ProviderError(
            f"the http target could not be reached ({type(reason).__name__})"
        ) from None


def output_from_body(raw: bytes, response_path: str) -> Output:
    """The output in a 2xx reply body; ProviderError when it is not where it should be."""
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        if response_path:
            raise ProviderError("the http target's reply is not JSON") from None
        return Output(text=text)
    if not response_path:
        return Output(text=body) if isinstance(body, str) else Output(text=text, value=body)
    try:
        value = response_value(body, response_path)
    except KeyError:
        raise ProviderError(f"the http target's reply has no {response_path!r}") from None
    if isinstance(value, str):
        return Output(text=value)
    return Output(text=json.dumps(value, ensure_ascii=False), value=value)


async def call_http(target: HttpTarget, values: Mapping[str, Any]) -> Output:
    """Send the request for one sample and read the output from the reply.

    The blocking call runs in a thread (the standard library's client, so no HTTP
    dependency is added); a cancelled caller stops waiting at once, and the thread
    ends by the target's timeout.
    """
    request = _request(target, values)
    status, raw = await asyncio.to_thread(_fetch, request, target.timeout_s)
    if not 200 <= status < 300:
        raise ProviderError(f"the http target answered HTTP {status}")
    if len(raw) > _MAX_RESPONSE_BYTES:
        raise ProviderError("the http target's reply is larger than 16 MiB")
    return output_from_body(raw, target.response_path)
