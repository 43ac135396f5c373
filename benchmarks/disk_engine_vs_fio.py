"""The built-in disk engine against fio: same machine, same file, same jobs, one process.

    python benchmarks/disk_engine_vs_fio.py [--dir DIR] [--size 1G] [--runtime 10] [--warmup 1] [--rounds 1]
                                            [--jobs randread_4k_w1,randread_4k_w16]

Imports the agent's engines directly (remote.agent.disk_builtin / disk_fio), prepares one test file
in a temporary directory under DIR (default: the system's temp dir) with the agent's own
prepare_file, and runs each job with fio and then with the built-in engine on identical JobSpecs.
Prints IOPS of each and the ratio built-in / fio. Goal: >= 0.95 at 1 worker, >= 0.9 at 16.
With --rounds N each job runs N times per engine, alternating (fio first in odd rounds, the built-in engine
first in even ones, so a load that rises or falls during the job favours neither), and the medians are
compared. Each engine's CPU time per I/O (its own and its children's, from os.times) is printed beside: on a
busy machine the engine that spends less CPU per I/O gets more I/Os out of its share.

--against REV adds the built-in engine as it was at git revision REV (its disk_builtin.py and disk_latency.py
loaded from `git show`) as a third engine in the same rotation, so an old and a new engine meet the same load;
--hog N runs `stress-ng --cpu N` (N spinning processes where stress-ng is missing) beside every round.
--fio-twice adds fio a second time to the rotation: its ratio to fio is what the same engine scores against
itself on this machine, the floor under which a difference between the engines is not measured; with 5
rounds or more the built-in engine is also set against both fio runs of each round (paired_with_fio).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from remote.agent import disk_builtin, disk_fio  # noqa: E402
from remote.agent.disk_file import o_direct_supported, prepare_file  # noqa: E402

KIB, MIB = 1024, 1024 * 1024
FIO_AGAIN = "fio again"
# (name, rw, bs, workers, sync, goal)
JOBS = [
    ("randread_4k_w1", "randread", 4 * KIB, 1, "none", 0.95),
    ("randread_4k_w16", "randread", 4 * KIB, 16, "none", 0.90),
    ("randread_1m_w1", "randread", 1 * MIB, 1, "none", 0.95),
    ("syncwrite_4k_w1", "randwrite", 4 * KIB, 1, "fdatasync", 0.95),
]


def parse_size(text: str) -> int:
    units = {"K": KIB, "M": MIB, "G": 1024 * MIB}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


ENGINES: dict[str, ModuleType] = {"fio": disk_fio, "builtin": disk_builtin}
ROOT = Path(__file__).resolve().parents[1]


def engine_at(rev: str, into: str) -> ModuleType:
    """The built-in engine as it was at git revision `rev`: its disk_*.py modules written under `into`, renamed
    with the revision and imported beside today's agent modules (so `.common` and the like are today's)."""
    tag = "".join(c if c.isalnum() else "_" for c in rev)
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", rev, "remote/agent/"], check=True,
                            capture_output=True, text=True).stdout.split()
    names = [Path(f).stem for f in listed if Path(f).name.startswith("disk_") and f.endswith(".py")]
    for name in names:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:remote/agent/{name}.py"], check=True,
                              capture_output=True, text=True).stdout
        for other in names:
            text = text.replace(f"from .{other} import", f"from .{other}_{tag} import")
        Path(into, f"{name}_{tag}.py").write_text(text)
    agent = importlib.import_module("remote.agent")
    agent.__path__.append(into)   # type: ignore[attr-defined]
    return importlib.import_module(f"remote.agent.disk_builtin_{tag}")


@contextlib.contextmanager
def cpu_hog(count: int):
    """`stress-ng --cpu count` (or as many spinning interpreters) while the block runs."""
    if count <= 0:
        yield "none"
        return
    if shutil.which("stress-ng"):
        procs = [subprocess.Popen(["stress-ng", "--cpu", str(count), "--quiet"], start_new_session=True)]
        what = f"stress-ng --cpu {count}"
    else:
        procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
                 for _ in range(count)]
        what = f"{count} spinning python process(es)"
    try:
        yield what
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()


def timed_cpu(engine: object, job: dict) -> tuple[dict, dict[str, float]]:
    """One job of one engine and per I/O: the CPU it took (this process's, where the built-in engine's single
    worker runs in a thread, and its reaped children's: fio, the built-in engine's worker processes) and how
    often its threads were preempted (involuntary context switches). Nothing else runs in this process meanwhile:
    a thread of ours here would take the interpreter lock from the built-in engine's worker (and not from fio)."""
    def switches() -> int:
        return sum(resource.getrusage(who).ru_nivcsw for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))

    before, switched = os.times(), switches()
    result = engine.run_job(dict(job))   # type: ignore[attr-defined]
    after, switched = os.times(), switches() - switched
    used = sum(getattr(after, f) - getattr(before, f) for f in ("user", "system", "children_user", "children_system"))
    ios = max(result["ios"], 1)
    return result, {"cpu": 1e6 * used / ios, "preempted": 1e3 * switched / ios}


def paired_with_fio(runs: dict[str, list[dict]]) -> str:
    """The built-in engine against both fio runs of the same round (their geometric mean): a round's load and
    the virtual disk's drift then touch both sides alike. Its geometric mean over the rounds with a 95 %
    bootstrap interval, and Wilcoxon's signed-rank test of "no difference": the figure that decides a 5 % goal
    where one round moves ±15 %."""
    logs = [math.log(b["iops"]) - (math.log(f["iops"]) + math.log(g["iops"])) / 2.0
            for f, g, b in zip(runs["fio"], runs[FIO_AGAIN], runs["builtin"], strict=True)
            if f["iops"] and g["iops"] and b["iops"]]
    found = stats.bootstrap((logs,), np.mean, confidence_level=0.95, rng=np.random.default_rng(0))
    low, high = math.exp(found.confidence_interval.low), math.exp(found.confidence_interval.high)
    p = stats.wilcoxon(logs).pvalue
    return (f"built-in / fio (both fio runs of each round): geometric mean {math.exp(statistics.fmean(logs)):.3f}, "
            f"95 % interval {low:.3f}-{high:.3f} over {len(logs)} rounds; signed-rank p = {p:.2f}")


def spread(values: list[float]) -> str:
    return "/".join(f"{x:.3f}" if x < 10 else f"{x:.1f}" for x in (min(values), statistics.median(values), max(values)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the temporary test directory goes")
    parser.add_argument("--size", type=parse_size, default=1024 * MIB, help="test file size (default 1G)")
    parser.add_argument("--runtime", type=float, default=10.0, help="measured seconds per job and engine")
    parser.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds, excluded")
    parser.add_argument("--rounds", type=int, default=1, help="runs per job and engine (medians compared)")
    parser.add_argument("--jobs", help="only these jobs (comma-separated names; default all)")
    parser.add_argument("--sync", choices=("fdatasync", "osync"), default="fdatasync", help="sync write mode")
    parser.add_argument("--against", metavar="REV", help="also the built-in engine of this git revision")
    parser.add_argument("--hog", type=int, default=0, metavar="N", help="stress-ng --cpu N beside the rounds")
    parser.add_argument("--fio-twice", action="store_true", help="fio again as a third engine: fio against itself")
    args = parser.parse_args()

    fio_version = disk_fio.available()
    if fio_version is None:
        print("fio is not installed: nothing to compare against", file=sys.stderr)
        return 1
    test_dir = tempfile.mkdtemp(prefix="benchbay-enginecmp-", dir=args.dir)
    try:
        engines = dict(ENGINES)
        if args.against:
            engines[f"@{args.against}"] = engine_at(args.against, test_dir)
        if args.fio_twice:
            engines[FIO_AGAIN] = disk_fio
        direct = o_direct_supported(test_dir)
        path = os.path.join(test_dir, "test.dat")
        started = time.monotonic()
        prepare_file(path, args.size, None, test_dir)
        print(f"# {fio_version} vs built-in {disk_builtin.version()}; file {args.size / MIB:.0f} MiB in {test_dir} "
              f"({'O_DIRECT' if direct else 'cached: no O_DIRECT here'}), prepared in "
              f"{time.monotonic() - started:.1f} s; runtime {args.runtime:g} s + warm-up {args.warmup:g} s, "
              f"{args.rounds} round(s)")
        wanted = set(args.jobs.split(",")) if args.jobs else {job[0] for job in JOBS}
        with cpu_hog(args.hog) as hog:
            print(f"# load average at the start: {os.getloadavg()[0]:.1f} (the machine may be shared: see the end "
                  f"too); beside the rounds: {hog}")
            print(f"{'job':<18}{'fio IOPS':>12}{'built-in IOPS':>15}{'ratio':>8}  goal   p99 ms fio/built-in")
            for name, rw, bs, workers, sync, goal in JOBS:
                if name in wanted:
                    job = {"name": name, "rw": rw, "bs": bs, "size": args.size, "file": path, "direct": direct,
                           "sync": args.sync if sync != "none" else "none", "workers": workers,
                           "runtime": args.runtime, "warmup": args.warmup}
                    last = run_rounds(engines, job, goal, args.rounds)
        print(f"# built-in flags, last job: {last['flags']}; load average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(test_dir, ignore_errors=True)
    return 0


def run_rounds(engines: dict[str, ModuleType], job: dict, goal: float, rounds: int) -> dict:
    """`rounds` rounds of every engine on `job`, the order rotated each round; prints the comparison and returns
    the built-in engine's last result."""
    runs: dict[str, list[dict]] = {e: [] for e in engines}
    costs: dict[str, dict[str, list[float]]] = {e: {"cpu": [], "preempted": []} for e in engines}
    loads: list[float] = []
    names = list(engines)
    for round_ in range(rounds):
        # two engines: fio first in odd rounds, built-in first in even; more: rotated, so each leads in turn
        order = names[round_ % len(names):] + names[:round_ % len(names)]
        for engine in order:
            result, cost = timed_cpu(engines[engine], job)
            runs[engine].append(result)
            for key, value in cost.items():
                costs[engine][key].append(value)
        loads.append(os.getloadavg()[0])
    fio = statistics.median(r["iops"] for r in runs["fio"])
    for engine in names[1:]:
        label = job["name"] if engine == "builtin" else f"  {engine}"
        iops = statistics.median(r["iops"] for r in runs[engine])
        ratio = iops / fio if fio else float("nan")
        verdict = "ok" if ratio >= goal else "MISSED"
        p99 = (statistics.median(r["lat"]["p99"] for r in runs["fio"]),
               statistics.median(r["lat"]["p99"] for r in runs[engine]))
        print(f"{label:<18}{fio:>12,.0f}{iops:>15,.0f}{ratio:>8.3f}  >= {goal:.2f} {verdict:<6} "
              f"{p99[0]:.3f}/{p99[1]:.3f}", flush=True)
        if rounds > 1:   # each round's ratio (fio and this engine ran in the same round)
            ratios = [b["iops"] / f["iops"] for f, b in zip(runs["fio"], runs[engine], strict=True) if f["iops"]]
            print(f"  {engine} rounds: ratio min/median/max {spread(ratios)}; each "
                  f"{' '.join(f'{x:.3f}' for x in ratios)}", flush=True)
    for engine in names[2:]:   # a third engine (an older built-in, fio again): the built-in against it
        pairs = [b["iops"] / o["iops"] for o, b in zip(runs[engine], runs["builtin"], strict=True) if o["iops"]]
        print(f"  built-in / {engine} IOPS per round, min/median/max {spread(pairs)}; higher in "
              f"{sum(x > 1 for x in pairs)} of {len(pairs)}", flush=True)
    if FIO_AGAIN in runs and rounds >= 5:
        print(f"  {paired_with_fio(runs)}", flush=True)
    if rounds > 1:
        print(f"  load after each round {' / '.join(f'{x:.1f}' for x in loads)}", flush=True)
    for key, what in (("cpu", "CPU per I/O us"),
                      ("preempted", "preemptions (involuntary context switches) per 1000 I/Os")):
        spans = ", ".join(f"{e} {spread(v[key])}" for e, v in costs.items())
        print(f"  {what}, min/median/max: {spans}", flush=True)
    return runs["builtin"][-1]


if __name__ == "__main__":
    sys.exit(main())
