"""Recorded runs as the RPCs see them: who sees which runs, the run fields of a request,
the suite as sent, and the store's failures as statuses.
Recording itself, and the baseline gate, are the scoring layer's
(`scorewire.scoring.recording`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import json_format
from scorewire.core.errors import FieldViolation
from scorewire.runs import RunInfo, RunRecorder, RunsUnavailable
from scorewire.scoring.recording import find_run
from scorewire.server.security import Principal, Role
from scorewire.server.status import invalid_argument, resource_exhausted, unavailable
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

# ---- summaries as stored --------------------------------------------------------------


def summary_pb(d: Mapping[str, Any], run_id: str) -> pb.RunSummary:
    """A stored summary as the RunSummary message."""
    gate = d.get("gate", {})
    return pb.RunSummary(
        cases=d["cases"],
        cases_passed=d["cases_passed"],
        passed=d["passed"],
        failed=d["failed"],
        errored=d["errored"],
        skipped=d["skipped"],
        pass_rate=d["pass_rate"],
        mean_score=d["mean_score"],
        error_rate=d["error_rate"],
        cost_usd=d["cost_usd"],
        unpriced=d["unpriced"],
        gate_passed=gate.get("passed", False),
        gate_reasons=gate.get("reasons", []),
        checks=[pb.CheckSummary(**c) for c in d["checks"]],
        run_id=run_id,
    )


# ---- who sees which runs ------------------------------------------------------------------


def visible_tenant(who: Principal | None) -> str | None:
    """The tenant whose runs `who` sees: its own; None (every tenant) for admin or no auth."""
    if who is None or who.role == Role.ADMIN:
        return None
    return who.name


async def visible_run(recorder: RunRecorder, run_id: str, who: Principal | None) -> RunInfo | None:
    """The run, when it exists and `who` may see it."""
    try:
        return await find_run(recorder, run_id, visible_tenant(who))
    except RunsUnavailable as err:
        raise unavailable(err) from None


# ---- one recorded call ------------------------------------------------------------------


def check_run_fields(
    run_name: str, labels: Mapping[str, str], settings: Settings, base: str
) -> dict[str, str]:
    """The request's run name and labels, within the settings' limits."""
    prefix = f"{base}." if base else ""
    longest = settings.max_run_label_chars
    if len(labels) > settings.max_run_labels:
        raise resource_exhausted(
            f"{prefix}labels",
            f"{len(labels)} labels exceed max_run_labels ({settings.max_run_labels})",
        )
    violations = []
    if len(run_name) > longest:
        raise resource_exhausted(
            f"{prefix}run_name", f"longer than max_run_label_chars ({longest} characters)"
        )
    if "\x00" in run_name:
        violations.append(FieldViolation(f"{prefix}run_name", "must not contain NUL characters"))
    for k, v in labels.items():
        where = f"{prefix}labels[{json.dumps(k, ensure_ascii=False)}]"
        if not k:
            violations.append(FieldViolation(where, "label keys must not be empty"))
        if len(k) > longest or len(v) > longest:
            raise resource_exhausted(
                where, f"key or value longer than max_run_label_chars ({longest} characters)"
            )
        if "\x00" in k or "\x00" in v:
            violations.append(FieldViolation(where, "must not contain NUL characters"))
    if violations:
        raise invalid_argument(violations)
    return dict(labels)


def suite_text(
    suite_yaml: str,
    suite_name: str,
    checks: Sequence[pb.CheckSpec],
    compact: Sequence[str],
    gate: pb.Gate | None,
) -> str:
    """The suite as sent: the YAML document, or the checks, compact lines and gate as JSON."""
    if suite_yaml:
        return suite_yaml
    doc: dict[str, Any] = {
        "checks": [json_format.MessageToDict(c, preserving_proto_field_name=True) for c in checks],
        "compact": list(compact),
    }
    if suite_name:
        doc["suite_name"] = suite_name
    if gate is not None:
        doc["gate"] = json_format.MessageToDict(gate, preserving_proto_field_name=True)
    return json.dumps(doc, ensure_ascii=False, sort_keys=True)
