#!/usr/bin/env python3
"""Generate the JSON Schemas of both suite formats from the check registry.

    .venv/bin/python scripts/gen_schemas.py          # write schemas/*.schema.json
    .venv/bin/python scripts/gen_schemas.py --check  # exit 1 when the committed ones are stale

The schemas are for editors (completion, hover text, validation as you type); the
loaders stay the authority. Every built-in check type contributes its parameters
(from its pydantic model), so a new check or parameter shows up after a regeneration;
`tests/cli/test_schemas.py` fails while the committed files are stale.
Only built-in checks (`scorewire.checks.*`) are included: custom checks differ per
deployment.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "service"), str(ROOT / "clients" / "python" / "src")]

import scorewire.checks  # noqa: E402,F401 - registers the built-in check types
from scorewire.core.registry import REGISTRY, CheckType  # noqa: E402
from scorewire.suites.checkllm_assertions import RENAMES  # noqa: E402

SCHEMA_DIR = ROOT / "schemas"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
MODIFIERS = ("type", "name", "when", "examples", "extractor")


def builtin_types() -> list[CheckType]:
    """The registry's built-in types, by name."""
    canonical = [t for t in REGISTRY.types() if t.build.__module__.startswith("scorewire.checks.")]
    names = {t.name for t in canonical}
    # Other spellings of built-in types (the compact `contains_text`, checkllm's `is_json`)
    # are valid in suites too, each with its own parameters.
    aliases = [t for t in REGISTRY.alias_types() if t.alias_of in names]
    return sorted([*canonical, *aliases], key=lambda t: t.name)


def _rewrite_refs(node: Any, prefix: str) -> Any:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/"):
                out[k] = f"#/$defs/{prefix}{v.removeprefix('#/$defs/')}"
            else:
                out[k] = _rewrite_refs(v, prefix)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, prefix) for v in node]
    return node


def params_properties(t: CheckType, defs: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A type's parameter properties and required names; nested $defs hoisted into `defs`."""
    schema = copy.deepcopy(t.params_schema())
    prefix = f"{t.name}."
    for name, sub in schema.pop("$defs", {}).items():
        defs[prefix + name] = _rewrite_refs(sub, prefix)
    props = _rewrite_refs(schema.get("properties", {}), prefix)
    return props, list(schema.get("required", []))


def type_choices(entries: list[tuple[str, str]]) -> dict[str, Any]:
    """`type:` as constants with descriptions, so editors show them on completion."""
    return {
        "description": "The check type (`scorewire checks` lists them).",
        "anyOf": [{"const": name, "description": desc} for name, desc in entries],
    }


def _case(name: str, then: dict[str, Any]) -> dict[str, Any]:
    return {
        "if": {"properties": {"type": {"const": name}}, "required": ["type"]},
        "then": then,
    }


# ---- evalstone ------------------------------------------------------------------------------


def evalstone_schema() -> dict[str, Any]:
    """The schema of an evalstone-style suite."""
    defs: dict[str, Any] = {}
    cases = []
    types = builtin_types()
    for t in types:
        props, required = params_properties(t, defs)
        for m in MODIFIERS:
            props[m] = True
        then: dict[str, Any] = {"properties": props, "additionalProperties": False}
        if required:
            then["required"] = required
        cases.append(_case(t.name, then))
    defs["check"] = {
        "type": "object",
        "description": "A check: `type:` and its parameters side by side, plus modifiers.",
        "required": ["type"],
        "properties": {
            "type": type_choices([(t.name, t.description) for t in types]),
            "name": {"type": "string", "description": "The check's name in results."},
            "when": {
                "$ref": "#/$defs/check",
                "description": "Apply only when this check passes.",
            },
            "examples": {
                "type": "array",
                "description": "Outputs that should pass (positive) or fail (negative).",
                "items": {
                    "type": "object",
                    "required": ["text"],
                    "additionalProperties": False,
                    "properties": {
                        "text": {"type": "string"},
                        "kind": {"enum": ["positive", "negative"], "default": "positive"},
                    },
                },
            },
            "extractor": {
                "type": "string",
                "description": "What a judge extracts from the output before the check runs.",
            },
        },
        "allOf": cases,
    }
    defs["gate"] = gate_schema()
    defs["target"] = target_schema()
    defs["row"] = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "id": {"type": ["string", "integer"]},
            "input": True,
            "expected": True,
            "output": {
                "anyOf": [
                    {"type": "string"},
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "text": {"type": "string"},
                            "value": True,
                            "metadata": {"type": "object"},
                        },
                    },
                ]
            },
            "metadata": {"type": "object"},
        },
    }
    return {
        "$schema": DRAFT,
        "title": "scorewire suite (evalstone style)",
        "description": "Checks, datasets and suites with gates; see scorewire.suites.evalstone.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "description": {"type": "string"},
            "imports": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Modules of custom checks (in process only; refused by a server).",
            },
            "checks": {
                "type": "object",
                "description": "Checks by key.",
                "additionalProperties": {"$ref": "#/$defs/check"},
            },
            "datasets": {
                "type": "object",
                "description": "Datasets by name: a JSONL path, {path}, or {cases: [...]}.",
                "additionalProperties": {
                    "anyOf": [
                        {"type": "string"},
                        {
                            "type": "object",
                            "required": ["path"],
                            "additionalProperties": False,
                            "properties": {"path": {"type": "string"}},
                        },
                        {
                            "type": "object",
                            "required": ["cases"],
                            "additionalProperties": False,
                            "properties": {
                                "cases": {"type": "array", "items": {"$ref": "#/$defs/row"}}
                            },
                        },
                    ]
                },
            },
            "suites": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "description": {"type": "string"},
                        "dataset": {"type": "string"},
                        "target": {"$ref": "#/$defs/target"},
                        "checks": {"type": "array", "items": {"type": "string"}},
                        "compact": {
                            "anyOf": [
                                {"type": "string"},
                                {"type": "array", "items": {"type": ["string", "object"]}},
                            ],
                            "description": "One-line checks (`contains:Northstar`).",
                        },
                        "gate": {"$ref": "#/$defs/gate"},
                    },
                },
            },
            "settings": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "budget": {"type": "number", "minimum": 0, "description": "USD limit."},
                    "concurrency": {"type": "integer", "minimum": 1, "maximum": 1024},
                    "check_timeout_s": {"type": "number", "exclusiveMinimum": 0},
                    "fresh_judges": {
                        "type": "boolean",
                        "default": False,
                        "description": "Ask the judges again on every run: read no verdict "
                        "cached before the run began.",
                    },
                },
            },
        },
        "$defs": defs,
    }


def gate_schema() -> dict[str, Any]:
    """The gate (from the engine's model)."""
    from scorewire.engine.summary import Gate

    schema = Gate.model_json_schema()
    schema.pop("title", None)
    return schema


def target_schema() -> dict[str, Any]:
    """`target:` of an evalstone suite."""
    provider = {
        "type": "string",
        "description": "backend:model (openai, anthropic, gemini) or echo",
    }
    return {
        "description": "Where outputs come from (scorewire.generation.targets).",
        "anyOf": [
            {"const": "recorded"},
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["type"],
                "properties": {"type": {"const": "recorded"}},
            },
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "provider", "template"],
                "properties": {
                    "type": {"const": "prompt"},
                    "provider": provider,
                    "template": {"type": "string", "description": "Prompt with {{vars}}."},
                },
            },
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "url"],
                "properties": {
                    "type": {"const": "http"},
                    "url": {"type": "string"},
                    "method": {"enum": ["GET", "POST", "PUT", "PATCH"], "default": "POST"},
                    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                    "body": {"description": "JSON template (strings rendered) or a text body."},
                    "response_path": {"type": "string", "description": "e.g. choices.0.text"},
                    "timeout_s": {"type": "number", "exclusiveMinimum": 0},
                },
            },
        ],
    }


# ---- checkllm -------------------------------------------------------------------------------


def checkllm_schema() -> dict[str, Any]:
    """The schema of a checkllm file."""
    defs: dict[str, Any] = {}
    types = {t.name: t for t in builtin_types()}
    cases = []
    entries: list[tuple[str, str]] = []
    for name, t in types.items():
        if name in RENAMES:
            continue
        props, required = params_properties(t, defs)
        props["type"] = True
        then: dict[str, Any] = {"properties": props, "additionalProperties": False}
        if required:
            then["required"] = required
        cases.append(_case(name, then))
        entries.append((name, t.description))
    # checkllm assertion types that are catalog checks with `value` under another key
    for name, rename in RENAMES.items():
        t = types[rename.type]
        props, _required = params_properties(t, defs)
        props["type"] = True
        for key, default in rename.defaults:
            props[key] = {**props[key], "default": default}
        if rename.key is not None:
            props["value"] = {
                "type": "string",
                "description": f"The {rename.key} (format's `value`).",
            }
        cases.append(_case(name, {"properties": props, "additionalProperties": False}))
        entries.append((name, t.description))
    entries.sort()
    defs["assertion"] = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": type_choices(entries)},
        "allOf": cases,
    }
    defs["gate"] = gate_schema()
    return {
        "$schema": DRAFT,
        "title": "checkllm evaluation suite (scorewire)",
        "description": "prompts × providers × tests; see scorewire.suites.checkllm.",
        "type": "object",
        "additionalProperties": False,
        "required": ["tests"],
        "properties": {
            "description": {"type": "string"},
            "judge": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "backend": {
                        "enum": ["openai", "anthropic", "gemini", "auto"],
                        "default": "auto",
                    },
                    "model": {"type": "string", "default": ""},
                },
            },
            "prompts": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "string", "description": "A template with {{variables}}."},
            },
            "providers": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "string",
                    "pattern": "^((openai|anthropic|gemini):.+|echo(:.*)?)$",
                    "description": "backend:model — openai, anthropic, gemini — or echo.",
                },
            },
            "tests": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "description": {"type": "string"},
                        "vars": {"type": "object"},
                        "assert": {"type": "array", "items": {"$ref": "#/$defs/assertion"}},
                        "output": {
                            "type": "string",
                            "description": "A recorded output for every prompt × provider.",
                        },
                        "outputs": {
                            "type": "object",
                            "description": "Recorded outputs by provider: one, or one per prompt.",
                            "additionalProperties": {
                                "anyOf": [
                                    {"type": "string"},
                                    {"type": "array", "items": {"type": "string"}},
                                ]
                            },
                        },
                    },
                },
            },
            "settings": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "budget": {"type": "number", "minimum": 0, "default": 10.0},
                    "threshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.8},
                    "parallel": {"type": "boolean", "default": True},
                    "cache": {"type": "boolean", "default": True},
                    "fresh_judges": {
                        "type": "boolean",
                        "default": False,
                        "description": "Ask the judges again on every run: read no verdict "
                        "cached before the run began.",
                    },
                    "concurrency": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 1024,
                        "default": 16,
                    },
                },
            },
            "gate": {"$ref": "#/$defs/gate"},
        },
        "$defs": defs,
    }


def rendered() -> dict[str, str]:
    """File name -> text of every generated schema."""
    return {
        name: json.dumps(schema, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
        for name, schema in (
            ("evalstone-suite.schema.json", evalstone_schema()),
            ("checkllm-suite.schema.json", checkllm_schema()),
        )
    }


def main(argv: list[str] | None = None) -> int:
    """Write the schemas, or with --check compare them with the committed files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the files are stale")
    args = parser.parse_args(argv)
    stale = []
    for name, text in rendered().items():
        path = SCHEMA_DIR / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(name)
        else:
            SCHEMA_DIR.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"stale: {', '.join(stale)}: run scripts/gen_schemas.py and commit", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
