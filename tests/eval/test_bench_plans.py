"""``bench_plans.py``'s calibration floor: the error sampling alone leaves on a few
questions, printed beside the measured one so that a bar below it reads as such."""

import pytest

from _helpers import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("bench_plans")


def test_sure_confidences_leave_no_floor_and_unsure_ones_a_wide_one(bench):
    assert bench.calibration_floor([1.0] * 30) == 0.0
    assert bench.calibration_floor([]) == 0.0
    # Thirty plans each given 0.6: a perfectly calibrated confidence still misses by
    # about the spread of a binomial share over 30 (0.09 at 0.6).
    floor = bench.calibration_floor([0.6] * 30)
    assert 0.05 < floor < 0.12
    # More questions, a lower floor.
    assert bench.calibration_floor([0.6] * 300) < floor / 2
    # Deterministic for its seed.
    assert bench.calibration_floor([0.7, 0.8] * 15) == bench.calibration_floor([0.7, 0.8] * 15)
