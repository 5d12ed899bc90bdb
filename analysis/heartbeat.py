"""A running analysis attempt's sign of life, independent of what the pipeline is doing.

The reporter beats at every progress step, but one step (a large fit, the figures) may take long, so a silent row
could not be told from a dead worker for ten minutes (issue 41: a hard-killed worker left a run "running 26.6 %"
for 10.6 min). This thread writes ``heartbeat_at`` every ``ANALYSIS_HEARTBEAT_S`` seconds while the attempt holds
the run's lease; it dies with the worker process, so a stale heartbeat means the worker is gone.
"""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connections, transaction
from django.utils import timezone

from analysis.models import AnalysisRun

log = logging.getLogger("pacelab")


class Heartbeat(threading.Thread):
    def __init__(self, run_id: int, lease: str, every: float) -> None:
        super().__init__(name=f"analysis-{run_id}-heartbeat", daemon=True)
        self.run_id, self.lease, self.every = run_id, lease, every
        self._stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self._stopped.wait(self.every):
                try:
                    held = self.beat()
                except DatabaseError as exc:  # the database is away: the next beat tries again
                    log.warning("analysis run %s: heartbeat not written (%s)", self.run_id, exc)
                    continue
                if held is False:  # finished, or another attempt took the run over
                    return
        finally:
            connections.close_all()  # this thread's own connections

    def beat(self) -> bool | None:
        """Write the heartbeat; False when the run is no longer this attempt's, None when its row is locked (the
        attempt itself is writing it: no need to wait for that)."""
        with transaction.atomic():
            row = AnalysisRun.objects.select_for_update(skip_locked=True).filter(pk=self.run_id).values_list(
                "lease", "state").first()
            if row is None:
                return None if AnalysisRun.objects.filter(pk=self.run_id).exists() else False
            if row != (self.lease, AnalysisRun.State.RUNNING):
                return False
            AnalysisRun.objects.filter(pk=self.run_id).update(heartbeat_at=timezone.now())
            return True

    def stop(self) -> None:
        self._stopped.set()
        self.join(timeout=2)  # a beat waiting on the database is not waited for: the thread ends by itself
