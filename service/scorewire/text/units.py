"""Language-neutral text units for the text-metric checks: words, ROUGE tokens, LCS.

Scripts written without spaces between words (Han, Hiragana, Katakana, Thai, Lao,
Khmer, Myanmar) cannot be split into words without a dictionary, so each of their
characters (with its combining marks) is one unit; every other script is split at
anything that is not a letter, a mark or a digit. This is what lets ROUGE-L score
Japanese and Chinese instead of seeing one giant token per sentence.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import regex  # type: ignore[import-untyped]  # ships without type information

_NO_SPACE = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
"""Scripts whose words are not separated by spaces: one unit per character."""

_TOKEN = regex.compile(rf"[{_NO_SPACE}]\p{{M}}*|[^\W_{_NO_SPACE}]+")
_CHUNK = regex.compile(rf"[{_NO_SPACE}]\p{{M}}*|[^\s{_NO_SPACE}]+")
_WORDISH = regex.compile(r"[^\W_]")
_HAS_NO_SPACE = regex.compile(rf"[{_NO_SPACE}]")

_ASCII_NOT_REGEX_SPACE = re.compile(r"[\x1c-\x1f]")
"""ASCII characters `str.split` splits at but `regex`'s `\\s` does not (see `count_words`)."""
_ASCII_PUNCTUATION_PIECE = re.compile(r"\s[^\sA-Za-z0-9]+(?=\s|\Z)")
"""A white-space-separated piece of ASCII text holding no letter or digit, after the white
space before it (a leading white space lets `re` scan for the pattern's first character)."""


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
    if text.isascii() and _ASCII_NOT_REGEX_SPACE.search(text) is None:
        # The same count in two C-speed passes: ASCII holds no unspaced script, its
        # white space is the same for `str.split` and `regex` once the information
        # separators are ruled out, and its word characters are letters and digits.
        return len(text.split()) - len(_ASCII_PUNCTUATION_PIECE.findall(" " + text))
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
