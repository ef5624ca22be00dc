"""Loading a suite file of either format into the jobs a run produces and scores."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from scorewire.cli.common import UsageError
from scorewire.engine.spec import CompiledCheck
from scorewire.engine.summary import Gate
from scorewire.generation.generator import Group
from scorewire.generation.providers import ProviderRef
from scorewire.generation.targets import PromptTarget
from scorewire.settings import Settings
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.suites.evalstone import LoadedSuite


@dataclass(slots=True)
class RunSpec:
    """A loaded suite of either format, as jobs in groups."""

    path: Path
    format: str
    """`checkllm` or `evalstone`."""
    name: str
    description: str
    groups: list[Group]
    gate: Gate
    budget: float | None
    concurrency: int
    cache: bool = True
    providers: list[ProviderRef] = field(default_factory=list)
    """Providers some job calls."""
    judge_backend: str = "auto"
    """checkllm's `judge.backend` (gemini routes the OpenAI-compatible judge to Gemini)."""
    server_yaml: str = ""
    """evalstone: the suite as sent to a server (no imports, datasets or targets)."""
    provider_paths: dict[str, str] = field(default_factory=dict)
    """Where the file names each provider (`providers[1]`), for preflight problems."""
    judge_field: str = ""
    """checkllm: `judge.backend` when the file's `judge:` section picks the backend."""
    prompts: list[str] = field(default_factory=list)
    """checkllm: the prompt templates, in order (the matrix's rows)."""
    repeat: int = 1
    """Times each case runs (`--repeat`)."""
    fresh: bool = False
    """`--no-cache` (or `--repeat`): no cache at all, not even within the run; every
    provider and judge call is made."""
    fresh_judges: bool = False
    """`--fresh-judges` or the suite's `settings.fresh_judges`: the judges are asked again
    (no verdict cached before the run began is read), their verdicts cached as usual."""

    def check_paths(self) -> list[tuple[str, CompiledCheck]]:
        """(field path in the file, compiled check) of every check of every group."""
        out: list[tuple[str, CompiledCheck]] = []
        for g in self.groups:
            for k, check in enumerate(g.plan.checks):
                if self.format == "checkllm":
                    out.append((f"tests[{g.name.removeprefix('t')}].assert[{k}]", check))
                else:
                    out.append((f"checks.{check.name}", check))
        return out

    @property
    def uses_judge(self) -> bool:
        """Whether any check may call a judge."""
        return any(g.plan.uses_judge for g in self.groups)

    @property
    def planned(self) -> int:
        """Cases the run will score."""
        return sum(len(g.jobs) for g in self.groups)


def read_suite(path: str) -> tuple[Path, Any]:
    """The file's path and parsed YAML; SpecError for unreadable or broken YAML."""
    from scorewire.suites.yaml_document import parse_yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text") from None
    return p, parse_yaml(text)


def detect_format(data: object) -> str:
    """`checkllm` when the document has `tests:` or `prompts:`, else `evalstone`."""
    from scorewire.suites.checkllm import is_checkllm

    return "checkllm" if is_checkllm(data) else "evalstone"


def load_run(path: str, suite_name: str | None = None, settings: Settings | None = None) -> RunSpec:
    """Load a suite file of either format; SpecError (with paths) or UsageError.

    `settings.check_timeout_s` (SCOREWIRE_CHECK_TIMEOUT_S) is the per-check timeout
    unless the suite's own settings give one.
    """
    import scorewire.checks  # noqa: F401 - registers the built-in check types
    from scorewire.scoring.compiler import compile_plan
    from scorewire.scoring.plan_source import PlanSource

    p, data = read_suite(path)
    if suite_name and detect_format(data) == "checkllm":
        raise UsageError("--suite names a suite of an evalstone file; a checkllm file is one suite")
    compiled = compile_plan(PlanSource.of_file(data, str(p.parent), suite_name or ""), settings)
    if compiled.checkllm is not None:
        return _checkllm_run(p, compiled.checkllm)
    assert compiled.suite is not None
    return _evalstone_run(p, data, compiled.suite, compiled.description)


def _checkllm_run(path: Path, suite: CheckllmSuite) -> RunSpec:
    return RunSpec(
        path=path,
        format="checkllm",
        name=suite.description or path.stem,
        description=suite.description,
        groups=suite.groups(),
        gate=suite.gate,
        budget=suite.settings.budget,
        concurrency=suite.settings.effective_concurrency,
        cache=suite.settings.cache,
        fresh_judges=suite.settings.fresh_judges,
        providers=suite.called_providers(),
        judge_backend=suite.judge.backend,
        provider_paths={ref.id: f"providers[{i}]" for i, ref in enumerate(suite.providers)},
        judge_field="judge.backend" if suite.judge.backend != "auto" else "",
        prompts=list(suite.prompts),
    )


def _evalstone_run(path: Path, data: Any, suite: LoadedSuite, description: str) -> RunSpec:
    from scorewire.suites.evalstone import suite_jobs

    if suite.cases is None:
        raise UsageError(
            f"suite {suite.name!r} has no dataset: give it `dataset:` to run it from the CLI"
        )
    target = suite.target
    providers = [target.provider] if isinstance(target, PromptTarget) else []
    group = Group(suite.name, suite.plan, suite_jobs(suite))
    return RunSpec(
        path=path,
        format="evalstone",
        name=suite.name,
        description=description,
        groups=[group],
        gate=suite.gate,
        budget=suite.settings.budget,
        concurrency=suite.settings.concurrency,
        fresh_judges=suite.settings.fresh_judges,
        providers=providers,
        server_yaml=_server_yaml(data),
        provider_paths={ref.id: f"suites.{suite.name}.target.provider" for ref in providers},
    )


def _without_baseline(suite: dict[str, Any]) -> dict[str, Any]:
    """The suite without its gate's baseline: the CLI judges it over the whole run (the
    server would see only one batch of it, and perhaps not hold the baseline)."""
    gate = suite.get("gate")
    if not isinstance(gate, dict):
        return suite
    kept = {k: v for k, v in gate.items() if k not in ("baseline", "max_regression")}
    return {**suite, "gate": kept}


def _server_yaml(data: Any) -> str:
    """The suite as a server takes it: no imports (the server has its own), no datasets
    (the cases travel in the request) and no targets (outputs are produced here)."""
    doc = {k: v for k, v in data.items() if k not in ("imports", "datasets")}
    suites = doc.get("suites")
    if isinstance(suites, dict):
        doc["suites"] = {
            name: (
                _without_baseline({k: v for k, v in s.items() if k not in ("dataset", "target")})
                if isinstance(s, dict)
                else s
            )
            for name, s in suites.items()
        }
    doc = _without_baseline(doc)
    return yaml.safe_dump(json.loads(json.dumps(doc, default=str)), sort_keys=False)
