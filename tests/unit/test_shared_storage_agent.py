"""The shared-storage test's agent side on a real RunContext in this process: its parameters, its steps,
a client working only in its own directory, O_DIRECT refused by the file system said and stored, and
everything removed at the end."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from remote.agent import bench_shared, benches
from remote.agent.run_context import EventWriter, RunContext


def _ctx(tmp_path: Path) -> RunContext:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    return RunContext(EventWriter(str(run_dir / "events.jsonl")), str(run_dir), {})


def _events(ctx: RunContext) -> list[dict]:
    return [json.loads(line) for line in Path(ctx.run_dir, "events.jsonl").read_text().splitlines()]


def test_parameters_are_checked_with_what_to_do() -> None:
    checked = benches.validate("shared-storage", {"test_dir": "/mnt/shared", "bs": "1", "clients": "1,2,4",
                                                  "threads": [4, 1, 4]})
    assert checked["bs"] == 1 and checked["clients"] == [1, 2, 4] and checked["threads"] == [1, 4]
    assert checked["direct"] and checked["sync"] and checked["rw"] == "write"
    for params, message in (({"test_dir": "shared"}, "absolute path"),
                            ({"bs": 0}, "bs must be 1-16777216 bytes"),
                            ({"bs": "4k", "file_size": 1024}, "file_size .1024. must be at least bs .4096."),
                            ({"threads": "1,x"}, "whole numbers"),
                            ({"clients": []}, "non-empty list"),
                            ({"client_name": "a/b"}, "client_name must be"),
                            ({"rw": "append"}, "rw must be write or read"),
                            ({"runtime": 1}, "runtime must be 2-3600"),
                            ({"colour": "red"}, "unknown parameter")):
        with pytest.raises(ValueError, match=message):
            benches.validate("shared-storage", params)


def test_steps_run_clients_outer_threads_inner_and_a_client_works_only_where_it_counts() -> None:
    params = benches.validate("shared-storage", {"clients": [1, 2], "threads": [1, 4], "runtime": 10, "gap": 2,
                                                 "client_index": 1})
    steps = bench_shared.steps(params)
    assert [(s["name"], s["offset"], s["active"]) for s in steps] == [
        ("c1t1", 0.0, False), ("c1t4", 12.0, False), ("c2t1", 24.0, True), ("c2t4", 36.0, True)]


def test_a_client_works_in_its_own_directory_says_o_direct_was_refused_and_leaves_nothing(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    neighbour = shared / "someone-else.dat"
    neighbour.write_text("not ours")
    ctx = _ctx(tmp_path)
    params = benches.validate("shared-storage", {"test_dir": str(shared), "bs": 1, "file_size": 4096,
                                                 "clients": [1], "threads": [1, 2], "runtime": 2, "gap": 0.5,
                                                 "client_name": "c1-alpha", "group": "g1"})
    seen: list[list[str]] = []
    real_run_step = bench_shared._run_step

    def watching(*args, **kwargs):
        seen.append(sorted(os.listdir(shared / "benchbay-shared-g1-c1-alpha")))
        return real_run_step(*args, **kwargs)

    bench_shared._run_step = watching
    try:
        bench_shared.run(ctx, params)
    finally:
        bench_shared._run_step = real_run_step
        left = ctx.cleanup()
    assert left == []
    assert seen == [["t000.dat", "t001.dat"]] * 2            # its own files, one per thread
    assert sorted(os.listdir(shared)) == ["someone-else.dat"]  # its directory gone, the neighbour untouched
    assert neighbour.read_text() == "not ours"
    events = _events(ctx)
    results = {e["metric"]: e for e in events if e["type"] == "result"}
    ops = results["c1t2.ops"]
    assert len(ops["rates"]["values"]) == 2 and ops["rates"]["interval_s"] == 1.0
    assert ops["rates"]["t0"] == ops["metadata"]["planned"]
    assert ops["value"] == pytest.approx(sum(ops["rates"]["values"]) / 2, rel=1e-3)
    assert ops["metadata"]["began_first"] >= ops["metadata"]["planned"] - 0.01
    # ext4 refuses a 1-byte O_DIRECT request: said as a warning and stored beside every figure
    if not ops["metadata"]["direct"]:
        assert "O_DIRECT refused by" in ops["metadata"]["direct_note"]
        assert any(e["type"] == "warning" and "O_DIRECT refused" in e["message"] for e in events)
        assert "O_DIRECT" not in ops["metadata"]["flags"]
    else:   # a file system that takes it: kept, and no note
        assert ops["metadata"]["direct_note"] == "" and "O_DIRECT" in ops["metadata"]["flags"]
    ticks = [e for e in events if e["type"] == "shared_tick" and e["step"] == "c1t2"]
    assert [t["second"] for t in ticks] == [0, 1]
    assert [t["ops"] for t in ticks] == [round(v) for v in ops["rates"]["values"]]


def test_too_little_free_space_is_refused_before_writing(tmp_path: Path, monkeypatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setattr(bench_shared, "_free_bytes", lambda _d: 10 << 20)
    ctx = _ctx(tmp_path)
    params = benches.validate("shared-storage", {"test_dir": str(shared), "file_size": "1M", "threads": [32]})
    with pytest.raises(ValueError, match=r"has 10 MiB free, the test needs 36 MiB \(32 files"):
        bench_shared.run(ctx, params)
    assert os.listdir(shared) == []


def test_an_existing_directory_of_the_same_name_is_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "benchbay-shared-g1-c1").mkdir(parents=True)
    (shared / "benchbay-shared-g1-c1" / "theirs").write_text("x")
    ctx = _ctx(tmp_path)
    params = benches.validate("shared-storage", {"test_dir": str(shared), "group": "g1", "client_name": "c1"})
    with pytest.raises(ValueError, match="already exists"):
        bench_shared.run(ctx, params)
    assert ctx.cleanup() == []
    assert (shared / "benchbay-shared-g1-c1" / "theirs").read_text() == "x"


def test_a_client_waits_for_the_start_signal_and_says_so_when_none_comes(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    ctx = _ctx(tmp_path)
    params = benches.validate("shared-storage", {"test_dir": str(shared), "wait_for_start": True, "start_wait": 1,
                                                 "threads": [1]})
    with pytest.raises(RuntimeError, match="no start signal from the workbench within 1 s"):
        bench_shared.run(ctx, params)
    assert any(e["type"] == "shared_ready" and e["run_dir"] == ctx.run_dir for e in _events(ctx))
    ctx.cleanup()
    assert os.listdir(shared) == []
