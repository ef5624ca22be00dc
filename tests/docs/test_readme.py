"""The README is the front door: short, and its hello programs are the real files.

The marker convention: an HTML comment right before a fence says which repository file
the block shows, verbatim (GitHub and MkDocs render nothing for the comment):

    <!-- file: clients/go/examples/hello/main.go -->
    ```go
    ...the whole file...
    ```

Each marked block must equal its file's content exactly. `make test` runs the programs
themselves, so the README shows programs that run. A file not on this branch yet skips
its case with the reason; once it exists the case runs. After changing a program,
`.venv/bin/python scripts/readme_examples.py` copies it into the README.
"""

from __future__ import annotations

import re

import pytest

from tests.docs.blocks import Block, blocks
from tests.support.servers import ROOT

README = ROOT / "README.md"
HELLO_PROGRAMS = {
    "clients/python/examples/hello.py": "python",
    "clients/go/examples/hello/main.go": "go",
    "clients/typescript/examples/hello.ts": "ts",
    "clients/java/examples/Hello.java": "java",
}


def _marked() -> dict[str, Block]:
    return {b.file: b for b in blocks(README) if b.file}


def test_the_readme_is_a_front_door_not_the_manual() -> None:
    # The manual lives in docs/; the README says what it is, the two commands, a tour.
    # At most 200 lines: the four complete hello programs are about 110 of them.
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_readme_shows_one_hello_program_per_language() -> None:
    assert {path: b.lang for path, b in _marked().items()} == HELLO_PROGRAMS


@pytest.mark.parametrize("path", sorted(HELLO_PROGRAMS))
def test_a_hello_program_in_the_readme_is_the_file_verbatim(path: str) -> None:
    program = ROOT / path
    if not program.is_file():
        pytest.skip(f"{path} is not on this branch yet: the README's block is checked once it is")
    assert _marked()[path].body == program.read_text(encoding="utf-8"), (
        f"README.md's block for {path} differs from the file: "
        "run .venv/bin/python scripts/readme_examples.py"
    )


def test_every_link_of_the_readme_to_a_file_finds_it() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text)
    assert targets, "the README links into the docs"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert missing == []


def test_the_tour_shows_what_the_hello_programs_print() -> None:
    # The four programs print the same; the text block after them is that output.
    found = blocks(README)
    last = max(i for i, b in enumerate(found) if b.file in HELLO_PROGRAMS)
    shown = next(b for b in found[last + 1 :] if b.lang == "text")
    expected = ROOT / "clients" / "python" / "examples" / "hello.expected.txt"
    assert shown.body == expected.read_text(encoding="utf-8")
