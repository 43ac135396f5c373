"""The cpu test's parameters, its input and its phases, on a real RunContext in this process."""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import threading
import time
import zlib

import pytest

from remote.agent import bench_cpu, benches
from remote.agent.run_context import Cancelled, EventWriter, RunContext


def _ctx(tmp_path) -> RunContext:
    return RunContext(EventWriter(str(tmp_path / "events.jsonl")), str(tmp_path), {})


def _events(tmp_path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]


def test_presets_and_overrides() -> None:
    assert benches.validate("cpu", {}) == {"preset": "quick", "seconds": 5.0, "workers": None}
    assert benches.validate("cpu", {"preset": "full"})["seconds"] == 20.0
    assert benches.validate("cpu", {"preset": "full", "seconds": 0.3, "workers": 3}) == \
        {"preset": "full", "seconds": 0.3, "workers": 3}
    # the workbench's orphan deadline covers both phases
    assert benches.expected_seconds("cpu", {"preset": "full"}) >= 40


@pytest.mark.parametrize("params, words", [
    ({"preset": "slow"}, "preset"),
    ({"seconds": 0}, "seconds"),
    ({"seconds": "fast"}, "seconds"),
    ({"workers": 0}, "workers"),
    ({"workers": 2.5}, "workers"),
    ({"threads": 2}, "unknown parameter(s) threads"),
])
def test_bad_parameters_say_what_is_wrong(params: dict, words: str) -> None:
    with pytest.raises(ValueError, match="cpu: .*" + words.replace("(", r"\(").replace(")", r"\)")):
        benches.validate("cpu", params)


def test_the_input_is_the_same_everywhere_and_compresses_like_text() -> None:
    buf = bench_cpu.make_buffer()
    assert len(buf) == 1 << 20
    # pinned: a change here changes every score, so old and new results would not be comparable
    assert hashlib.sha256(buf).hexdigest()[:16] == PINNED_DIGEST
    assert 2.5 < len(buf) / len(zlib.compress(buf, 6)) < 6


PINNED_DIGEST = "c61476dcbe2fbeac"


def test_run_emits_both_phases_scores_and_kernel_speeds(tmp_path) -> None:
    ctx = _ctx(tmp_path)
    bench_cpu.run(ctx, benches.validate("cpu", {"seconds": 0.3, "workers": 2}))
    events = _events(tmp_path)
    assert [(e["type"], e["phase"]) for e in events if e["type"].startswith("phase_")] == [
        ("phase_start", "single"), ("phase_end", "single"), ("phase_start", "multi"), ("phase_end", "multi")]
    results = {e["metric"]: e for e in events if e["type"] == "result"}
    assert results["single"]["metadata"]["workers"] == 1 and results["multi"]["metadata"]["workers"] == 2
    assert results["single"]["value"] > 0 and results["multi"]["value"] > 0
    assert results["scaling"]["value"] == pytest.approx(results["multi"]["value"] / results["single"]["value"],
                                                        rel=0.01)
    for phase in ("single", "multi"):
        for kernel in ("zlib_compress", "zlib_decompress", "sha256"):
            assert results[f"{phase}.{kernel}"]["unit"] == "MB/s" and results[f"{phase}.{kernel}"]["value"] > 0
    assert results["single"]["metadata"]["zlib"] == zlib.ZLIB_RUNTIME_VERSION
    progress = [e for e in events if e["type"] == "progress"]
    assert progress and progress[-1]["fraction"] == 1.0
    assert multiprocessing.active_children() == []


def test_a_stop_request_ends_the_phase_and_its_workers_at_once(tmp_path) -> None:
    ctx = _ctx(tmp_path)
    threading.Timer(0.8, ctx.request_stop, args=("cancelled",)).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        bench_cpu.run(ctx, benches.validate("cpu", {"seconds": 30, "workers": 2}))
    assert time.monotonic() - started < 5
    assert multiprocessing.active_children() == []
    assert not any(e["type"] == "result" for e in _events(tmp_path))
