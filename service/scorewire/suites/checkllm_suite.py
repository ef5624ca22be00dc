"""A loaded checkllm suite: its judge, settings, prompts, providers and tests, and the
jobs they make (one `Group` per test, its combinations prompt-major, provider-minor).

`checkllm` loads a document into a `CheckllmSuite`; everything here is already validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scorewire.core.model import Output, Sample
from scorewire.engine.runner import Plan
from scorewire.engine.spec import CheckSpec, CompiledCheck
from scorewire.engine.summary import Gate
from scorewire.generation import templates
from scorewire.generation.generator import GenerationJob, Group, ProviderCall, Recorded
from scorewire.generation.providers import ProviderRef

RECORDED = ProviderRef("recorded", "")
"""The provider of a file without `providers:`: outputs come from the file."""

DEFAULT_GATE = Gate(min_pass_rate=1.0)
"""Every combination must pass every assertion, and nothing may error."""


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """The `judge:` section."""

    backend: str = "auto"
    """openai, anthropic, gemini or auto."""
    model: str = ""
    """The model name; empty for the backend's default."""

    def model_param(self) -> str | None:
        """What judge checks get as their `model` parameter, or None for the default.

        Gemini is served by the OpenAI-compatible judge backend, so it maps to
        `openai:<model>`.
        """
        if self.backend == "auto":
            return self.model or None
        if self.backend == "gemini":
            return f"openai:{self.model}"
        return f"{self.backend}:{self.model}" if self.model else self.backend


@dataclass(slots=True)
class CheckllmSettings:
    """The `settings:` section."""

    budget: float = 10.0
    """Most USD the run may spend on provider and judge calls."""
    threshold: float = 0.8
    """Default threshold of the LLM-as-judge assertions."""
    parallel: bool = True
    """Whether combinations run concurrently."""
    cache: bool = True
    """Whether identical provider and judge calls are answered from a cache."""
    fresh_judges: bool = False
    """Ask the judges again on every run: no verdict cached before the run began is read
    (a holdout watched for drift); a request's `judge_cache` overrides it."""
    concurrency: int = 16
    """Combinations in flight when `parallel` is true."""

    @property
    def effective_concurrency(self) -> int:
        """`concurrency` when parallel, else 1."""
        return self.concurrency if self.parallel else 1


@dataclass(slots=True)
class CheckllmTest:
    """One test: its vars, its compiled assertions, and any recorded outputs."""

    index: int
    description: str
    vars: dict[str, Any]
    checks: list[CompiledCheck]
    specs: list[CheckSpec]
    output: str | None = None
    outputs: dict[str, str | list[str]] = field(default_factory=dict)

    def recorded(self, provider: str, prompt_index: int) -> str | None:
        """The recorded output for one prompt × provider, or None."""
        by_provider = self.outputs.get(provider)
        if isinstance(by_provider, str):
            return by_provider
        if isinstance(by_provider, list):
            return by_provider[prompt_index]
        return self.output


@dataclass(slots=True)
class CheckllmSuite:
    """A loaded checkllm file: everything validated, ready to expand into jobs."""

    description: str
    judge: JudgeConfig
    prompts: list[str]
    providers: list[ProviderRef]
    tests: list[CheckllmTest]
    settings: CheckllmSettings
    gate: Gate = DEFAULT_GATE
    check_timeout_s: float = 120.0
    _plans: tuple[float, list[Plan]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """The tests' plans, with the check timeout they were built with (`plans()`)."""
    wire_parts: Any = field(default=None, init=False, repr=False, compare=False)
    """What a scoring worker writes for each combination, written once
    (`scoring.checkllm_results.CombinationBytes`). Kept here, it lives exactly as long as
    the suite: a plan cache's bound covers both (`checkllm_results.kept_bytes`)."""

    @property
    def uses_judge(self) -> bool:
        """Whether any assertion may call a judge."""
        return any(c.uses_judge for t in self.tests for c in t.checks)

    def plans(self) -> list[Plan]:
        """Each test's plan (its assertions), in test order; built once and shared by every
        run of the suite, so what a plan keeps (its native kernel plan) is built once."""
        if self._plans is None or self._plans[0] != self.check_timeout_s:
            plans = [Plan(list(t.checks), self.check_timeout_s) for t in self.tests]
            self._plans = (self.check_timeout_s, plans)
        return self._plans[1]

    def combination_number(self, test: int, prompt: int, provider: int) -> int:
        """The number of the combination of `test`, `prompt` and `provider` (positions in
        the document): its place in run order (tests, then prompts, then providers)."""
        return (test * len(self.prompts) + prompt) * len(self.providers) + provider

    def combination(self, number: int) -> tuple[int, int, int]:
        """The test, prompt and provider (positions in the document) of the combination
        `number`: its place in run order (tests, then prompts, then providers)."""
        per_prompt = len(self.providers)
        test, rest = divmod(number, len(self.prompts) * per_prompt)
        prompt, provider = divmod(rest, per_prompt)
        return test, prompt, provider

    @staticmethod
    def sample_id(test: int, prompt: int, provider: str) -> str:
        """The id of a combination's sample: `t<test>/p<prompt>/<provider>`."""
        return f"t{test}/p{prompt}/{provider}"

    def sample(self, test: int, prompt: int, provider: str) -> Sample:
        """The sample of one combination: the id `t<test>/p<prompt>/<provider>`, the test's
        vars as input, its var `expected`, and where it comes from as metadata. Every path
        that scores a combination (in this process or in a scoring worker) builds it here."""
        t = self.tests[test]
        return Sample(
            self.sample_id(test, prompt, provider),
            dict(t.vars),
            t.vars.get("expected"),
            {
                "test": t.index,
                "description": t.description,
                "prompt_index": prompt,
                "provider": provider,
            },
        )

    @property
    def all_recorded(self) -> bool:
        """Whether the document records an output for every combination (none to generate)."""
        return all(t.recorded(p.id, 0) is not None for t in self.tests for p in self.providers)

    def groups(self) -> list[Group]:
        """One group per test, its jobs in prompt-major, provider-minor order."""
        out: list[Group] = []
        index = 0
        for test, plan in zip(self.tests, self.plans(), strict=True):
            jobs: list[GenerationJob] = []
            for j, template in enumerate(self.prompts):
                rendered = (
                    templates.render(template, test.vars)
                    if not templates.missing_vars(template, test.vars)
                    else None
                )
                for ref in self.providers:
                    pid = ref.id
                    sample = self.sample(test.index, j, pid)
                    text = test.recorded(pid, j)
                    source: Recorded | ProviderCall
                    if text is not None:
                        source = Recorded(Output(text=text))
                    else:
                        # The loader has checked that the template renders here.
                        source = ProviderCall(pid, rendered or "")
                    jobs.append(GenerationJob(sample, source, pid, rendered, index))
                    index += 1
            out.append(Group(f"t{test.index}", plan, jobs, list(test.specs), test.description))
        return out

    def called_providers(self) -> list[ProviderRef]:
        """Providers some combination must call (those without a recorded output)."""
        needed: dict[str, ProviderRef] = {}
        for group in self.groups():
            for job in group.jobs:
                if isinstance(job.source, ProviderCall):
                    ref = next(r for r in self.providers if r.id == job.provider)
                    needed.setdefault(ref.id, ref)
        return list(needed.values())
