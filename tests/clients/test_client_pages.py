"""Every code block of the client pages runs, against a real server, printing what the page shows.

The client pages are each client's README and the site's Clients page. Every fenced block
on them is one of:

- a program, marked `<!-- file: clients/LANG/examples/... -->`: a complete program that
  is that file verbatim. The first ```text block after it (before the next program) is
  everything it prints, and equals the program's `*.expected.txt` beside it. The Python
  programs are extracted from the page and run here; the Go, TypeScript and Java ones
  by their client's own tests (`make test-clients`), which run every program of
  `examples/` that has an expected output and compare the whole of it.
- that ```text output;
- a block marked `<!-- not run: REASON -->`: install routes and build commands, which
  `make test-install` and `make test-clients` exercise in their own way.

A block of any other kind fails the test, so a fragment cannot creep back in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import Block, blocks

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
LANGS = ("python", "go", "typescript", "java")
PAGES = [CLIENTS / lang / "README.md" for lang in LANGS] + [ROOT / "docs" / "clients.md"]
# The block language of each client's programs, and the first program of its README.
PROGRAM_LANG = {"python": "python", "go": "go", "typescript": "ts", "java": "java"}
HELLO = {
    "python": "clients/python/examples/hello.py",
    "go": "clients/go/examples/hello/main.go",
    "typescript": "clients/typescript/examples/hello.ts",
    "java": "clients/java/examples/Hello.java",
}


def expected_output(program: str) -> Path:
    """The file of what `program` prints: NAME.expected.txt beside it (Go: the directory's name)."""
    path = ROOT / program
    stem = path.parent.name if path.name == "main.go" else path.stem
    return path.parent / f"{stem.lower()}.expected.txt"


def programs_with_output(page: Path) -> list[tuple[Block, Block | None]]:
    """Each program block of `page` with the first text block after it (None when none)."""
    found = blocks(page)
    pairs: list[tuple[Block, Block | None]] = []
    for i, block in enumerate(found):
        if block.file:
            after = found[i + 1 :]
            end = next((j for j, b in enumerate(after) if b.file), len(after))
            pairs.append((block, next((b for b in after[:end] if b.lang == "text"), None)))
    return pairs


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_block_is_a_program_its_output_or_marked_not_run(page: Path) -> None:
    outputs = {out.line for _, out in programs_with_output(page) if out is not None}
    unmarked = [
        f"line {b.line}: ```{b.lang}"
        for b in blocks(page)
        if not (b.file or b.not_run or b.line in outputs)
    ]
    assert unmarked == [], (
        f"{_page_id(page)}: every block must be a program (<!-- file: ... -->), its output "
        "(the ```text block after it), or marked <!-- not run: REASON -->"
    )


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_a_program_on_a_page_is_its_file_and_shows_its_whole_output(page: Path) -> None:
    for program, output in programs_with_output(page):
        path = ROOT / str(program.file)
        where = f"{_page_id(page)} line {program.line}"
        assert path.is_file(), f"{where}: {program.file} does not exist"
        lang = path.relative_to(CLIENTS).parts[0]
        assert path.relative_to(CLIENTS).parts[1] == "examples", f"{where}: not in examples/"
        assert program.lang == PROGRAM_LANG[lang], where
        assert program.body == path.read_text(encoding="utf-8"), (
            f"{where} differs from {program.file}: run .venv/bin/python scripts/readme_examples.py"
        )
        expected = expected_output(str(program.file))
        assert output is not None, f"{where}: no ```text block shows what {program.file} prints"
        assert output.body == expected.read_text(encoding="utf-8"), (
            f"{where}: the output shown is not {expected.relative_to(ROOT)}"
        )


@pytest.mark.parametrize("lang", LANGS)
def test_every_example_with_an_output_is_on_its_readme(lang: str) -> None:
    # The client's tests run every program of examples/ that has an expected output:
    # each is shown on the README, the first being the hello program.
    readme = CLIENTS / lang / "README.md"
    shown = [str(b.file) for b, _ in programs_with_output(readme)]
    assert shown and shown[0] == HELLO[lang]
    on_disk = sorted(
        str(p.relative_to(ROOT))
        for p in (CLIENTS / lang / "examples").rglob("*")
        if p.suffix in (".py", ".go", ".ts", ".java")
    )
    assert sorted(shown) == on_disk
    assert all(expected_output(p).is_file() for p in on_disk)


def test_programs_with_output_pairs_each_program_with_the_text_after_it(tmp_path: Path) -> None:
    # The pairing itself: a command between a program and its output is skipped; a
    # program without a text block before the next program has no output.
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- file: a.py -->\n```python\nA\n```\n<!-- not run: x -->\n```sh\nrun\n```\n"
        "```text\nout A\n```\n<!-- file: b.py -->\n```python\nB\n```\n",
        encoding="utf-8",
    )
    pairs = [(p.file, o.body if o else None) for p, o in programs_with_output(page)]
    assert pairs == [("a.py", "out A\n"), ("b.py", None)]
    assert [b.not_run for b in blocks(page)] == [None, "x", None, None]


def test_every_client_prints_the_same_hello_output() -> None:
    # One program in four languages: the docs can show one output for all of them.
    outputs = {lang: expected_output(HELLO[lang]).read_text() for lang in LANGS}
    assert len(set(outputs.values())) == 1, outputs


@pytest.mark.parametrize(
    "program",
    [b for b, _ in programs_with_output(CLIENTS / "python" / "README.md")],
    ids=lambda b: str(b.file),
)
def test_a_python_program_of_the_page_prints_what_the_page_shows(
    program: Block, scorewire_addr: str, tmp_path: Path
) -> None:
    # The block as the page shows it, written out and run as a reader runs it.
    shown = dict(programs_with_output(CLIENTS / "python" / "README.md"))[program]
    assert shown is not None
    script = tmp_path / Path(str(program.file)).name
    script.write_text(program.body, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        env=dict(os.environ, SCOREWIRE_ADDRESS=scorewire_addr),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown.body
