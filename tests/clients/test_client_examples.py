"""Every client's first example, as its README shows it, and the Python one run for real.

Each client has one first program (`clients/<lang>/examples/...`) and the output it
prints (`hello.expected.txt` beside it). Its README opens with the program verbatim and
shows that output in its first `text` code block, so the README cannot drift from the
files that the client's own tests run against a real server (the Go, TypeScript and Java
programs are run by their tests in `make test-clients`; the Python one here).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"

# The README of each client, its first program, and the file of that program's output.
EXAMPLES = {
    "python": ("examples/hello.py", "examples/hello.expected.txt"),
    "go": ("examples/hello/main.go", "examples/hello/hello.expected.txt"),
    "typescript": ("examples/hello.ts", "examples/hello.expected.txt"),
    "java": ("examples/Hello.java", "examples/hello.expected.txt"),
}


def code_blocks(markdown: str) -> list[tuple[str, str]]:
    """Each fenced code block (``` at the start of a line): its info string and text."""
    blocks: list[tuple[str, str]] = []
    info: str | None = None
    lines: list[str] = []
    for line in markdown.splitlines(keepends=True):
        if not line.startswith("```"):
            lines.append(line)
        elif info is None:
            info, lines = line[3:].strip(), []
        else:
            blocks.append((info, "".join(lines)))
            info = None
    return blocks


def test_code_blocks_reads_fences_in_order() -> None:
    # The parser itself: text outside fences is skipped, lines inside are kept whole.
    text = "intro\n```go\na\n\tb\n```\nmiddle\n```text\nc\n```\n"
    assert code_blocks(text) == [("go", "a\n\tb\n"), ("text", "c\n")]


@pytest.mark.parametrize("lang", sorted(EXAMPLES))
def test_readme_opens_with_the_example_and_its_output(lang: str) -> None:
    # The first code block is the program; the first `text` block, its output.
    program, expected = (CLIENTS / lang / name for name in EXAMPLES[lang])
    blocks = code_blocks((CLIENTS / lang / "README.md").read_text(encoding="utf-8"))
    assert blocks, f"clients/{lang}/README.md has no code block"
    assert blocks[0][1] == program.read_text(encoding="utf-8"), (
        f"the first code block of clients/{lang}/README.md is not {program.relative_to(ROOT)}"
    )
    outputs = [text for info, text in blocks if info == "text"]
    assert outputs, f"clients/{lang}/README.md shows no output (a ```text block)"
    assert outputs[0] == expected.read_text(encoding="utf-8"), (
        f"the first text block of clients/{lang}/README.md is not {expected.relative_to(ROOT)}"
    )


def test_every_client_prints_the_same_output() -> None:
    # One program in four languages: the docs can show one output for all of them.
    outputs = {lang: (CLIENTS / lang / files[1]).read_text() for lang, files in EXAMPLES.items()}
    assert len(set(outputs.values())) == 1, outputs


def test_python_example_prints_the_expected_output(scorewire_addr: str) -> None:
    program, expected = (CLIENTS / "python" / name for name in EXAMPLES["python"])
    done = subprocess.run(
        [sys.executable, str(program)],
        env=dict(os.environ, SCOREWIRE_ADDRESS=scorewire_addr),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected.read_text(encoding="utf-8")


# Each client's "Observe production traffic" program and its output.
OBSERVE_EXAMPLES = {
    "python": ("examples/observe.py", "examples/observe.expected.txt"),
    "go": ("examples/observe/main.go", "examples/observe/observe.expected.txt"),
    "typescript": ("examples/observe.ts", "examples/observe.expected.txt"),
    "java": ("examples/Observe.java", "examples/observe.expected.txt"),
}


@pytest.mark.parametrize("lang", sorted(OBSERVE_EXAMPLES))
def test_readme_shows_the_observe_example_and_its_output(lang: str) -> None:
    # The section's code block is the program its client's tests run; the next text block
    # is its output.
    program, expected = (CLIENTS / lang / name for name in OBSERVE_EXAMPLES[lang])
    readme = (CLIENTS / lang / "README.md").read_text(encoding="utf-8")
    assert "## Observe production traffic" in readme
    blocks = code_blocks(readme.split("## Observe production traffic", 1)[1])
    assert blocks and blocks[0][1] == program.read_text(encoding="utf-8"), (
        f"clients/{lang}/README.md's observe section does not show {program.relative_to(ROOT)}"
    )
    assert blocks[1] == ("text", expected.read_text(encoding="utf-8"))


def test_python_observe_example_prints_the_expected_output(scorewire_addr: str) -> None:
    program, expected = (CLIENTS / "python" / name for name in OBSERVE_EXAMPLES["python"])
    done = subprocess.run(
        [sys.executable, str(program)],
        env=dict(os.environ, SCOREWIRE_ADDRESS=scorewire_addr),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected.read_text(encoding="utf-8")
