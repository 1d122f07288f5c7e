"""Recognition jobs (``footnote.store.recognition``) on both backends: one holder per job, leases that run out,
tries counted with their error, a task filter, and a job removed when done."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from footnote.settings import load_settings
from footnote.store import Store, open_store
from footnote.store.recognition import Task


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = str(tmp_path / "store.db") if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = open_store(url, load_settings(None).store, create=True)
    yield s
    s.close()


def test_each_job_has_one_holder_at_a_time(store: Store) -> None:
    for i in range(6):
        store.put_recognition_job(f"c/{i}.tif", Task.OCR, {"lang": None})
    with ThreadPoolExecutor(max_workers=4) as pool:  # four workers racing for the jobs
        got = list(pool.map(lambda w: [store.claim_recognition_job(f"w{w}", 60, 3) for _ in range(3)], range(4)))
    claimed = [j.source_id for claims in got for j in claims if j is not None]
    assert sorted(claimed) == [f"c/{i}.tif" for i in range(6)]  # every job once, none twice
    assert store.claim_recognition_job("late", 60, 3) is None


def test_a_lease_runs_out_and_a_failure_is_counted(store: Store) -> None:
    store.put_recognition_job("c/a.mp3", Task.ASR, {"kind": None, "lang": "en"})
    job = store.claim_recognition_job("w1", 0.2, 2)
    assert job is not None and job.options == {"kind": None, "lang": "en"} and job.holder == "w1"
    assert store.claim_recognition_job("w2", 60, 2) is None
    assert store.renew_recognition_job("c/a.mp3", "w1", 0.2) and not store.renew_recognition_job("c/a.mp3", "w2", 60)
    time.sleep(0.3)  # w1 was killed: its lease ran out
    again = store.claim_recognition_job("w2", 60, 2)
    assert again is not None and again.holder == "w2"
    store.finish_recognition_job("c/a.mp3", "w1", error="late")  # the dead worker's word no longer counts
    store.finish_recognition_job("c/a.mp3", "w2", error="the speech model is not installed")
    [kept] = store.recognition_jobs()
    assert (kept.tries, kept.error, kept.holder) == (1, "the speech model is not installed", "")
    assert store.claim_recognition_job("w3", 60, 1) is None  # past its tries
    third = store.claim_recognition_job("w3", 60, 2)
    assert third is not None
    store.finish_recognition_job("c/a.mp3", "w3")
    assert store.recognition_jobs() == []


def test_a_worker_claims_only_what_it_can_do(store: Store) -> None:
    store.put_recognition_job("c/a.mp3", Task.ASR, {})
    store.put_recognition_job("c/b.tif", Task.OCR, {})
    assert store.claim_recognition_job("ocr-only", 60, 3, (Task.OCR,)).source_id == "c/b.tif"  # type: ignore[union-attr]
    assert store.claim_recognition_job("ocr-only", 60, 3, (Task.OCR,)) is None
    assert store.claim_recognition_job("nothing", 60, 3, ()) is None
    store.put_recognition_job("c/b.tif", Task.OCR, {"lang": "ru"})  # ingested again: starts over
    [_, b] = store.recognition_jobs()
    assert (b.holder, b.tries, b.options) == ("", 0, {"lang": "ru"})
