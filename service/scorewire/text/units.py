"""Language-neutral text units for the text-metric checks: words, ROUGE tokens, LCS.

Scripts written without spaces between words (Han, Hiragana, Katakana, Thai, Lao,
Khmer, Myanmar) cannot be split into words without a dictionary, so each of their
characters (with its combining marks) is one unit; every other script is split at
anything that is not a letter, a mark or a digit. This is what lets ROUGE-L score
Japanese and Chinese instead of seeing one giant token per sentence.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import regex  # type: ignore[import-untyped]  # ships without type information

_NO_SPACE = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
"""Scripts whose words are not separated by spaces: one unit per character."""

_TOKEN = regex.compile(rf"[{_NO_SPACE}]\p{{M}}*|[^\W_{_NO_SPACE}]+")
_CHUNK = regex.compile(rf"[{_NO_SPACE}]\p{{M}}*|[^\s{_NO_SPACE}]+")
_WORDISH = regex.compile(r"[^\W_]")
_HAS_NO_SPACE = regex.compile(rf"[{_NO_SPACE}]")

_SPACE = regex.compile(r"\s")
_MARK = regex.compile(r"\p{M}")

SPACE, UNSPACED, MARK, WORDISH = 1, 2, 4, 8
"""The classes of `word_classes`, as bits."""


def word_classes(ch: str) -> int:
    """The classes `count_words` reads the character `ch` by, as bits: white space
    (`SPACE`), a script written without spaces (`UNSPACED`), a mark (`MARK`), a word
    character (`WORDISH`). The native kernel counts the words of text beyond ASCII from
    these (`service/native/src/text.rs`, `words`)."""
    return (
        (SPACE if _SPACE.match(ch) else 0)
        | (UNSPACED if _HAS_NO_SPACE.match(ch) else 0)
        | (MARK if _MARK.match(ch) else 0)
        | (WORDISH if _WORDISH.match(ch) else 0)
    )


_ASCII_NOT_A_WORD_CHARACTER = bytes(
    c for c in range(128) if not (chr(c).isalnum() or c in b" \t\n\r\x0b\x0c")
)
"""The ASCII characters that are neither a letter, a digit nor `regex`'s white space
(`\\s`: the six of `bytes.split`; `str.split` also splits at the separators \\x1c-\\x1f,
which `\\s` does not): punctuation, `_` and control characters (see `count_words`)."""


def has_unspaced_script(text: str) -> bool:
    """Whether `text` holds a character of a script written without spaces (CJK, Thai...)."""
    return _HAS_NO_SPACE.search(text) is not None


def tokens(text: str) -> list[str]:
    """The comparison units of `text`: NFKC-normalised, case-folded, punctuation dropped.

    Runs of letters/marks/digits are one token (`don't` is `don`, `t`); each character
    of an unspaced script is its own token (`東京` is `東`, `京`).
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = _TOKEN.findall(folded)
    return out


def bleu_tokens(text: str) -> str:
    """`text` split for BLEU when it holds unspaced scripts, joined by single spaces.

    Like `tokens`, but case and punctuation are kept (each punctuation mark is a token),
    as sacreBLEU's own tokenisers keep them.
    """
    units = regex.findall(rf"[{_NO_SPACE}]\p{{M}}*|[^\W_{_NO_SPACE}]+|[^\s\w]|_+", text)
    return " ".join(units)


def count_words(text: str) -> int:
    """Words as people count them: white-space-separated pieces holding a letter or digit.

    A piece of punctuation alone (`—`, `...`) is not a word; each character of an
    unspaced script is one word (`東京は` is 3), and a spaced word touching one
    (`iPhoneを`) is one word plus that character.
    """
    if text.isascii():
        # The same count in C-speed passes: ASCII holds no unspaced script, and its word
        # characters are letters and digits. Deleting every other non-space character
        # empties exactly the pieces that hold no letter or digit, and `bytes.split`
        # splits where `regex`'s `\s` does and drops the empty pieces.
        return len(text.encode("ascii").translate(None, _ASCII_NOT_A_WORD_CHARACTER).split())
    n = 0
    for piece in _CHUNK.findall(text):
        if _HAS_NO_SPACE.match(piece) is not None or _WORDISH.search(piece) is not None:
            n += 1
    return n


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences.

    Bit-parallel (Allison-Dix / Hyyrö): one big-integer step per token of `a`, each
    over len(b) bits, so two 10,000-token texts take milliseconds, not 10^8 steps.
    """
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(b):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << len(b)) - 1
    v = full
    for tok in a:
        m = masks.get(tok)
        if m is None:
            continue
        u = v & m
        v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def rouge_l(candidate: Sequence[str], reference: Sequence[str]) -> tuple[float, float, float]:
    """ROUGE-L precision, recall and F1 (β = 1, as `rouge-score` reports) over tokens.

    Either side empty scores 0.
    """
    lcs = lcs_length(candidate, reference)
    if lcs == 0:
        return 0.0, 0.0, 0.0
    precision = lcs / len(candidate)
    recall = lcs / len(reference)
    return precision, recall, 2 * precision * recall / (precision + recall)
