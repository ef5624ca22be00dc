"""The suite a request describes: an evalstone YAML document, or structured and compact
checks (Score, RunSuite and ValidateSuite, and the CLI's `--server` mode alike).

Problems in the YAML are reported under `suite_yaml.` (`suite_yaml.checks.short.max_wrds`),
the request's own checks under `checks[i]` and `compact[i]`, all of them at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from scorewire.core.cost import LimitExceeded, RequestMeter, metering
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.registry import Registry
from scorewire.engine.metering import measure_specs
from scorewire.engine.runner import Plan
from scorewire.engine.spec import CheckSpec, compile_check
from scorewire.engine.summary import Gate
from scorewire.suites.evalstone import LoadedSuite, RunSettings, load_suite_data
from scorewire.suites.evalstone_checks import compile_compact, parse_check_spec
from scorewire.suites.yaml_document import Parsed, parse_yaml


def load_request_suite(
    *,
    suite_yaml: str = "",
    suite_name: str = "",
    checks: Sequence[CheckSpec] = (),
    compact: Sequence[str] = (),
    gate: Gate | None = None,
    registry: Registry | None = None,
    max_checks: int | None = None,
    meter: RequestMeter | None = None,
    check_timeout_s: float | None = None,
    parsed: Parsed | None = None,
) -> LoadedSuite:
    """The suite a request describes: a YAML document, or structured and compact checks.

    Used by the server and the CLI alike; imports in a YAML document are refused, since
    a request must never name code for the server to run. With a `meter`, every check's
    cost is charged before it compiles and `LimitExceeded` names the first limit passed.
    `check_timeout_s` is the per-check timeout unless the suite's settings give one;
    `parsed`: the document, when `request_format` has parsed it.
    """
    with metering(meter):
        data: object = None
        if parsed is not None:
            data = parsed.data
        elif suite_yaml.strip():
            try:
                data = parse_yaml(suite_yaml)
            except SpecError as err:
                raise SpecError(
                    [FieldViolation(_yaml_path(v.field), v.description) for v in err.violations]
                ) from None
            except LimitExceeded as err:
                raise LimitExceeded(err.setting, _yaml_path(err.field), err.message) from None
        if meter is not None:
            measure_specs(meter, _request_specs(data, checks, compact))
        return _load_request_suite(
            bool(suite_yaml.strip()),
            data,
            suite_name,
            checks,
            compact,
            gate,
            registry,
            max_checks,
            check_timeout_s,
        )


def _request_specs(
    data: object, checks: Sequence[CheckSpec], compact: Sequence[str]
) -> Iterator[tuple[CheckSpec, str]]:
    """Every check spec a request holds, with its path, parsed but not compiled.

    Specs that do not parse are skipped: compiling reports them with their problems.
    """
    from scorewire.suites.compact_lines import compact_specs

    for i, spec in enumerate(checks):
        yield spec, join_path("checks", i)
    yield from compact_specs(list(compact), "compact")
    if not isinstance(data, Mapping):
        return
    keyed = data.get("checks")
    if isinstance(keyed, Mapping):
        for key, raw in keyed.items():
            path = join_path("checks", str(key))
            try:
                spec = parse_check_spec(raw, path)
            except SpecError:
                continue
            spec.name = spec.name or str(key)
            yield spec, _yaml_path(path)
    suites = data.get("suites")
    if isinstance(suites, Mapping):
        for name, raw in suites.items():
            if isinstance(raw, Mapping):
                path = join_path(join_path("suites", str(name)), "compact")
                yield from compact_specs(raw.get("compact"), _yaml_path(path))


def _load_request_suite(
    has_yaml: bool,
    data: object,
    suite_name: str,
    checks: Sequence[CheckSpec],
    compact: Sequence[str],
    gate: Gate | None,
    registry: Registry | None,
    max_checks: int | None,
    check_timeout_s: float | None,
) -> LoadedSuite:
    violations: list[FieldViolation] = []
    if has_yaml:
        if checks:
            violations.append(
                FieldViolation("checks", "give either suite_yaml or checks, not both")
            )
        try:
            loaded = load_suite_data(data, registry=registry, allow_imports=False)
            selected = loaded.select(suite_name or None)
        except SpecError as err:
            raise SpecError(
                [FieldViolation(_yaml_path(v.field), v.description) for v in err.violations]
                + violations
            ) from None
        except LimitExceeded as err:
            raise LimitExceeded(err.setting, _yaml_path(err.field), err.message) from None
        compiled = list(selected.plan.checks)
        gate = selected.gate
        settings = selected.settings
        cases = selected.cases
        name = selected.name
    else:
        compiled = []
        for i, spec in enumerate(checks):
            try:
                compiled.append(compile_check(spec, join_path("checks", i), registry=registry))
            except SpecError as err:
                violations.extend(err.violations)
        settings, cases, name = RunSettings(), None, suite_name or "request"
        gate = gate or Gate()
    blank = [i for i, line in enumerate(compact) if not line.strip()]
    # In a request every entry is a check with a result of its own: a blank one would
    # silently shift the results against the caller's list, so it is an error here.
    violations.extend(FieldViolation(join_path("compact", i), "empty compact check") for i in blank)
    if compact and not blank:
        compiled.extend(compile_compact(list(compact), "compact", violations))
    if not compiled and not violations:
        violations.append(FieldViolation("checks", "no checks: give suite_yaml, checks or compact"))
    if max_checks is not None and len(compiled) > max_checks:
        violations.append(
            FieldViolation("checks", f"{len(compiled)} checks exceed the limit of {max_checks}")
        )
    if violations:
        raise SpecError(violations)
    plan = Plan(compiled, settings.timeout_s(check_timeout_s))
    return LoadedSuite(name, plan, gate, settings, cases)


def _yaml_path(field: str) -> str:
    return f"suite_yaml.{field}" if field and field != "suite_name" else (field or "suite_yaml")
