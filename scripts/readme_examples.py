"""Copy the hello programs into the README's marked code blocks.

A block right after `<!-- file: PATH -->` shows the repository file PATH verbatim;
`tests/docs/test_readme.py` fails when the two differ. After changing a program, run

    .venv/bin/python scripts/readme_examples.py

to copy every existing marked file into its block (a missing file leaves its block).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKED = re.compile(
    r"^(<!-- file: (?P<file>\S+) -->\n```[^\n]*\n)(?P<body>.*?)(^```$)", flags=re.S | re.M
)


def synced(text: str) -> str:
    """`text` with every marked block holding its file's content."""

    def copy(m: re.Match[str]) -> str:
        path = ROOT / m["file"]
        if not path.is_file():
            return m[0]
        body = path.read_text(encoding="utf-8")
        return m[1] + body + ("" if body.endswith("\n") else "\n") + m[4]

    return MARKED.sub(copy, text)


def main() -> int:
    text = README.read_text(encoding="utf-8")
    new = synced(text)
    if new != text:
        README.write_text(new, encoding="utf-8")
        print("README.md: copied the hello programs into their blocks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
