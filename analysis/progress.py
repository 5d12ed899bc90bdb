"""Progress of a running analysis, written to its ``AnalysisRun`` row (throttled) and announced to live views.

The reporter is the pipeline's ``progress(stage, percent)`` and ``cancelled()``: it writes at most every
``interval`` seconds (and at every new stage), only while this attempt still holds the run's lease, and reports
"stop" when a cancel was requested or another attempt took the run over (a redelivered task).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.utils import timezone

from analysis import events
from analysis.models import AnalysisRun


class Reporter:
    def __init__(self, run_id: int, lease: str, *, interval: float = 0.5, delay: float = 0.0,
                 echo: Callable[[str, float], None] | None = None):
        self.run_id, self.lease = run_id, lease
        self.interval, self.delay, self.echo = interval, delay, echo
        self.stage, self.percent = "", 0.0
        self._written = 0.0
        self._checked = 0.0
        self._stop = False

    def __call__(self, stage: str, percent: float) -> None:
        if self.delay:
            time.sleep(self.delay)  # test-only: PACELAB_ANALYSIS_TEST_DELAY makes a run slow enough to kill
        new_stage = stage != self.stage
        self.stage, self.percent = stage, percent
        if self.echo is not None:
            self.echo(stage, percent)
        now = time.monotonic()
        if not (new_stage or percent >= 100 or now - self._written >= self.interval):
            return
        self._written = now
        held = AnalysisRun.objects.filter(pk=self.run_id, lease=self.lease, state=AnalysisRun.State.RUNNING).update(
            stage=stage[:32], percent=percent, heartbeat_at=timezone.now())
        if not held:
            self._stop = True
            return
        events.analysis_progress(self.run_id, state=AnalysisRun.State.RUNNING, stage=stage, percent=percent)

    def cancelled(self) -> bool:
        """True once a cancel was requested or the run is no longer this attempt's (read at most every interval)."""
        now = time.monotonic()
        if self._stop or now - self._checked < self.interval:
            return self._stop
        self._checked = now
        # one query: a sign of life (so a run whose process died can be told from one that is working) that only
        # lands while the run is still this attempt's, running and not asked to stop
        self._stop = not AnalysisRun.objects.filter(
            pk=self.run_id, lease=self.lease, state=AnalysisRun.State.RUNNING, cancel_requested=False,
        ).update(heartbeat_at=timezone.now())
        return self._stop
