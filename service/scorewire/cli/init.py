"""`scorewire init [PATH]`: write a runnable example suite to start from.

The example is a checkllm file that runs offline (the `echo` provider answers with the
rendered prompt, and one test carries a recorded output), so `scorewire validate` and
`scorewire run` accept it at once; comments show where real providers and judge
assertions go. An existing file is never overwritten.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from scorewire.cli.common import EXIT_PASSED, EXIT_USAGE
from scorewire.cli.run_output import stderr_console

EXAMPLE = """\
# A scorewire suite in the checkllm format: every test runs for every prompt and provider.
# Run it:       scorewire run {name}
# Check it:     scorewire validate {name}
description: "My first scorewire suite"

prompts:
  - "Answer the customer: {{{{query}}}}"
  - "Reply briefly to: {{{{query}}}}"

providers:
  # `echo` answers with the rendered prompt (offline, free). Real models:
  #   - openai:gpt-4o-mini          (SCOREWIRE_OPENAI_API_KEY or OPENAI_API_KEY)
  #   - anthropic:claude-haiku-4-5  (SCOREWIRE_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY)
  #   - gemini:gemini-2.5-flash     (SCOREWIRE_GEMINI_API_KEY or GEMINI_API_KEY)
  - echo

# An LLM judge grades the judge assertions (relevance, correctness, rubric, ...):
# judge: {{backend: openai, model: gpt-4o-mini}}

tests:
  - description: "return policy"
    vars:
      query: "How do I return an item?"
    assert:
      - {{type: contains, value: "return"}}
      - {{type: max_tokens, value: 200}}
      # - {{type: relevance, threshold: 0.8}}    # needs a judge (see `judge:` above)

  - description: "greeting, with a recorded output"
    vars:
      query: "Say hello as JSON"
    # A recorded output is scored as it is: no provider is called for this test.
    output: '{{"greeting": "hello"}}'
    assert:
      - {{type: is_json}}
      - {{type: contains, value: "hello"}}

settings:
  budget: 1.0        # most dollars the run may spend on providers and judges
  threshold: 0.8     # default threshold of the judge assertions
"""


def cmd_init(args: argparse.Namespace) -> int:
    """`scorewire init [PATH]`: write the example suite; exit 2 if PATH exists."""
    err = stderr_console()
    path = Path(args.path)
    if path.is_dir():
        path = path / "eval.yaml"
    text = EXAMPLE.format(name=path.name)
    try:
        # O_EXCL: an existing file (or one created meanwhile) is never overwritten.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        err.print(f"{path} already exists: not overwriting it", markup=False, highlight=False)
        return EXIT_USAGE
    except OSError as problem:
        err.print(f"cannot write {path}: {problem.strerror}", markup=False, highlight=False)
        return EXIT_USAGE
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}: run it with `scorewire run {path}`")
    return EXIT_PASSED


def add_parser(subparsers: Any) -> None:
    """Add `init` to the `scorewire` parser's subparsers."""
    init = subparsers.add_parser(
        "init",
        help="write an example suite to start from",
        description="Write a runnable example suite (checkllm format, offline). An existing "
        "file is never overwritten (exit 2).",
    )
    init.add_argument(
        "path",
        metavar="PATH",
        nargs="?",
        default="eval.yaml",
        help="the file to write, or a directory for its eval.yaml (default ./eval.yaml)",
    )
    init.set_defaults(func=cmd_init)
