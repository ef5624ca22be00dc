"""Word-level differences between two outputs, for the compare page: computed here
(difflib), drawn by the page's script as text, so nothing in an output is ever markup."""

from __future__ import annotations

import difflib
import re
from typing import Literal

DiffOp = Literal["=", "-", "+"]
"""Kept, deleted (only in the base output) or inserted (only in the compared one)."""

MAX_WORDS = 2000
"""Words per output past which no diff is computed: a diff of two long texts says less
than the texts themselves."""
PAGE_BUDGET_S = 1.0
"""Seconds a page spends on diffs: the changes after it show their outputs without one
(repetitive outputs of under 200 words can take a tenth of a second each)."""

_WORDS = re.compile(r"\S+\s*")


def _words(text: str) -> tuple[str, list[str]]:
    """The text's leading space, then each word with the space after it."""
    stripped = text.lstrip()
    return text[: len(text) - len(stripped)], _WORDS.findall(stripped)


def word_diff(before: str, after: str) -> list[tuple[DiffOp, str]] | None:
    """`before` → `after` as runs of kept, deleted and inserted text, word by word: words
    are compared without the space around them (a word that only moved to another line is
    kept), kept and inserted runs are `after`'s own text, so they join back into it; None
    when either text has more than `MAX_WORDS` words."""
    _, a = _words(before)
    lead_b, b = _words(after)
    if len(a) > MAX_WORDS or len(b) > MAX_WORDS:
        return None
    out: list[tuple[DiffOp, str]] = []

    def add(op: DiffOp, words: list[str]) -> None:
        text = "".join(words)
        if not text:
            return
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1] + text)
        else:
            out.append((op, text))

    add("=", [lead_b])
    # autojunk (from 200 words, a word in over 1 % of them does not start a match)
    # keeps long repetitive texts fast: without it two 2,000-word texts of a few
    # distinct words take minutes.
    matcher = difflib.SequenceMatcher(None, [w.rstrip() for w in a], [w.rstrip() for w in b])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("=", b[j1:j2])
        else:
            add("-", a[i1:i2])
            add("+", b[j1:j2])
    return out
