"""A recorded run's figures (`scorewire agreement RUN_ID --server`): the server's
LabelService Agreement or Calibrate reads the run's judge verdicts and pairs them with
its label store; the answers come back as the library's `Agreement` and `Calibration`."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from scorewire.cli.common import UsageError
from scorewire.labels.figures import (
    Agreement,
    Calibration,
    CalibrationPoint,
    Confusion,
    NumericAgreement,
    Pair,
)

_RUN_ID = re.compile(r"run_[0-9a-f]{20}")


def is_run_id(text: str) -> bool:
    """Whether the RESULTS argument names a recorded run: a run id, and no such file."""
    return _RUN_ID.fullmatch(text) is not None and not Path(text).exists()


def _confusion_from_pb(m: Any) -> Confusion:
    return Confusion(
        m.judge_pass_human_pass,
        m.judge_pass_human_fail,
        m.judge_fail_human_pass,
        m.judge_fail_human_fail,
    )


def _agreement_from_pb(m: Any) -> Agreement:
    return Agreement(
        pairs=m.pairs,
        accuracy=m.accuracy,
        kappa=m.kappa if m.HasField("kappa") else None,
        interval=(m.kappa_low, m.kappa_high) if m.HasField("kappa") else None,
        confidence=m.confidence,
        resamples=m.resamples,
        confusion=_confusion_from_pb(m.confusion),
        disagreements=[
            Pair(
                sample_id=d.sample_id,
                output=d.output,
                judge_passed=d.judge_passed,
                judge_value=d.judge_value,
                judge_reason=d.judge_reason,
                confidence=d.confidence,
                human_passed=d.human_passed,
                human_note=d.human_note,
            )
            for d in m.disagreements
        ],
        unlabelled=m.unlabelled,
        errored=m.errored,
        cost_usd=m.cost_usd,
        f1=m.f1 if m.HasField("f1") else None,
        base_rate=m.base_rate,
        numeric=NumericAgreement(
            pearson=m.pearson if m.HasField("pearson") else None,
            spearman=m.spearman if m.HasField("spearman") else None,
            mae=m.mae,
        ),
    )


def _point_from_pb(p: Any) -> CalibrationPoint:
    return CalibrationPoint(
        p.threshold,
        p.accuracy,
        p.kappa if p.HasField("kappa") else None,
        _confusion_from_pb(p.confusion),
    )


def _calibration_from_pb(m: Any) -> Calibration:
    points = [_point_from_pb(p) for p in m.points]
    best = next(
        (p for p in points if p.threshold == m.recommended_threshold),
        CalibrationPoint(m.recommended_threshold, 0.0, None, Confusion()),
    )
    level = m.HasField("recommended_pass_level")
    return Calibration(
        m.pairs,
        points,
        best,
        m.cost_usd,
        m.cost_per_pair_usd,
        scale=m.scale or None,
        pass_level=m.recommended_pass_level if level else None,
        pass_level_point=_point_from_pb(m.pass_level_point) if level else None,
    )


def _run_request(args: argparse.Namespace) -> Any:
    from scorewire.v1 import labels_pb2

    if args.server is None:
        raise UsageError(f"{args.results} is a run id: give --server, the server that recorded it")
    return labels_pb2.AgreementRequest(
        run_id=args.results,
        check=args.check or "",
        labels=labels_pb2.LabelFilter(
            check=args.label_check, labeller=args.labeller, tenant=args.tenant
        ),
        options=labels_pb2.AgreementOptions(
            resamples=getattr(args, "resamples", 0),
            seed=getattr(args, "seed", 0),
            confidence=getattr(args, "confidence", 0.0),
            max_disagreements=getattr(args, "max_disagreements", 0),
        ),
    )


def _call_server(args: argparse.Namespace, method: str, request: Any) -> Any:
    """One LabelService call to `--server`; UsageError with the status otherwise."""
    import grpc
    from scorewire.v1 import labels_pb2_grpc

    channel = grpc.insecure_channel(args.server)
    try:
        stub = labels_pb2_grpc.LabelServiceStub(channel)
        return getattr(stub, method)(request, timeout=300.0)
    except grpc.RpcError as err:
        raise UsageError(f"{args.server} answered {err.code().name}: {err.details()}") from None
    finally:
        channel.close()


def recorded_agreements(args: argparse.Namespace) -> list[tuple[str, str, str, Agreement]]:
    """(name, type, judge configuration, agreement) of each judge-backed check of the run
    `args.results`."""
    resp = _call_server(args, "Agreement", _run_request(args))
    return [(c.name, c.type, c.judge_model, _agreement_from_pb(c)) for c in resp.checks]


def recorded_calibrations(args: argparse.Namespace) -> list[tuple[str, str, str, Calibration]]:
    """(name, type, judge configuration, calibration) of each judge-backed check of the
    run `args.results`."""
    from scorewire.v1 import labels_pb2

    request = labels_pb2.CalibrateRequest(
        agreement=_run_request(args), thresholds=args.thresholds or []
    )
    resp = _call_server(args, "Calibrate", request)
    return [(c.name, c.type, c.judge_model, _calibration_from_pb(c)) for c in resp.checks]
