"""The built-in disk engine's worker loop (latency histogram and per-interval counts inlined for speed)
counts what it did: every measured I/O once in the histogram, in the per-interval rates and in the IOPS,
with one worker (a thread) and with several (forked processes, each running its share as threads)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from remote.agent import disk_builtin
from remote.agent.disk_latency import Histogram

KIB = 1024


@pytest.mark.parametrize("workers", [1, 3, 9])
def test_every_measured_io_is_counted_once(tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "test.dat"
    path.write_bytes(b"\x5a" * (4 * 1024 * KIB))
    job = {"name": "rr", "rw": "randread", "bs": 4 * KIB, "size": 4 * 1024 * KIB, "file": str(path),
           "direct": False, "sync": "none", "workers": workers, "runtime": 1.0, "warmup": 0.2}
    outs = []
    real = disk_builtin._combine

    def keep(job_, parts, *args, **kwargs):
        outs.extend(parts)
        return real(job_, parts, *args, **kwargs)

    monkeypatch.setattr(disk_builtin, "_combine", keep)
    result = disk_builtin.run_job(job)
    assert len(outs) == workers and result["ios"] > 0
    for out in outs:
        hist = Histogram.from_state(out["hist"])
        assert hist.count == out["ios"] == sum(hist.counts)
        assert 0 < hist.min <= hist.mean() <= hist.max
        assert sum(out["per_interval"]) <= out["ios"]   # an I/O ending past the window is in no interval
        assert sum(out["per_interval"]) >= out["ios"] - 1
    assert result["lat"]["p50"] <= result["lat"]["p99"] <= result["lat"]["p99.9"]
    count = disk_builtin.process_count(workers)
    spread = "1 thread" if workers == 1 else (f"{workers} processes" if count == workers
                                              else f"{workers} threads in {count} processes")
    assert result["flags"].endswith(f"{spread}, random bs-aligned offsets")


class _Cancelled(Exception):
    pass


class _CancelSoon:
    """A run context whose run is cancelled at the first wait, as the agent's is by a user's cancel."""

    def progress(self, *_args, **_kwargs) -> None:
        pass

    def sleep(self, _seconds: float) -> None:
        raise _Cancelled()


def _children() -> list[int]:
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        if entry.name.isdigit() and f"\nPPid:\t{me}\n" in status:
            found.append(int(entry.name))
    return found


def test_a_cancel_leaves_no_worker_process(tmp_path: Path) -> None:
    path = tmp_path / "test.dat"
    path.write_bytes(b"\x5a" * (1024 * KIB))
    job = {"name": "rr", "rw": "randread", "bs": 4 * KIB, "size": 1024 * KIB, "file": str(path),
           "direct": False, "sync": "none", "workers": 9, "runtime": 60.0, "warmup": 0.0}
    before = _children()
    with pytest.raises(_Cancelled):
        disk_builtin.run_job(job, ctx=_CancelSoon())
    assert _children() == before   # killed and reaped (no zombie either), threads and all
