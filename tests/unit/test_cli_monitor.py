"""`benchbay monitor` and `benchbay run` on the built-in host `local`, as a user types them."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_KEYS = {"t", "host", "interval", "cpu", "load", "tasks", "disks", "mem", "psi", "nfs", "netfs"}


@pytest.mark.parametrize("args", [
    ["monitor", "local", "--interval", "0.2"],
    ["monitor", "local", "--interval", "11"],
    ["monitor", "local", "--seconds", "0"],
    ["run", "local", "--test", "idle", "--interval", "0.4"],
    ["run", "local", "--test", "idle", "--set", "phases=[1, 2]"],
    ["run", "local", "--test", "idle", "--set", "nokey"],
    ["run", "local", "--test", "idle", "--set", "colour=blue"],
])
def test_bad_arguments_are_usage_errors(cli_env, capsys, args: list[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("benchbay: ") and len(err.strip().splitlines()) == 1
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []   # nothing was started or stored


def test_unknown_test_is_refused_by_argparse(cli_env, capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "local", "--test", "teleport"])
    assert exited.value.code == 2


def test_monitor_local_json_lines(cli_env, capsys) -> None:
    assert main(["monitor", "local", "--seconds", "3", "--interval", "0.5", "--json"]) == 0
    out, err = capsys.readouterr()
    samples = [json.loads(line) for line in out.splitlines()]
    assert 5 <= len(samples) <= 7
    for sample in samples:
        assert set(sample) == SAMPLE_KEYS and sample["host"] == "local"
        assert len(sample["load"]) == 3 and sample["interval"] == pytest.approx(0.5, abs=0.1)
        assert {"user", "system", "iowait", "steal", "idle"} <= set(sample["cpu"])
        assert {"memused", "dirty", "writeback"} <= set(sample["mem"])
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    assert "samples stored" in err

    assert main(["runs", "list", "--json"]) == 0
    [run] = json.loads(capsys.readouterr().out)
    assert (run["test"], run["status"], run["host_name"]) == ("monitor", "done", "local")
    assert run["parameters"]["interval"] == 0.5 and run["parameters"]["duration"] == 3.0


def test_monitor_text_lines_are_aligned(cli_env, capsys) -> None:
    assert main(["monitor", "local", "--seconds", "1.5", "--interval", "0.5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "# local" and lines[1].startswith("TIME")
    ticks = lines[2:]
    assert 2 <= len(ticks) <= 4
    assert {len(line) for line in ticks} == {len(lines[1])}   # one column layout for every tick


def test_run_idle_json(cli_env, capsys) -> None:
    phases = json.dumps([["a", "A", 1.0]])
    assert main(["run", "local", "--test", "idle", "--set", f"phases={phases}", "--interval", "0.5", "--json"]) == 0
    out, err = capsys.readouterr()
    [run] = json.loads(out)["runs"]
    assert (run["host"], run["status"], run["error"]) == ("local", "done", "")
    assert [(r["test"], r["metric"], r["unit"]) for r in run["results"]] == [("idle", "elapsed", "s")]
    assert "local: A ..." in err


def test_ctrl_c_stops_a_monitor_cleanly(cli_env) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "main.py", "monitor", "local", "--interval", "0.5", "--json"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = [proc.stdout.readline() for _ in range(3)]
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    samples = [json.loads(line) for line in lines + out.splitlines()]
    assert len(samples) >= 3
    assert "stopping" in err and "samples stored" in err

    listing = subprocess.run([sys.executable, "main.py", "runs", "list", "--json"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
    [run] = json.loads(listing.stdout)
    assert run["status"] == "done"
    from app.workbench import Workbench

    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        events = bench.store.runs.events(run["id"])
        assert len(bench.store.runs.series(run["id"])[0].values) == len(samples)
    finally:
        bench.close()
    run_dir = next(e["run_dir"] for e in events if e["type"] == "started")
    deadline = time.monotonic() + 5
    while os.path.exists(run_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(run_dir)


def test_a_disk_plugged_in_during_a_monitor_gets_a_column(capsys) -> None:
    from app.cli.monitor import _TextPrinter
    from remote.telemetry.sample import TelemetrySample

    def tick(t: float, disks: dict) -> TelemetrySample:
        return TelemetrySample(t=t, interval=1.0, cpu={"user": 1.0}, load=(0.5, 0.4, 0.3), tasks={},
                               disks=disks, mem={}, psi={})

    stats = {"r/s": 10.0, "w/s": 0.0, "util": 5.0}
    printer = _TextPrinter([], 1.0)
    printer.sample("h", tick(1.0, {"vda": stats}))
    printer.sample("h", tick(2.0, {"vda": stats, "sdb": dict(stats, **{"r/s": 7.0})}))
    printer.sample("h", tick(3.0, {"sdb": stats}))            # vda gone: its cells say so
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "# h"
    assert [line.split().count("DEV") for line in lines if line.startswith("TIME")] == [1, 2]
    assert "sdb" in lines[4] and "7.0" in lines[4]             # shown from the tick it appeared in
    assert lines[5].split()[6:9] == ["vda", "-", "-"]           # gone: its figures are missing
