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
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from remote.agent import disk_builtin, disk_fio  # noqa: E402
from remote.agent.disk_file import o_direct_supported, prepare_file  # noqa: E402

KIB, MIB = 1024, 1024 * 1024
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


ENGINES = {"fio": disk_fio, "builtin": disk_builtin}


def timed_cpu(engine: object, job: dict) -> tuple[dict, float]:
    """One job of one engine and the CPU seconds it took: this process's (the built-in engine's single worker
    runs in a thread here) and its reaped children's (fio; the built-in engine's worker processes)."""
    before = os.times()
    result = engine.run_job(dict(job))   # type: ignore[attr-defined]
    after = os.times()
    used = sum(getattr(after, f) - getattr(before, f) for f in ("user", "system", "children_user", "children_system"))
    return result, used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the temporary test directory goes")
    parser.add_argument("--size", type=parse_size, default=1024 * MIB, help="test file size (default 1G)")
    parser.add_argument("--runtime", type=float, default=10.0, help="measured seconds per job and engine")
    parser.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds, excluded")
    parser.add_argument("--rounds", type=int, default=1, help="runs per job and engine (medians compared)")
    parser.add_argument("--jobs", help="only these jobs (comma-separated names; default all)")
    parser.add_argument("--sync", choices=("fdatasync", "osync"), default="fdatasync", help="sync write mode")
    args = parser.parse_args()

    fio_version = disk_fio.available()
    if fio_version is None:
        print("fio is not installed: nothing to compare against", file=sys.stderr)
        return 1
    test_dir = tempfile.mkdtemp(prefix="benchbay-enginecmp-", dir=args.dir)
    try:
        direct = o_direct_supported(test_dir)
        path = os.path.join(test_dir, "test.dat")
        started = time.monotonic()
        prepare_file(path, args.size, None, test_dir)
        print(f"# {fio_version} vs built-in {disk_builtin.version()}; file {args.size / MIB:.0f} MiB in {test_dir} "
              f"({'O_DIRECT' if direct else 'cached: no O_DIRECT here'}), prepared in "
              f"{time.monotonic() - started:.1f} s; runtime {args.runtime:g} s + warm-up {args.warmup:g} s, "
              f"{args.rounds} round(s)")
        wanted = set(args.jobs.split(",")) if args.jobs else {job[0] for job in JOBS}
        print(f"# load average at the start: {os.getloadavg()[0]:.1f} (the machine may be shared: see the end too)")
        print(f"{'job':<18}{'fio IOPS':>12}{'built-in IOPS':>15}{'ratio':>8}  goal   p99 ms fio/built-in")
        for name, rw, bs, workers, sync, goal in JOBS:
            if name not in wanted:
                continue
            job = {"name": name, "rw": rw, "bs": bs, "size": args.size, "file": path, "direct": direct,
                   "sync": args.sync if sync != "none" else "none", "workers": workers,
                   "runtime": args.runtime, "warmup": args.warmup}
            runs: dict[str, list[dict]] = {"fio": [], "builtin": []}
            cpu: dict[str, list[float]] = {"fio": [], "builtin": []}
            loads: list[float] = []
            for round_ in range(args.rounds):
                order = ("fio", "builtin") if round_ % 2 == 0 else ("builtin", "fio")
                for engine in order:
                    result, seconds = timed_cpu(ENGINES[engine], job)
                    runs[engine].append(result)
                    cpu[engine].append(1e6 * seconds / max(result["ios"], 1))
                loads.append(os.getloadavg()[0])
            fio = statistics.median(r["iops"] for r in runs["fio"])
            builtin = statistics.median(r["iops"] for r in runs["builtin"])
            ratio = builtin / fio if fio else float("nan")
            verdict = "ok" if ratio >= goal else "MISSED"
            p99 = (statistics.median(r["lat"]["p99"] for r in runs["fio"]),
                   statistics.median(r["lat"]["p99"] for r in runs["builtin"]))
            print(f"{name:<18}{fio:>12,.0f}{builtin:>15,.0f}{ratio:>8.3f}  >= {goal:.2f} {verdict:<6} "
                  f"{p99[0]:.3f}/{p99[1]:.3f}", flush=True)
            if args.rounds > 1:   # each round's ratio (fio and built-in ran back to back in it)
                pairs = zip(runs["fio"], runs["builtin"], strict=True)
                ratios = sorted(b["iops"] / f["iops"] for f, b in pairs if f["iops"])
                print(f"  rounds: ratio min {ratios[0]:.3f} median {statistics.median(ratios):.3f} "
                      f"max {ratios[-1]:.3f}; load after each round {' / '.join(f'{x:.1f}' for x in loads)}",
                      flush=True)
            spans = {e: "/".join(f"{x:.1f}" for x in (min(v), statistics.median(v), max(v))) for e, v in cpu.items()}
            print(f"  CPU per I/O, min/median/max: fio {spans['fio']} us, built-in {spans['builtin']} us", flush=True)
        print(f"# built-in flags, last job: {runs['builtin'][-1]['flags']}; load average at the end: "
              f"{os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(test_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
