"""Copy the example programs, and what they print, into the pages that show them.

A block right after `<!-- file: PATH -->` shows the repository file PATH verbatim, and the
first ```text block after it (before the next marked block) shows what the program
prints: its `NAME.expected.txt` beside it (for Go's `NAME/main.go`, `NAME/NAME.expected.txt`).
`tests/docs/test_readme.py` and `tests/clients/test_client_pages.py` fail when a page
and the files differ. After changing a program or its output, run

    .venv/bin/python scripts/readme_examples.py

to copy every existing marked file into its block (a missing file leaves its block).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "clients").glob("*/README.md"))]
MARKED = re.compile(
    r"^(<!-- file: (?P<file>\S+) -->\n```[^\n]*\n)(?P<body>.*?)(^```$)", flags=re.S | re.M
)
TEXT = re.compile(r"^(```text\n)(.*?)(^```$)", flags=re.S | re.M)


def expected_output(program: Path) -> Path:
    """The file of what `program` prints."""
    stem = program.parent.name if program.name == "main.go" else program.stem
    return program.parent / f"{stem.lower()}.expected.txt"


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def synced(text: str, outputs: bool = False) -> str:
    """`text` with every marked block holding its file's content (and, with `outputs`,
    the text block after it holding the program's expected output)."""
    out: list[str] = []
    pos = 0
    for m in MARKED.finditer(text):
        out.append(text[pos : m.start()])
        path = ROOT / m["file"]
        if not path.is_file():
            out.append(m[0])
            pos = m.end()
            continue
        out.append(m[1] + _with_newline(path.read_text(encoding="utf-8")) + m[4])
        pos = m.end()
        expected = expected_output(path)
        if outputs and expected.is_file():
            nxt = MARKED.search(text, pos)
            shown = TEXT.search(text, pos, nxt.start() if nxt else len(text))
            if shown:
                out.append(text[pos : shown.start()])
                printed = _with_newline(expected.read_text(encoding="utf-8"))
                out.append(shown[1] + printed + shown[3])
                pos = shown.end()
    out.append(text[pos:])
    return "".join(out)


def main() -> int:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        new = synced(text, outputs=page != ROOT / "README.md")
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"{page.relative_to(ROOT)}: copied the example programs into their blocks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
