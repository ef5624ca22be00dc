"""The aggregations of a check's values, as Vertex AI's EvaluateDataset names them."""

from __future__ import annotations

import pytest
from scorewire.jobs.aggregate import aggregations, percentile


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 0.5, 0.0),  # nothing scored
        ([3.0], 0.99, 3.0),  # one value is every percentile
        ([0.0, 1.0], 0.5, 0.5),  # the median of two is their mean
        ([1.0, 2.0, 3.0, 4.0], 0.9, 3.7),  # interpolated between the two highest ranks
        ([float(n) for n in range(101)], 0.95, 95.0),  # on a rank exactly
    ],
)
def test_percentiles_interpolate_linearly(values: list[float], q: float, expected: float) -> None:
    assert percentile(sorted(values), q) == pytest.approx(expected)


def test_the_mode_of_ties_is_the_smallest() -> None:
    # 0 and 1 appear twice each: the mode is 0
    assert aggregations([1.0, 0.0, 1.0, 0.0, 0.5])["mode"] == 0.0


def test_variance_and_std_are_the_populations() -> None:
    # [0, 1, 1, 1]: mean 0.75, variance 0.1875 (divided by n, not n - 1)
    agg = aggregations([0.0, 1.0, 1.0, 1.0])
    assert agg["average"] == 0.75 and agg["variance"] == pytest.approx(0.1875)
    assert agg["std"] == pytest.approx(0.1875**0.5) and agg["count"] == 4


def test_no_values_aggregate_to_zeros() -> None:
    # a check whose every score errored or was skipped
    agg = aggregations([])
    assert agg["count"] == 0 and all(agg[k] == 0.0 for k in agg)
