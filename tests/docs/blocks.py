"""The fenced code blocks of a Markdown page, with what the tests need to know of each.

A block is written as MkDocs (Material) renders it:

    ```lang title="file name"
    body
    ```

`title` names a file the reader writes (the tests write it too). An HTML comment right
before the fence, `<!-- file: clients/go/examples/hello/main.go -->`, says the block is
that file of the repository, verbatim (`tests/docs/test_readme.py` compares them).
`<!-- not run: REASON -->` instead says the block is not executed by the tests, and why
(a page's tests refuse any other block they cannot run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(
    r"(?:^<!-- (?:file: (?P<file>\S+)|not run: (?P<not_run>[^\n]*?)) -->\n)?"
    r"^```(?P<lang>[\w-]*)(?P<attrs>[^\n]*)\n(?P<body>.*?)^```$",
    flags=re.S | re.M,
)
TITLE = re.compile(r'title="([^"]+)"')


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    lang: str
    body: str
    title: str | None
    """The file the block is, as the reader writes it (`title="suite.yaml"`)."""
    file: str | None
    """The repository file the block shows verbatim (`<!-- file: PATH -->`)."""
    not_run: str | None
    """Why the tests do not execute the block (`<!-- not run: REASON -->`)."""
    line: int
    """The line of the page the fence opens on."""


def blocks(page: Path) -> list[Block]:
    """Every fenced block of `page`, in order."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        title = TITLE.search(m["attrs"])
        line = text.count("\n", 0, m.start("lang")) + 1
        out.append(
            Block(m["lang"], m["body"], title[1] if title else None, m["file"], m["not_run"], line)
        )
    return out
