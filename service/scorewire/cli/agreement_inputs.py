"""What `scorewire agreement` and `scorewire calibrate` read: a results JSON's
judge-backed scores and human labels, from a labels JSONL or a server's label store."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

from scorewire.cli.common import UsageError
from scorewire.core.model import Score, ScoreError, Spread
from scorewire.core.registry import REGISTRY
from scorewire.labels.figures import JudgedOutput
from scorewire.labels.jsonl import LabelFileError, LabelIndex, read_labels
from scorewire.labels.label_model import Label, labelled_text


def _score(raw: dict[str, Any]) -> Score:
    error = raw.get("error")
    value = raw.get("value")
    spread = raw.get("spread")
    score = Score(
        float(value) if isinstance(value, int | float) else 0.0,
        bool(raw.get("passed")),
        str(raw.get("reason") or ""),
        cost_usd=float(raw.get("cost_usd") or 0.0),
        cached=bool(raw.get("cached")),
        error=ScoreError(str(error.get("code")), str(error.get("message")))
        if isinstance(error, dict)
        else None,
    )
    if isinstance(spread, dict) and score.error is None:
        values = tuple(float(v) for v in spread.get("values") or ())
        if values:
            score.spread = Spread(values, float(spread.get("agreement") or 0.0))
    return score


def read_results(path: str) -> list[dict[str, Any]]:
    """The `results` of a results JSON; UsageError when it is not one."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None
    except ValueError as err:
        raise UsageError(f"{path} is not JSON: {err}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise UsageError(
            f'{path} is not a results JSON of `scorewire run --output` (no "results" list)'
        )
    return [r for r in doc["results"] if isinstance(r, dict)]


def judge_checks(results: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(name, type) of every judge-backed check in the results, in first-seen order."""
    import scorewire.checks  # noqa: F401  # registers the built-in check types

    seen: dict[str, str] = {}
    for r in results:
        for s in r.get("scores") or ():
            name, ctype = str(s.get("name")), str(s.get("type"))
            check_type = REGISTRY.get(ctype)
            if name not in seen and check_type is not None and check_type.uses_judge:
                seen[name] = ctype
    return list(seen.items())


def judged_outputs(results: Iterable[dict[str, Any]], check: str) -> list[JudgedOutput]:
    """One check's scores of every case that has an output."""
    out = []
    for r in results:
        if r.get("output") is None:
            continue
        text = labelled_text(str(r.get("output") or ""), r.get("output_value"))
        for s in r.get("scores") or ():
            if s.get("name") == check:
                out.append(JudgedOutput(str(r.get("sample_id") or ""), text, _score(s)))
                break
    return out


def labels_from_server(address: str, check: str, tenant: str, labeller: str) -> list[Label]:
    """Every counting label of one label check in a scorewire server (ListLabels pages)."""
    import grpc
    from scorewire.v1 import labels_pb2, labels_pb2_grpc

    channel = grpc.insecure_channel(address)
    stub = labels_pb2_grpc.LabelServiceStub(channel)
    labels: list[Label] = []
    token = ""
    try:
        while True:
            page = stub.ListLabels(
                labels_pb2.ListLabelsRequest(
                    check=check,
                    tenant=tenant,
                    labeller=labeller,
                    page_size=1000,
                    page_token=token,
                ),
                timeout=30.0,
            )
            for m in page.labels:
                labels.append(
                    Label(
                        sample_id=m.sample_id,
                        output_hash=m.output_hash,
                        passed=m.passed,
                        labeller=m.labeller,
                        created_at=m.created_at.ToDatetime(tzinfo=UTC),
                        check=m.check,
                        note=m.note,
                        tenant=m.tenant,
                    )
                )
            token = page.next_page_token
            if not token:
                return labels
    except grpc.RpcError as err:
        raise UsageError(
            f"cannot list labels from {address}: {err.code().name}: {err.details()}"
        ) from None
    finally:
        channel.close()


def _lookup(labels: Sequence[Label], check: str) -> Callable[[str, str], Sequence[Label]]:
    index = LabelIndex.build(lb for lb in labels if lb.check == check)
    return lambda sample_id, digest: index.lookup(sample_id, digest, check)


def read_inputs(
    args: argparse.Namespace,
) -> tuple[list[tuple[str, str, list[JudgedOutput]]], Any]:
    """The judged outputs of each judge-backed check (or the one `--check` names), and
    a lookup of the labels of `--label-check` by sample id and output digest."""
    results = read_results(args.results)
    checks = judge_checks(results)
    if args.check is not None:
        chosen = [c for c in checks if c[0] == args.check]
        if not chosen:
            names = ", ".join(n for n, _ in checks) or "none"
            raise UsageError(
                f"--check {args.check!r} is not a judge-backed check of {args.results} "
                f"(judge-backed checks there: {names})"
            )
        checks = chosen
    if not checks:
        raise UsageError(f"{args.results} has no judge-backed check to compare")
    if args.labels is not None:
        try:
            labels = read_labels(args.labels)
        except LabelFileError as err:
            raise UsageError(str(err)) from None
    else:
        labels = labels_from_server(args.server, args.label_check, args.tenant, args.labeller)
    lookup = _lookup(labels, args.label_check)
    return [(n, t, judged_outputs(results, n)) for n, t in checks], lookup
