"""The collector's full passes wait while live streams play: none starts by itself, a due one runs at most once
per ``max_defer_s`` when the owner checks, and the collector's own threshold is back once nothing plays."""

import asyncio
import gc

import pytest

from playback.core import live_pacer
from playback.core.gc_deferral import FullCollectionDeferral


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    yield saved
    gc.set_threshold(*saved)


def _full_passes() -> int:
    return gc.get_stats()[2]["collections"]


def _young_churn() -> None:
    junk = [[[] for _ in range(20)] for _ in range(2000)]  # enough young objects for many young passes
    del junk


def test_no_full_pass_starts_by_itself_while_busy_and_the_threshold_is_restored_when_idle(thresholds):
    gc.set_threshold(50, 1, 1)  # without the deferral: a full pass every other middle pass
    before = _full_passes()
    _young_churn()
    assert _full_passes() > before  # the control: this churn sets off full passes when nothing defers them
    deferral = FullCollectionDeferral(max_defer_s=60.0)
    deferral.busy(now=0.0)
    assert deferral.deferring and gc.get_threshold()[:2] == (50, 1)
    before = _full_passes()
    _young_churn()
    assert _full_passes() == before  # young passes ran, no full one
    assert gc.get_count()[2] > 1  # one is due
    assert not deferral.check(now=30.0) and _full_passes() == before  # not before max_defer_s
    deferral.idle()
    assert not deferral.deferring and gc.get_threshold() == (50, 1, 1)


def test_a_due_full_pass_runs_at_most_once_per_max_defer_s_and_only_when_due(thresholds):
    gc.set_threshold(50, 1, 1)
    deferral = FullCollectionDeferral(max_defer_s=10.0)
    deferral.busy(now=100.0)
    _young_churn()
    before = _full_passes()
    assert deferral.check(now=110.0) and _full_passes() == before + 1 and deferral.forced == 1
    assert deferral.deferring  # and it defers again
    assert not deferral.check(now=115.0)  # not again within max_defer_s
    gc.collect(2)  # counts reset: nothing due at the next check
    assert not deferral.check(now=121.0) and deferral.forced == 1
    deferral.idle()


def test_a_deferral_of_zero_leaves_the_collector_alone(thresholds):
    deferral = FullCollectionDeferral(max_defer_s=0.0)
    deferral.busy(now=0.0)
    assert not deferral.deferring and gc.get_threshold() == thresholds
    assert not deferral.check(now=1e9)


async def test_the_shared_pacer_defers_while_its_streams_play_and_restores_after_the_last(thresholds):
    shared = live_pacer.SharedPacer(asyncio.get_running_loop(), gc_defer_s=60.0)
    sent = []

    def write(seq, late_ms):
        sent.append(seq)

    first = shared.start([0.0, 10.0, 20.0], write)
    second = shared.start([0.0, 40.0], write)
    assert shared.gc.deferring and gc.get_threshold()[2] > thresholds[2]
    await shared.wait(first)
    assert shared.gc.deferring  # one stream still plays
    await shared.wait(second)
    assert not shared.gc.deferring and gc.get_threshold() == thresholds
    assert len(sent) == 5


def test_the_deferral_is_read_from_the_environment_and_a_bad_value_is_named(monkeypatch):
    monkeypatch.delenv(live_pacer.GC_DEFER_ENV, raising=False)
    assert live_pacer.gc_defer_s() == live_pacer.DEFAULT_GC_DEFER_S
    monkeypatch.setenv(live_pacer.GC_DEFER_ENV, "0")
    assert live_pacer.gc_defer_s() == 0.0
    monkeypatch.setenv(live_pacer.GC_DEFER_ENV, "soon")
    with pytest.raises(ValueError, match="PACELAB_LIVE_GC_DEFER_S: 'soon'"):
        live_pacer.gc_defer_s()
