"""Background trace imports on a real Celery worker, against real Redis and PostgreSQL."""

import time

import pytest
from django.db import transaction

from playback import services
from playback.models import Trace, TraceImportJob

pytestmark = [pytest.mark.integration]


def _wait_done(job_id: int, timeout: float = 60.0) -> TraceImportJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = TraceImportJob.objects.get(pk=job_id)
        if job.state in (TraceImportJob.State.DONE, TraceImportJob.State.FAILED):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} still {job.state} after {timeout}s")


def test_a_worker_imports_the_files_of_a_job_once(celery_worker, data_dir):
    with transaction.atomic():
        job = services.import_job_create(paths=[str(data_dir / "vllm-bench-detailed.json")])
    job = _wait_done(job.pk)
    assert job.state == TraceImportJob.State.DONE, job.error
    assert job.created > 0 and job.duplicates == 0
    assert Trace.objects.filter(format="vllm").count() == job.created
    # a redelivered task finds the job done and does nothing
    again = services.import_job_run(job_id=job.pk)
    assert again.state == TraceImportJob.State.DONE
    assert Trace.objects.count() == job.created


def test_a_broken_file_fails_the_job_with_the_reason_and_stores_nothing(celery_worker, data_dir, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"ttfts": [0.1], "itls": [[0.01]], "generated_texts": ["a", "b"]')
    with transaction.atomic():
        job = services.import_job_create(paths=[str(data_dir / "vllm-bench-detailed.json"), str(broken)])
    job = _wait_done(job.pk)
    assert job.state == TraceImportJob.State.FAILED
    assert "broken.json" in job.error
    assert Trace.objects.count() == 0
