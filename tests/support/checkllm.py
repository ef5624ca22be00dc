"""A checkllm suite (prompts × providers × tests) the tests run with recorded outputs."""

from __future__ import annotations

SUITE = """
description: capitals
prompts:
  - "Answer: {{query}}"
  - "Be brief. {{query}}"
providers: ["openai:gpt-4o-mini", "anthropic:claude-3-5-haiku"]
tests:
  - description: France
    vars: {query: "What is the capital of France?"}
    assert: [{type: contains, value: "Paris"}]
  - description: Italy
    vars: {query: "What is the capital of Italy?"}
    assert: [{type: contains, value: "Rome"}, {type: max_tokens, value: 50}]
"""

PROVIDERS = ("openai:gpt-4o-mini", "anthropic:claude-3-5-haiku")
"""SUITE's providers, in its order."""
