"""Verdicts between capacity hosts under cgroup v2, in the emulated machine of tests/fixtures/cgroup2_vm.py
(needs root, qemu-system-x86, linux-image-amd64, busybox-static).

    sudo .venv/bin/python benchmarks/verdicts_cgroup2.py [--twin-iops 150] [--slow-iops 50] [--runs 3]
    sudo .venv/bin/python benchmarks/verdicts_cgroup2.py --test cpu [--seconds 10] [--runs 3]

--test cpu: the twins against each other and a half-CPU host (cpu.max 50000 100000) against each twin, single
runs and repeats; `--seconds` per phase (an emulated operation takes seconds: with 3 a run failed, "workers did
not report 30 s after the phase").

Identical twins (the same io.max each) and a host whose io.max allows a third of theirs; each runs the disk test
`--runs` times (`benchbay run --repeat`, the short settings of tests/integration/test_verdicts_capacity.py),
then `benchbay compare --json` judges every twin-a run against every twin-b run and the slow host's runs
against each twin's, as that test does for cgroup v1. Prints each run's figures, how long each step took and
the table of false wins and missed differences.

The limits are far below the suite's 3000 and 1000 IOPS because under software emulation a loop disk is
bound by the emulated CPU (some 200 to 700 random reads per second on a busy machine): an io.max above that
limits nothing, and the "throttled" host can come out faster than its twin.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.cli import main  # noqa: E402
from tests.fixtures.capacity_hosts import Shape, standalone_session  # noqa: E402
from tests.fixtures.cgroup2_vm import cgroup2_vm_hosts  # noqa: E402
from tests.fixtures.store import write_settings  # noqa: E402
from tests.integration import test_verdicts_capacity as verdicts  # noqa: E402


def _run(name: str, runs: int, test_args: list[str]) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", name, *test_args, "--repeat", str(runs), "--json"])
    text = out.getvalue()
    done = json.loads(text[text.index("{"):])["runs"] if "{" in text else []
    if code:
        print(f"{name}: benchbay run exited {code}: {err.getvalue()[-1500:]}", flush=True)
        print(f"  errors: {[r.get('error') for r in done]}", flush=True)
    return [r for r in done if r["status"] == "done"]


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--twin-iops", type=int, default=150)
    parser.add_argument("--slow-iops", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--test", choices=("disk", "cpu"), default="disk")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    test = args.test
    slow = "iops" if test == "disk" else "half"
    shapes = (Shape("twin-a", "", 1.0, args.twin_iops), Shape("twin-b", "", 1.0, args.twin_iops),
              Shape(slow, "", 1.0 if test == "disk" else 0.5, args.slow_iops if test == "disk" else args.twin_iops))
    test_args = verdicts.DISK_ARGS if test == "disk" else ["--test", "cpu", "--set", f"seconds={args.seconds:g}"]
    began = time.monotonic()
    with standalone_session() as (root, session):
        home, ssh = root / "home", root / "dot-ssh"
        home.mkdir()
        ssh.mkdir(mode=0o700)
        (ssh / "config").write_text("")
        (ssh / "known_hosts").write_text("")
        os.environ["BENCHBAY_HOME"] = str(home)
        os.environ["BENCHBAY_DB"] = f"sqlite:///{root / 'store.sqlite3'}"
        write_settings(home, ssh_config=str(ssh / "config"), user_known_hosts=str(ssh / "known_hosts"))
        ids: dict[str, list[int]] = {}
        by_run: dict[int, dict[str, float]] = {}
        with cgroup2_vm_hosts(root / "vm", session, shapes) as hosts:
            print(f"machine up with its hosts in {hosts.boot_seconds:.1f} s ({hosts.describe()})", flush=True)
            for host in hosts.hosts.values():
                for command in (host.host_add_args(), host.host_trust_args()):
                    with contextlib.redirect_stdout(io.StringIO()):
                        assert main(command) == 0, command
            for name in ("twin-a", "twin-b", slow):
                started = time.monotonic()
                done = _run(name, args.runs, test_args)
                print(f"{name}: {len(done)} of {args.runs} runs done in {time.monotonic() - started:.1f} s",
                      flush=True)
                ids[name] = [r["run_id"] for r in done]
                for run in done:
                    stored = {f"{r['test']}:{r['metric']}": r["value"] for r in run["results"]}
                    by_run[run["run_id"]] = {figure: stored[figure] for figure in verdicts.FIGURES[test]}
                    print(f"  run {run['run_id']}: {by_run[run['run_id']]}", flush=True)
            stopping = time.monotonic()
        print(f"machine stopped in {time.monotonic() - stopping:.1f} s", flush=True)
        judged = []
        figures = verdicts.FIGURES[test]
        for a in ids["twin-a"]:
            for b in ids["twin-b"]:
                judged += verdicts._judge(verdicts.TWINS, figures, ("twin-b", [b]), ("twin-a", [a]), by_run, False)
        if test == "cpu":
            for one in ids[slow]:
                for twin in ("twin-a", "twin-b"):
                    for whole in ids[twin]:
                        judged += verdicts._judge(verdicts.HALF_SINGLE, figures, (slow, [one]), (twin, [whole]),
                                                  by_run, True)
        repeats = verdicts.IOPS_REPEATS if test == "disk" else verdicts.HALF_REPEATS
        for twin in ("twin-a", "twin-b"):
            if ids[slow] and ids[twin]:
                judged += verdicts._judge(repeats, figures, (slow, ids[slow]), (twin, ids[twin]), by_run, True)
    for judgement in judged:
        if judgement.kind != verdicts.TWINS and (judgement.kind != verdicts.HALF_SINGLE or verdicts._wrong(
                judgement, True)):
            print(verdicts._describe(judgement))
    print("\n".join(verdicts.verdict_table(judged)))
    if test == "disk":
        print(f"(the slow host's row is {args.slow_iops} against {args.twin_iops} IOPS here)")
    print(f"{time.monotonic() - began:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
