"""How far a judge agrees with people: pairs, accuracy, Cohen's kappa, the confusion matrix.

A *pair* is one output that a judge-backed check scored (without an error) and people
labelled: the same sample id and the exact output text (`output_hash`). The human verdict
is the labels' verdict (`labels.label_model.verdict`: a pass only when every labeller passed).
From the pairs:

- accuracy: the share of pairs where judge and people agree;
- Cohen's kappa: (p_o − p_e) / (1 − p_e), the agreement beyond chance, where p_e is the
  agreement two raters with these pass rates would reach by chance. When both gave one
  and the same verdict to every pair, p_e = 1 and kappa is undefined (None), never 0 or 1;
- its confidence interval: a percentile bootstrap over pairs, seeded. Resampling pairs
  with replacement draws the four cells of the confusion matrix from a multinomial with
  the observed cell shares, which is how it is computed (numpy, one draw per resample);
  resamples where kappa is undefined are left out, and their count reported;
- the disagreements, most confident first: confidence is the share of the judge's
  samples that agreed with its verdict (1 for a single sample) times how far its value
  lies toward that verdict (its value for a pass, 1 − value for a fail).

Zero pairs is `NoPairs`: an error, never a kappa of 0. The inputs are plain iterables of
`JudgedOutput`, so a recorded run's results can be plugged in as well as a results file's
or scores computed now; labels come through a lookup function (a labels file's index, or
what a label store returned). A server pairs one output at a time instead (`Pairing`), so
that it can let other requests run in between.

Pairs are kept as numbers (the judge's value and both verdicts: ten bytes a pair), and of
the disagreements only the most confident `KEPT_DISAGREEMENTS` whole, so the memory of a
pairing grows by bytes per pair, not by the outputs' text.

Calibration (`calibrate`) re-decides the pairs at other thresholds from the values the
judge already gave (a value does not depend on the threshold), so it makes no judge call.
It sorts the values once and finds each threshold's confusion matrix by binary search:
O((n + t) log n) for n pairs and t thresholds, not a pass over the pairs per threshold.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scorewire.core.model import Score
from scorewire.labels.label_model import Label, output_hash, verdict

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples when a request asks for none."""
DEFAULT_CONFIDENCE = 0.95
"""Confidence level of kappa's interval when a request gives none."""
DEFAULT_MAX_DISAGREEMENTS = 20
"""Disagreements listed per check when a request gives no number."""
KEPT_DISAGREEMENTS = 1000
"""Disagreements a pairing keeps whole (the most confident): the most one check may list."""
_EPSILON = 1e-9


class NoPairs(Exception):
    """No scored output has a human label to compare with: there is nothing to measure."""


@dataclass(frozen=True, slots=True)
class JudgedOutput:
    """One check's score of one case, with what identifies the output for labels."""

    sample_id: str
    output: str
    """The labelled text of the output (`labels.labelled_text`)."""
    score: Score


@dataclass(frozen=True, slots=True)
class Pair:
    """One output with a judge verdict and a human verdict."""

    sample_id: str
    output: str
    judge_passed: bool
    judge_value: float
    judge_reason: str
    confidence: float
    human_passed: bool
    human_note: str


@dataclass(frozen=True, slots=True)
class Confusion:
    """Pairs by judge verdict (first) and human verdict (second)."""

    pass_pass: int = 0
    pass_fail: int = 0
    fail_pass: int = 0
    fail_fail: int = 0

    @property
    def total(self) -> int:
        """Every pair."""
        return self.pass_pass + self.pass_fail + self.fail_pass + self.fail_fail

    def accuracy(self) -> float:
        """The share of pairs where judge and people agree (0 for no pairs)."""
        return (self.pass_pass + self.fail_fail) / self.total if self.total else 0.0

    def f1(self) -> float | None:
        """F1 of the judge's passes against people's (a human pass is the positive class):
        2·TP / (2·TP + FP + FN); None when neither ever passed (no positive to find)."""
        found = 2 * self.pass_pass
        denominator = found + self.pass_fail + self.fail_pass
        return found / denominator if denominator else None

    def base_rate(self) -> float:
        """The share of pairs people passed (0 for no pairs): what accuracy and F1 are
        read against (always-pass scores this accuracy)."""
        return (self.pass_pass + self.fail_pass) / self.total if self.total else 0.0


@dataclass(frozen=True, slots=True)
class Agreement:
    """The agreement of one judge-backed check with the labels."""

    pairs: int
    accuracy: float
    kappa: float | None
    """None when undefined (chance agreement 1)."""
    interval: tuple[float, float] | None
    """The bootstrap interval of kappa at `confidence`; None when undefined."""
    confidence: float
    resamples: int
    """Resamples the interval is made of (those where kappa is defined)."""
    confusion: Confusion
    disagreements: list[Pair]
    """At most the asked number, most confident first."""
    unlabelled: int
    errored: int
    cost_usd: float
    """Dollars the paired scores cost."""
    f1: float | None = None
    """F1 with a human pass as the positive class; None when undefined (`Confusion.f1`)."""
    base_rate: float = 0.0
    """The share of pairs people passed."""
    numeric: NumericAgreement | None = None
    """The judge's values against people's verdicts as numbers (`numeric_agreement`)."""

    @property
    def band(self) -> str:
        """Kappa's Landis–Koch interpretation band (`kappa_band`)."""
        return kappa_band(self.kappa)


@dataclass(frozen=True, slots=True)
class NumericAgreement:
    """The judge's values (0..1) against people's verdicts as numbers (pass 1, fail 0)."""

    pearson: float | None
    """Pearson's r (point-biserial); None when either side never varies."""
    spearman: float | None
    """Spearman's rho (Pearson's r of average ranks); None when either never varies."""
    mae: float
    """Mean absolute error of the values against the verdicts."""


LANDIS_KOCH = (
    (0.0, "poor"),
    (0.2, "slight"),
    (0.4, "fair"),
    (0.6, "moderate"),
    (0.8, "substantial"),
    (1.0, "almost perfect"),
)
"""Landis and Koch's (1977) bands of kappa: below 0 poor, then up to each bound."""


def kappa_band(kappa: float | None) -> str:
    """Kappa's Landis–Koch band (`poor` below 0 ... `almost perfect` above 0.8), or
    `undefined` when kappa is."""
    if kappa is None or math.isnan(kappa):
        return "undefined"
    for bound, name in LANDIS_KOCH:
        if kappa <= bound + _EPSILON:
            return name
    return LANDIS_KOCH[-1][1]


def _pearson(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> float | None:
    dx, dy = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float(dx @ dx) * float(dy @ dy))
    return float(dx @ dy) / denominator if denominator > _EPSILON else None


def _ranks(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Average ranks (ties share the mean of their positions)."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.arange(1, len(x) + 1, dtype=np.float64)
    values, inverse = np.unique(x, return_inverse=True)
    sums = np.bincount(inverse, weights=ranks, minlength=len(values))
    counts = np.bincount(inverse, minlength=len(values))
    return np.asarray((sums / counts)[inverse], dtype=np.float64)


def numeric_agreement(paired: Paired) -> NumericAgreement:
    """Pearson, Spearman and MAE of the judge's values against people's verdicts (1 for
    a pass, 0 for a fail): how well the value itself, not only the verdict at the
    threshold, tracks people."""
    values = np.frombuffer(paired.values, dtype=np.float64)
    human = np.frombuffer(paired.human_passed, dtype=np.int8).astype(np.float64)
    return NumericAgreement(
        pearson=_pearson(values, human),
        spearman=_pearson(_ranks(values), _ranks(human)),
        mae=float(np.abs(values - human).mean()) if len(values) else 0.0,
    )


@dataclass(frozen=True, slots=True)
class CalibrationPoint:
    """The agreement at one threshold."""

    threshold: float
    accuracy: float
    kappa: float | None
    confusion: Confusion


@dataclass(frozen=True, slots=True)
class Calibration:
    """Agreement at each candidate threshold and the recommended one."""

    pairs: int
    points: list[CalibrationPoint]
    recommended: CalibrationPoint
    cost_usd: float
    cost_per_pair_usd: float
    scale: int | None = None
    """Levels of the judge's scale; None when it is no level check (or not known)."""
    pass_level: int | None = None
    """The level (1..scale) whose bar agrees best with the labels; None without `scale`."""
    pass_level_point: CalibrationPoint | None = None
    """The agreement at `pass_level`'s bar ((pass_level − 1) / (scale − 1))."""


@dataclass(slots=True)
class Paired:
    """The outcome of matching scores with labels: each pair as numbers, in pairing order,
    and the most confident disagreements whole."""

    values: array[float] = field(default_factory=lambda: array("d"))
    """The judge's value of each pair."""
    judge_passed: array[int] = field(default_factory=lambda: array("b"))
    """1 where the judge passed the pair's output, else 0."""
    human_passed: array[int] = field(default_factory=lambda: array("b"))
    """1 where people passed it (`labels.verdict`), else 0."""
    disagreements: list[Pair] = field(default_factory=list)
    """The most confident disagreements, first to last, as many as the pairing kept."""
    unlabelled: int = 0
    errored: int = 0
    cost_usd: float = 0.0

    @property
    def pairs(self) -> int:
        """How many outputs have both a judge verdict and a human one."""
        return len(self.values)


LabelLookup = Callable[[str, str], Sequence[Label]]
"""(sample_id, output_hash) -> the counting label of each labeller (empty: unlabelled)."""


def cohen_kappa(c: Confusion) -> float | None:
    """Cohen's kappa of a 2×2 confusion matrix; None when undefined (or no pairs)."""
    n = c.total
    if n == 0:
        return None
    p_o = (c.pass_pass + c.fail_fail) / n
    judge_pass = (c.pass_pass + c.pass_fail) / n
    human_pass = (c.pass_pass + c.fail_pass) / n
    p_e = judge_pass * human_pass + (1 - judge_pass) * (1 - human_pass)
    if p_e >= 1 - _EPSILON:
        return None
    return (p_o - p_e) / (1 - p_e)


def bootstrap_kappa(
    c: Confusion, *, resamples: int, seed: int, confidence: float
) -> tuple[tuple[float, float] | None, int]:
    """The percentile interval of kappa over `resamples` bootstrap resamples of the pairs,
    and how many resamples had a defined kappa."""
    n = c.total
    if n == 0 or resamples <= 0:
        return None, 0
    cells = np.array([c.pass_pass, c.pass_fail, c.fail_pass, c.fail_fail], dtype=np.float64)
    draws = np.random.default_rng(seed).multinomial(n, cells / n, size=resamples)
    a, b, cc, d = (draws[:, i].astype(np.float64) for i in range(4))
    p_o = (a + d) / n
    jp = (a + b) / n
    hp = (a + cc) / n
    p_e = jp * hp + (1 - jp) * (1 - hp)
    defined = p_e < 1 - _EPSILON
    if not defined.any():
        return None, 0
    kappas = (p_o[defined] - p_e[defined]) / (1 - p_e[defined])
    tail = (1 - confidence) / 2
    low, high = np.quantile(kappas, [tail, 1 - tail])
    return (float(low), float(high)), int(defined.sum())


def _confidence(score: Score) -> float:
    """The share of samples agreeing with the verdict times how far the value lies toward
    it (the value for a pass, 1 − value for a fail)."""
    toward = score.value if score.passed else 1.0 - score.value
    agreement = score.spread.agreement if score.spread is not None else 1.0
    return agreement * max(0.0, min(1.0, toward))


def _note(labels: Sequence[Label]) -> str:
    return "; ".join(f"{lb.labeller}: {lb.note}" for lb in labels if lb.note)


def _most_confident_first(p: Pair) -> tuple[float, str]:
    return (-p.confidence, p.sample_id)


class Pairing:
    """Matches scores with labels one output at a time (`add`); `paired()` is the outcome.

    Of the disagreements it keeps the `keep` most confident (ties: by sample id, then in
    the order added), pruning as it goes, so memory stays a few bytes per pair.
    """

    __slots__ = ("_candidates", "_keep", "_out")

    def __init__(self, keep: int = KEPT_DISAGREEMENTS) -> None:
        self._out = Paired()
        self._keep = max(0, keep)
        self._candidates: list[Pair] = []

    def add(self, sample_id: str, output: str, score: Score, labels: Sequence[Label]) -> None:
        """Pair one score with the counting labels of its sample and exact output (none:
        unlabelled; a score with an error: errored)."""
        out = self._out
        if not labels:
            out.unlabelled += 1
            return
        if score.error is not None:
            out.errored += 1
            return
        human = verdict(labels).passed
        out.cost_usd += score.cost_usd
        out.values.append(score.value)
        out.judge_passed.append(score.passed)
        out.human_passed.append(human)
        if score.passed == human:
            return
        self._candidates.append(
            Pair(
                sample_id=sample_id,
                output=output,
                judge_passed=score.passed,
                judge_value=score.value,
                judge_reason=score.reason,
                confidence=_confidence(score),
                human_passed=human,
                human_note=_note(labels),
            )
        )
        if len(self._candidates) > 2 * self._keep:
            self._prune()

    def _prune(self) -> None:
        # A stable sort: equal keys stay in the order they were added.
        self._candidates.sort(key=_most_confident_first)
        del self._candidates[self._keep :]

    def paired(self) -> Paired:
        """Every pair added so far, and the disagreements kept, most confident first."""
        self._prune()
        self._out.disagreements = list(self._candidates)
        return self._out


def pair_up(
    judged: Iterable[JudgedOutput], labels_for: LabelLookup, *, keep: int = KEPT_DISAGREEMENTS
) -> Paired:
    """Match every score with the labels of its sample and exact output; of the
    disagreements keep the `keep` most confident."""
    pairing = Pairing(keep)
    for j in judged:
        labels = labels_for(j.sample_id, output_hash(j.output)) if j.sample_id else ()
        pairing.add(j.sample_id, j.output, j.score, labels)
    return pairing.paired()


def _require_pairs(paired: Paired) -> None:
    if not paired.values:
        why = []
        if paired.unlabelled:
            why.append(f"{paired.unlabelled} scored outputs have no label")
        if paired.errored:
            why.append(f"{paired.errored} labelled outputs scored an error")
        detail = f" ({'; '.join(why)})" if why else " (no scored outputs)"
        raise NoPairs(
            "no output has both a judge verdict and a human label for the same sample id "
            f"and exact output text{detail}: agreement cannot be measured"
        )


def agreement(
    paired: Paired,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    max_disagreements: int = DEFAULT_MAX_DISAGREEMENTS,
) -> Agreement:
    """The agreement figures of matched pairs; NoPairs when there are none. At most
    `max_disagreements` are listed, and no more than the pairing kept."""
    _require_pairs(paired)
    judge, human = _verdicts(paired)
    confusion = _confusion(judge, human)
    kappa = cohen_kappa(confusion)
    interval, used = (
        bootstrap_kappa(confusion, resamples=resamples, seed=seed, confidence=confidence)
        if kappa is not None
        else (None, 0)
    )
    return Agreement(
        pairs=paired.pairs,
        accuracy=confusion.accuracy(),
        kappa=kappa,
        interval=interval,
        confidence=confidence,
        resamples=used,
        confusion=confusion,
        disagreements=paired.disagreements[:max_disagreements],
        unlabelled=paired.unlabelled,
        errored=paired.errored,
        cost_usd=paired.cost_usd,
        f1=confusion.f1(),
        base_rate=confusion.base_rate(),
        numeric=numeric_agreement(paired),
    )


def _verdicts(paired: Paired) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The judge's and people's verdicts of every pair, as boolean arrays."""
    judge = np.frombuffer(paired.judge_passed, dtype=np.int8) != 0
    human = np.frombuffer(paired.human_passed, dtype=np.int8) != 0
    return judge, human


def _confusion(judge: npt.NDArray[np.bool_], human: npt.NDArray[np.bool_]) -> Confusion:
    """The confusion matrix of paired verdicts (counted in numpy: no Python per pair)."""
    pass_pass = int(np.count_nonzero(judge & human))
    pass_fail = int(np.count_nonzero(judge)) - pass_pass
    fail_pass = int(np.count_nonzero(human)) - pass_pass
    return Confusion(
        pass_pass, pass_fail, fail_pass, len(judge) - pass_pass - pass_fail - fail_pass
    )


def candidate_thresholds(paired: Paired, thresholds: Sequence[float] = ()) -> list[float]:
    """The thresholds a calibration tries, ascending: the given ones, or else every
    distinct value the judge gave (for a level scale, each level it used)."""
    if thresholds:
        return sorted(set(thresholds))
    return [float(v) for v in np.unique(np.frombuffer(paired.values, dtype=np.float64))]


def calibrate(
    paired: Paired, thresholds: Sequence[float] = (), scale: int | None = None
) -> Calibration:
    """Agreement at each threshold (pass at value ≥ threshold) and the best one.

    Without thresholds, every distinct value the judge gave is a candidate (for a level
    scale, each level it used). The recommendation has the highest kappa (an undefined
    kappa ranks lowest); ties go to the higher accuracy, then the lower threshold.

    With the `scale` of a level judge, every level's bar ((level − 1) / (scale − 1)) is
    tried as well, whatever values the judge gave, and the best (by the same rule) is
    proposed as the `pass_level`: the setting that states the threshold in the judge's
    own levels.
    """
    _require_pairs(paired)
    points = _points(paired, candidate_thresholds(paired, thresholds))
    level, level_point = None, None
    if scale is not None and scale >= 2:
        bars = [(lv - 1) / (scale - 1) for lv in range(1, scale + 1)]
        level_point = _best(_points(paired, bars))
        level = round(level_point.threshold * (scale - 1)) + 1
    return Calibration(
        pairs=paired.pairs,
        points=points,
        recommended=_best(points),
        cost_usd=paired.cost_usd,
        cost_per_pair_usd=paired.cost_usd / paired.pairs,
        scale=scale if level is not None else None,
        pass_level=level,
        pass_level_point=level_point,
    )


def _best(points: Sequence[CalibrationPoint]) -> CalibrationPoint:
    """The highest kappa (undefined ranks lowest); ties: higher accuracy, lower threshold."""
    return max(
        points,
        key=lambda pt: (
            -math.inf if pt.kappa is None else pt.kappa,
            pt.accuracy,
            -pt.threshold,
        ),
    )


def _points(paired: Paired, candidates: Sequence[float]) -> list[CalibrationPoint]:
    """The agreement at each candidate threshold.

    The values are sorted once, those people passed once more; a threshold's judge fails
    are then the values below it (a binary search) and its failed human passes the same
    in the second list: the confusion matrix without a pass over the pairs.
    """
    values = np.frombuffer(paired.values, dtype=np.float64)
    _, human = _verdicts(paired)
    # A NaN value never passes (NaN >= t is false): it sorts first, as -inf.
    values = np.where(np.isnan(values), -np.inf, values)
    ordered, human_ordered = np.sort(values), np.sort(values[human])
    # A pass is a value >= t - epsilon: the fails are the values before that cut.
    cuts = np.array(candidates, dtype=np.float64) - _EPSILON
    fails = np.searchsorted(ordered, cuts, side="left").tolist()
    failed_passes = np.searchsorted(human_ordered, cuts, side="left").tolist()
    n, human_passes = len(ordered), len(human_ordered)
    points = []
    for t, fail, fail_pass in zip(candidates, fails, failed_passes, strict=True):
        pass_pass = human_passes - fail_pass
        confusion = Confusion(pass_pass, n - fail - pass_pass, fail_pass, fail - fail_pass)
        points.append(CalibrationPoint(t, confusion.accuracy(), cohen_kappa(confusion), confusion))
    return points
