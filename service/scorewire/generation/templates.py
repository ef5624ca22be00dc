"""`{{variable}}` templates: prompts of checkllm files, `prompt` and `http` targets.

`{{ name }}` is replaced by the variable's value; spaces inside the braces are
optional; `{{ a.b }}` reads key `b` of the mapping `a` (and `{{ a.0 }}` item 0 of a
list). Strings are inserted as they are, other values as compact JSON. Nothing else
is syntax: there are no filters, loops or escapes, and text that is not a
`{{name}}` (a lone `{`, `{{ 1 + 2 }}`) is left as written.

A variable that is not defined is a load error where the template is loaded (see
`missing_vars`), never an empty string sent to a model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from scorewire.core.values import json_length

_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*)\s*\}\}")

_MISSING = object()


def variables(template: str) -> list[str]:
    """The variable names a template uses, in order of first use (dotted paths whole)."""
    seen: dict[str, None] = {}
    for m in _VAR.finditer(template):
        seen.setdefault(m.group(1), None)
    return list(seen)


def lookup(values: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted `path`, or `MISSING` (compare with `is_missing`)."""
    current: Any = values
    for part in path.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def is_missing(value: Any) -> bool:
    """Whether `lookup` found nothing."""
    return value is _MISSING


def missing_vars(template: str, values: Mapping[str, Any]) -> list[str]:
    """The variables of `template` that `values` does not define."""
    return [name for name in variables(template) if is_missing(lookup(values, name))]


def as_text(value: Any) -> str:
    """How a value is inserted: a string as is, null as empty, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def rendered_length(template: str, values: Mapping[str, Any], limit: int | None = None) -> int:
    """Characters `render(template, values)` makes, counted without rendering: a template
    using one big variable many times is measured in microseconds, not written out. Past
    `limit` it stops and returns the count so far (more than `limit`)."""
    # The text around the variables first, so the count only grows.
    total = len(template) - sum(m.end() - m.start() for m in _VAR.finditer(template))
    for m in _VAR.finditer(template):
        value = lookup(values, m.group(1))
        if is_missing(value):
            total += m.end() - m.start()  # left as written
        else:
            total += _text_length(value, None if limit is None else max(0, limit - total))
        if limit is not None and total > limit:
            break
    return total


def _text_length(value: Any, limit: int | None) -> int:
    """`len(as_text(value))`, counted up to just past `limit`."""
    if isinstance(value, str):
        return len(value)
    if value is None:
        return 0
    return json_length(value, limit, separators=(", ", ": "))


def render(template: str, values: Mapping[str, Any]) -> str:
    """Replace every `{{name}}` by its value; an undefined one is left as written."""

    def replace(m: re.Match[str]) -> str:
        value = lookup(values, m.group(1))
        return m.group(0) if is_missing(value) else as_text(value)

    return _VAR.sub(replace, template)


def render_value(template: Any, values: Mapping[str, Any]) -> Any:
    """Render every string inside a JSON value (an HTTP body).

    A string that is exactly one `{{name}}` becomes the variable's value with its JSON
    type kept (a number stays a number, a mapping a mapping); other strings are
    rendered as text. Keys are not rendered.
    """
    if isinstance(template, str):
        whole = _VAR.fullmatch(template.strip())
        if whole is not None:
            value = lookup(values, whole.group(1))
            return template if is_missing(value) else value
        return render(template, values)
    if isinstance(template, Mapping):
        return {k: render_value(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [render_value(v, values) for v in template]
    return template


def value_variables(template: Any) -> list[str]:
    """The variables used anywhere inside a JSON value template."""
    if isinstance(template, str):
        return variables(template)
    if isinstance(template, Mapping):
        return [name for v in template.values() for name in value_variables(v)]
    if isinstance(template, list):
        return [name for v in template for name in value_variables(v)]
    return []
