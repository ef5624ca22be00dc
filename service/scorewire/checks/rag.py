"""RAG checks: faithfulness, context relevance and answer relevance, judged by an LLM.

Each ships a fixed rubric on a fixed 1–5 scale; value = (level − 1) / 4 and the check
passes when value ≥ threshold (default 0.75, i.e. level 4 of 5). `question:` and
`context:` name the fields of the sample's input that hold them. Only the keys the
catalog lists are accepted: scale, pass_level, include_reference or a rubric are load
errors, because the rubric and scale are part of what each check means.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from scorewire.core.charges import JUDGE_MODEL
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import ParamError, Uncosted, check_type
from scorewire.judge.answers import Question
from scorewire.judge.checking import JudgeBackedCheck, ask_levels, level_threshold, output_text
from scorewire.judge.models import ModelRef, parse_model
from scorewire.judge.panels import PanelParams
from scorewire.judge.prompts import as_text, render_grade
from scorewire.judge.sampling import Sampling, sampling_from
from scorewire.judge.several import Several, judges_from
from scorewire.judge.verdict import LevelVerdict, parse_level

SCALE = 5
"""The fixed scale of every RAG check."""
DEFAULT_THRESHOLD = 0.75
"""Level 4 of 5: the same bar as `judge`'s default pass_level."""
MAX_TOKENS = 1024
FAMILY = "rag"
RAG_THRESHOLD = level_threshold(DEFAULT_THRESHOLD)
"""Every RAG check yields its level as a value; the engine passes it at the threshold."""

FAITHFULNESS_RUBRIC = (
    "Every claim the <answer> makes is supported by the <context>. Judge support only, "
    "not whether the claims are true in the world: use no outside knowledge. "
    "5: every claim is supported by the context. 4: all main claims are supported, a "
    "minor detail is not. 3: some claims are supported and some are not. 2: most claims "
    "are unsupported. 1: the answer's claims are unsupported by or contradict the context."
)
CONTEXT_RELEVANCE_RUBRIC = (
    "The <context> contains the information needed to answer the <question>. Ignore any "
    "answer: judge the context alone. 5: the context fully answers the question. 4: it "
    "answers it with a minor gap. 3: it answers part of the question. 2: it is on the "
    "topic but does not answer the question. 1: it is irrelevant to the question."
)
ANSWER_RELEVANCE_RUBRIC = (
    "The <answer> addresses the <question> that was asked, directly and completely. "
    "Ignore whether the answer is correct: judge only whether it responds to the "
    "question. 5: it addresses the question directly and completely. 4: it addresses it "
    "with minor digressions or omissions. 3: it addresses part of it. 2: it is on the "
    "topic but does not address the question. 1: it does not address the question."
)


def _model(model: str | None) -> ModelRef:
    try:
        return parse_model(model)
    except ValueError as err:
        raise ParamError("model", str(err)) from None


def _several(
    p: FaithfulnessParams | ContextRelevanceParams | AnswerRelevanceParams,
) -> Several | None:
    return judges_from(p, p.model, bar=p.threshold, step=1 / (SCALE - 1))


def _field_name(value: str, key: str) -> str:
    if not value.strip():
        raise ParamError(key, "must name a field of the sample's input")
    return value


_THRESHOLD = Field(DEFAULT_THRESHOLD, ge=0.0, le=1.0, description="Pass when value ≥ threshold.")
_MODEL = Field(None, description="Judge as backend:model; default configured.")
_QUESTION = Field("question", description="The input field holding the question.")
_CONTEXT = Field("context", description="The input field holding the retrieved context.")
_INPUT_FIELD = Uncosted("the name of a field of the sample's input, looked up in each case")


class FaithfulnessParams(PanelParams):
    """Parameters of `rag.faithfulness`."""

    context: str = _CONTEXT
    model: str | None = _MODEL
    threshold: float = _THRESHOLD


class ContextRelevanceParams(PanelParams):
    """Parameters of `rag.context_relevance`."""

    question: str = _QUESTION
    context: str = _CONTEXT
    model: str | None = _MODEL
    threshold: float = _THRESHOLD


class AnswerRelevanceParams(PanelParams):
    """Parameters of `rag.answer_relevance`."""

    question: str = _QUESTION
    model: str | None = _MODEL
    threshold: float = _THRESHOLD


class _Missing(Exception):
    pass


def _context_text(value: Any) -> str:
    """Context as the judge sees it: a string as is; a list of chunks numbered."""
    if isinstance(value, list) and all(isinstance(c, str) for c in value):
        return "\n\n".join(f"[{i}] {chunk}" for i, chunk in enumerate(value, 1))
    return as_text(value)


class RagGrade(JudgeBackedCheck):
    """A RAG check bound to its rubric and the input fields it reads."""

    def __init__(
        self,
        rubric: str,
        *,
        question_field: str | None,
        context_field: str | None,
        with_answer: bool,
        model: ModelRef,
        sampling: Sampling,
        several: Several | None = None,
    ) -> None:
        super().__init__()
        self.sampling = sampling
        self.several = several
        self.rubric = rubric
        self.question_field = question_field
        self.context_field = context_field
        self.with_answer = with_answer
        self.model = model

    def _read(self, sample: Sample, field: str, *, is_question: bool) -> str:
        data = sample.input
        if isinstance(data, dict):
            if field in data and data[field] is not None:
                value = data[field]
                return _context_text(value) if not is_question else as_text(value)
        elif is_question and isinstance(data, str) and data:
            return data  # a plain-text input is the question itself
        raise _Missing(f"the sample's input has no {field!r} field")

    async def score(self, judge: Any, sample: Sample, output: Output, ctx: CheckContext) -> Score:
        """Grade on the fixed rubric; the engine passes the level at the threshold."""
        sections: list[tuple[str, str]] = []
        try:
            if self.question_field is not None:
                sections.append(
                    ("question", self._read(sample, self.question_field, is_question=True))
                )
            if self.context_field is not None:
                sections.append(
                    ("context", self._read(sample, self.context_field, is_question=False))
                )
        except _Missing as missing:
            return Score.fail_with_error(ErrorCode.MISSING_REFERENCE, str(missing))
        if self.with_answer:
            sections.append(("answer", output_text(output)))
        prompt = render_grade(self.rubric, SCALE, sections, self.examples)
        question = Question(prompt, _parse, self.model, MAX_TOKENS)
        case = (sample.id, output_text(output))
        return await ask_levels(
            judge, ctx, question, self.sampling, SCALE, several=self.several, case=case
        )


def _parse(text: str) -> LevelVerdict:
    return parse_level(text, SCALE)


@check_type(
    "rag.faithfulness",
    description="Every claim in the answer is supported by the context (LLM-judged).",
    family=FAMILY,
    params=FaithfulnessParams,
    uses_judge=True,
    threshold=RAG_THRESHOLD,
    costs={"context": _INPUT_FIELD, "model": JUDGE_MODEL},
)
def build_faithfulness(p: FaithfulnessParams) -> RagGrade:
    """Bind `rag.faithfulness`: reads the context field and the output."""
    return RagGrade(
        FAITHFULNESS_RUBRIC,
        question_field=None,
        context_field=_field_name(p.context, "context"),
        with_answer=True,
        model=_model(p.model),
        sampling=sampling_from(p),
        several=_several(p),
    )


@check_type(
    "rag.context_relevance",
    description="The retrieved context can answer the question (the answer is ignored).",
    family=FAMILY,
    params=ContextRelevanceParams,
    uses_judge=True,
    threshold=RAG_THRESHOLD,
    costs={"question": _INPUT_FIELD, "context": _INPUT_FIELD, "model": JUDGE_MODEL},
)
def build_context_relevance(p: ContextRelevanceParams) -> RagGrade:
    """Bind `rag.context_relevance`: reads the question and context fields, not the output."""
    return RagGrade(
        CONTEXT_RELEVANCE_RUBRIC,
        question_field=_field_name(p.question, "question"),
        context_field=_field_name(p.context, "context"),
        with_answer=False,
        model=_model(p.model),
        sampling=sampling_from(p),
        several=_several(p),
    )


@check_type(
    "rag.answer_relevance",
    description="The answer addresses the question (its accuracy is ignored).",
    family=FAMILY,
    params=AnswerRelevanceParams,
    uses_judge=True,
    threshold=RAG_THRESHOLD,
    costs={"question": _INPUT_FIELD, "model": JUDGE_MODEL},
)
def build_answer_relevance(p: AnswerRelevanceParams) -> RagGrade:
    """Bind `rag.answer_relevance`: reads the question field and the output.

    A sample whose input is a plain string uses that string as the question.
    """
    return RagGrade(
        ANSWER_RELEVANCE_RUBRIC,
        question_field=_field_name(p.question, "question"),
        context_field=None,
        with_answer=True,
        model=_model(p.model),
        sampling=sampling_from(p),
        several=_several(p),
    )
