"""A checkllm suite sent in a request: loading it, matching recorded cases to its
combinations, and the prompt × provider matrix of a run.

The server (RunSuite, ScoreStream, ValidateSuite) and the in-process API share this;
field paths are the CLI's, under `suite_yaml.` for the document and `cases[i]` for the
request's cases.

A recorded case names its combination by three strings: the test (its index in
`tests`, or its `description` when that is unique), the prompt (its index in
`prompts`, or the template text; empty when the suite has one prompt) and the provider
(as written in `providers`, `openai:gpt-4o`; empty when the suite has one provider, and
`recorded` for a suite that lists none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scorewire.core.cost import LimitExceeded, RequestMeter, metering
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.model import Output
from scorewire.generation.generator import GenerationJob, Group, JobResult, ProviderCall, Recorded
from scorewire.generation.providers import parse_provider
from scorewire.settings import Settings
from scorewire.suites.checkllm import is_checkllm, load_checkllm_data
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.suites.yaml_document import Parsed, parse_yaml

EVALSTONE = "evalstone"
CHECKLLM = "checkllm"

MAX_MISSING_REPORTED = 20
"""Missing combinations listed one by one; the rest are counted in one more problem."""


def request_format(suite_yaml: str, named: str | None) -> tuple[str, Parsed | None]:
    """`checkllm` or `evalstone`: the one `named`, else detected from the document's keys,
    with the document when it was parsed to tell (for its loader).

    A document that does not parse (or is too big once its aliases are expanded) is
    `evalstone`, whose loader reports the YAML error (or the limit).
    """
    if named in (EVALSTONE, CHECKLLM):
        return named, None
    if not suite_yaml.strip():
        return EVALSTONE, None
    try:
        data = parse_yaml(suite_yaml)
    except (SpecError, LimitExceeded):
        return EVALSTONE, None
    return (CHECKLLM if is_checkllm(data) else EVALSTONE), Parsed(data)


def preflight(suite: CheckllmSuite, settings: Settings | None, *, generating: bool) -> None:
    """The one check of a checkllm run before its first call, at every entry point
    (RunSuite, ScoreStream, the in-process API); `generating` says providers will be
    called. Nothing is checked here yet: issue 17 part 2 (every judge and provider has
    a backend, credentials and a price) fills it in, raising `Unrunnable`.
    """


class Unrunnable(Exception):
    """A well-formed suite this configuration cannot run (FAILED_PRECONDITION, exit 2)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _under_suite_yaml(field: str) -> str:
    return f"suite_yaml.{field}" if field else "suite_yaml"


def load_request_checkllm(
    suite_yaml: str,
    *,
    has_checks: bool = False,
    meter: RequestMeter | None = None,
    max_checks: int | None = None,
    check_timeout_s: float | None = None,
    parsed: Parsed | None = None,
) -> CheckllmSuite:
    """Load a request's checkllm document; SpecError with paths under `suite_yaml.`.

    `max_checks` bounds each test's assertions (each test is one plan); `has_checks`
    says the request also sent `checks`/`compact`, which a checkllm suite does not take;
    `parsed`: the document, when `request_format` has parsed it.
    """
    violations: list[FieldViolation] = []
    if has_checks:
        violations.append(
            FieldViolation("checks", "a checkllm suite carries its own assertions: send no checks")
        )
    try:
        with metering(meter):
            data = parsed.data if parsed is not None else parse_yaml(suite_yaml)
            suite = load_checkllm_data(data)
    except SpecError as err:
        raise SpecError(
            [FieldViolation(_under_suite_yaml(v.field), v.description) for v in err.violations]
            + violations
        ) from None
    except LimitExceeded as err:
        raise LimitExceeded(err.setting, _under_suite_yaml(err.field), err.message) from None
    if max_checks is not None:
        for test in suite.tests:
            if len(test.checks) > max_checks:
                raise LimitExceeded(
                    "max_checks_per_request",
                    f"suite_yaml.tests[{test.index}].assert",
                    f"{len(test.checks)} assertions exceed max_checks_per_request ({max_checks})",
                )
    if violations:
        raise SpecError(violations)
    if check_timeout_s is not None:
        suite.check_timeout_s = check_timeout_s
    return suite


@dataclass(frozen=True, slots=True)
class CaseKey:
    """What a recorded case says it answers."""

    test: str
    prompt: str
    provider: str


def check_names(suite: CheckllmSuite) -> list[str]:
    """Every assertion name of the suite, once each, in order of first appearance."""
    seen: dict[str, None] = {}
    for test in suite.tests:
        for check in test.checks:
            seen.setdefault(check.name, None)
    return list(seen)


def combinations(suite: CheckllmSuite) -> int:
    """Cases a run of the suite scores: tests × prompts × providers."""
    return len(suite.tests) * len(suite.prompts) * len(suite.providers)


def generation_calls(groups: Sequence[Group]) -> int:
    """Jobs whose output a provider must generate."""
    return sum(isinstance(j.source, ProviderCall) for g in groups for j in g.jobs)


def combination_of(job: GenerationJob) -> tuple[int, str, int, str]:
    """(test index, test description, prompt index, provider) of a checkllm job."""
    meta = job.sample.metadata
    return (
        int(meta.get("test", 0) or 0),
        str(meta.get("description", "") or ""),
        int(meta.get("prompt_index", 0) or 0),
        job.provider,
    )


class _Resolver:
    """Finds the test, prompt and provider a case names."""

    def __init__(self, suite: CheckllmSuite) -> None:
        self.suite = suite
        by_description: dict[str, list[int]] = {}
        for t in suite.tests:
            if t.description:
                by_description.setdefault(t.description, []).append(t.index)
        self._descriptions = by_description

    def test(self, raw: str, where: str, out: list[FieldViolation]) -> int | None:
        text = raw.strip()
        if text.isdigit():
            index = int(text)
            if index < len(self.suite.tests):
                return index
            out.append(
                FieldViolation(where, f"no test {index}: the suite has {len(self.suite.tests)}")
            )
            return None
        found = self._descriptions.get(text, [])
        if len(found) == 1:
            return found[0]
        if not text:
            out.append(FieldViolation(where, "name the test: its index or its description"))
        elif found:
            out.append(
                FieldViolation(
                    where, f"{len(found)} tests have the description {text!r}: use the index"
                )
            )
        else:
            out.append(FieldViolation(where, f"no test has the description {text!r}"))
        return None

    def prompt(self, raw: str, where: str, out: list[FieldViolation]) -> int | None:
        prompts = self.suite.prompts
        if not raw:
            if len(prompts) == 1:
                return 0
            out.append(
                FieldViolation(where, f"the suite has {len(prompts)} prompts: name one by index")
            )
            return None
        if raw.strip().isdigit():
            index = int(raw.strip())
            if index < len(prompts):
                return index
            out.append(FieldViolation(where, f"no prompt {index}: the suite has {len(prompts)}"))
            return None
        if raw in prompts:
            return prompts.index(raw)
        out.append(FieldViolation(where, "not a prompt of the suite (give its index or its text)"))
        return None

    def provider(self, raw: str, where: str, out: list[FieldViolation]) -> str | None:
        ids = [p.id for p in self.suite.providers]
        if not raw:
            if len(ids) == 1:
                return ids[0]
            out.append(
                FieldViolation(
                    where, f"the suite has {len(ids)} providers: name one ({', '.join(ids)})"
                )
            )
            return None
        if raw in ids:
            return raw
        try:
            pid = parse_provider(raw).id
        except ValueError:
            pid = raw
        if pid in ids:
            return pid
        out.append(FieldViolation(where, f"not a provider of the suite ({', '.join(ids)})"))
        return None


def resolve_combination(
    suite: CheckllmSuite,
    key: CaseKey,
    where: str,
    violations: list[FieldViolation],
    resolver: _Resolver | None = None,
) -> tuple[int, int, str] | None:
    """(test, prompt, provider) a case names, or None with the problems in `violations`."""
    resolver = resolver or _Resolver(suite)
    found = len(violations)
    test = resolver.test(key.test, join_path(where, "test"), violations)
    prompt = resolver.prompt(key.prompt, join_path(where, "prompt"), violations)
    provider = resolver.provider(key.provider, join_path(where, "provider"), violations)
    if len(violations) > found or test is None or prompt is None or provider is None:
        return None
    return test, prompt, provider


def describe(suite: CheckllmSuite, number: int) -> str:
    """The combination `number` (`CheckllmSuite.combination`) for people:
    `tests[0] ("Return policy") × prompts[1] × openai:gpt-4o`."""
    test, prompt, provider = suite.combination(number)
    description = suite.tests[test].description
    label = f' ("{description}")' if description else ""
    return f"tests[{test}]{label} × prompts[{prompt}] × {suite.providers[provider].id}"


class RecordedCombinations:
    """The combinations a request's recorded cases name, matched case by case.

    A combination is its number in run order (`CheckllmSuite.combination`). The strings
    a case names repeat across cases, so what each resolved to is kept (`tests`,
    `prompts`, `providers`): a caller looks a case's three up there and calls `resolve`
    only when one is new; `first` holds the case that named each combination, and
    `second` records a case that names one again. Problems are kept in `violations`
    (every one is reported, not the first); `finish` then lists the combinations no case
    names, which the document must record. Nothing is built per combination: a run of
    10,000 cases costs three dict lookups and an int a case.
    """

    def __init__(self, suite: CheckllmSuite, base: str = "cases") -> None:
        self.suite = suite
        self.violations: list[FieldViolation] = []
        self._base = base
        self._resolver = _Resolver(suite)
        self.tests: dict[str, int] = {}
        self.prompts: dict[str, int] = {}
        self.providers: dict[str, int] = {}
        """What each name a case gave resolved to: a position in the document."""
        self._provider_at = {ref.id: k for k, ref in enumerate(suite.providers)}
        self.first: dict[int, int] = {}
        """The case that named each combination (by number)."""

    def resolve(self, i: int, test: str, prompt: str, provider: str) -> int | None:
        """The number of the combination case `i` names, resolving (and keeping) each
        name; None with the problems in `violations` (those of `resolve_combination`)."""
        t = self.tests.get(test)
        if t is None:
            where = join_path(join_path(self._base, i), "test")
            if (t := self._resolver.test(test, where, self.violations)) is not None:
                self.tests[test] = t
        p = self.prompts.get(prompt)
        if p is None:
            where = join_path(join_path(self._base, i), "prompt")
            if (p := self._resolver.prompt(prompt, where, self.violations)) is not None:
                self.prompts[prompt] = p
        v = self.providers.get(provider)
        if v is None:
            where = join_path(join_path(self._base, i), "provider")
            if (pid := self._resolver.provider(provider, where, self.violations)) is not None:
                v = self.providers[provider] = self._provider_at[pid]
        if t is None or p is None or v is None:
            return None
        return self.suite.combination_number(t, p, v)

    def second(self, i: int, number: int) -> None:
        """Case `i` names a combination an earlier case (`first`) named: a problem."""
        self.violations.append(
            FieldViolation(
                join_path(self._base, i),
                f"a second case for {describe(self.suite, number)} "
                f"(the first is {join_path(self._base, self.first[number])})",
            )
        )

    def finish(self) -> list[int]:
        """The combinations no case names, in run order: the document records their
        outputs. SpecError with every problem: the cases', then each combination with no
        output at all (`MAX_MISSING_REPORTED` by name)."""
        suite, first = self.suite, self.first
        own: list[int] = []
        missing: list[int] = []
        total = combinations(suite)
        if len(first) < total:  # else every combination has its case
            for number in range(total):
                if number not in first:
                    test, prompt, provider = suite.combination(number)
                    recorded = suite.tests[test].recorded(suite.providers[provider].id, prompt)
                    (own if recorded is not None else missing).append(number)
        violations = list(self.violations)
        violations.extend(
            FieldViolation(self._base, f"no case for {describe(suite, number)}")
            for number in missing[:MAX_MISSING_REPORTED]
        )
        if len(missing) > MAX_MISSING_REPORTED:
            violations.append(
                FieldViolation(
                    self._base,
                    f"and {len(missing) - MAX_MISSING_REPORTED} more combinations have no case",
                )
            )
        if violations:
            raise SpecError(violations)
        return own


def recorded_groups(
    suite: CheckllmSuite,
    recorded: Sequence[tuple[int, Output]],
    own: Sequence[int],
) -> list[Group]:
    """The suite's groups with the request's recorded outputs in place: `recorded` is
    each case's combination (its number) and output (`RecordedCombinations`), `own` the
    combinations the document records (`finish`). A job's index is the position of its
    case; the document's combinations follow the cases, in run order."""
    groups = suite.groups()
    jobs = [job for g in groups for job in g.jobs]  # in run order: by combination number
    for i, (number, output) in enumerate(recorded):
        jobs[number].source = Recorded(output)
        jobs[number].index = i
    for k, number in enumerate(own, len(recorded)):
        jobs[number].index = k
    return groups


@dataclass(slots=True)
class Cell:
    """One prompt × provider of a run, over its tests."""

    prompt: int
    provider: str
    cases: int = 0
    cases_passed: int = 0
    cases_errored: int = 0
    generation_cost_usd: float = 0.0

    @property
    def pass_rate(self) -> float:
        """cases_passed / cases, 0 when there are none."""
        return self.cases_passed / self.cases if self.cases else 0.0


class Matrix:
    """The prompt × provider matrix: pass counts per cell, prompt-major, provider-minor."""

    def __init__(self, suite: CheckllmSuite | None) -> None:
        """Every cell of `suite`, at zero; None: no cell until one is counted (a scoring
        worker's part of a run, merged into the run's matrix)."""
        self._cells: dict[tuple[int, str], Cell] = (
            {(j, p.id): Cell(j, p.id) for j in range(len(suite.prompts)) for p in suite.providers}
            if suite is not None
            else {}
        )

    def add(self, jr: JobResult) -> None:
        """Count one finished case."""
        _, _, prompt, provider = combination_of(jr.job)
        result = jr.result
        errored = any(s.error is not None for s in result.scores)
        self.count(prompt, provider, result.passed, errored, jr.produced.cost_usd)

    def count(
        self, prompt: int, provider: str, passed: bool, errored: bool, cost_usd: float
    ) -> None:
        """Count one case of `prompt` × `provider`: whether it passed, whether a score of
        it is an error, and what producing its output cost."""
        cell = self._cells.get((prompt, provider))
        if cell is None:
            cell = self._cells[(prompt, provider)] = Cell(prompt, provider)
        cell.cases += 1
        if passed:
            cell.cases_passed += 1
        if errored:
            cell.cases_errored += 1
        cell.generation_cost_usd += cost_usd

    def counts(self) -> dict[tuple[int, str], tuple[int, int, int, float]]:
        """Each cell's counts as plain data (cheap to send from a scoring worker): cases,
        cases passed, cases errored, generation cost, by (prompt, provider)."""
        return {
            key: (c.cases, c.cases_passed, c.cases_errored, c.generation_cost_usd)
            for key, c in self._cells.items()
        }

    def add_counts(self, counts: dict[tuple[int, str], tuple[int, int, int, float]]) -> None:
        """Add another matrix's `counts` (a scoring worker's part of the run)."""
        for (prompt, provider), (cases, passed, errored, cost) in counts.items():
            cell = self._cells.get((prompt, provider))
            if cell is None:
                cell = self._cells[(prompt, provider)] = Cell(prompt, provider)
            cell.cases += cases
            cell.cases_passed += passed
            cell.cases_errored += errored
            cell.generation_cost_usd += cost

    @property
    def cells(self) -> list[Cell]:
        """Every cell, prompt-major, provider-minor."""
        return list(self._cells.values())

    def as_dict(self) -> list[Mapping[str, object]]:
        """The cells as plain data (JSON reports)."""
        return [
            {
                "prompt": c.prompt,
                "provider": c.provider,
                "cases": c.cases,
                "cases_passed": c.cases_passed,
                "cases_errored": c.cases_errored,
                "pass_rate": c.pass_rate,
                "generation_cost_usd": c.generation_cost_usd,
            }
            for c in self.cells
        ]
