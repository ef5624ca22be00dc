"""Word-level differences between two outputs, for the compare page: computed here
(difflib), drawn by the page's script as text, so nothing in an output is ever markup."""

from __future__ import annotations

import difflib
import re
from typing import Literal

DiffOp = Literal["=", "-", "+"]
"""Kept, deleted (only in the base output) or inserted (only in the compared one)."""

MAX_WORDS = 2000
"""Words (and runs of spaces) per output past which no diff is computed: matching is
quadratic at worst, and a diff of two long texts says less than the texts themselves."""

_WORDS = re.compile(r"\s+|[^\s]+")


def word_diff(before: str, after: str) -> list[tuple[DiffOp, str]] | None:
    """`before` → `after` as runs of kept, deleted and inserted text, word by word (the
    spaces between words are tokens too, so the runs joined give back each text); None
    when either text has more than `MAX_WORDS` tokens."""
    a, b = _WORDS.findall(before), _WORDS.findall(after)
    if len(a) > MAX_WORDS or len(b) > MAX_WORDS:
        return None
    out: list[tuple[DiffOp, str]] = []

    def add(op: DiffOp, words: list[str]) -> None:
        if not words:
            return
        text = "".join(words)
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1] + text)
        else:
            out.append((op, text))

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("=", a[i1:i2])
        else:
            add("-", a[i1:i2])
            add("+", b[j1:j2])
    return out
