"""The shared-storage test's own I/O engine against fio, same job, same directory, same machine.

    python benchmarks/shared_engine_vs_fio.py [--dir DIR] [--threads 1,4,16] [--bs 1,4096] [--rw write,read]
                                              [--seconds 5] [--rounds 2]

The shared-storage test drives its clients with a small engine of its own (Python threads, one file each,
pread/pwrite of `bs` bytes with O_DIRECT|O_SYNC), so a host without fio can take part. If that engine, not
the storage, ran out of breath first, the sweep's knee would be Benchbay's, not the storage's. So, for
each (rw, bs, threads), this runs on `local`, one client, in a fresh Benchbay home and SQLite store:

    benchbay run local --test shared-storage --dir DIR --clients 1 --threads T --set bs=B --set rw=RW
                       --set runtime=S --json

and fio with the same job (psync, --direct=1 --sync=1 for writes, one 1 MiB file per job, time based):

    fio --name=shared --directory=DIR --rw=RW --bs=B --size=1M --numjobs=T --thread --direct=1 [--sync=1]
        --ioengine=psync --time_based --runtime=S --group_reporting --output-format=json

alternately, --rounds times each, and prints both op/s (the median of the rounds), their ratio, how busy
Benchbay found the client's CPUs, and whether it noted that the step's total may be the client's limit. fio
cannot open a file O_DIRECT with a request that is not a multiple of the device's block size: bs=1 runs
fio without --direct (the line says so) while Benchbay keeps O_DIRECT where the file system allows it.
DIR must not be tmpfs (no O_DIRECT there); by default a temporary directory in the current one.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE_SIZE = "1M"


def _benchbay(home: Path, directory: Path, rw: str, bs: int, threads: int,
              seconds: int) -> tuple[float, float, bool]:
    """The step's total op/s, how busy Benchbay found the client's CPUs, and whether it noted that the total may
    be the client's limit (busy CPUs, or the engine near its own ceiling on the host)."""
    env = dict(os.environ, BENCHBAY_HOME=str(home), BENCHBAY_DB=f"sqlite:///{home / 'store.sqlite3'}")
    argv = [sys.executable, str(ROOT / "main.py"), "run", "local", "--test", "shared-storage", "--dir",
            str(directory), "--clients", "1", "--threads", str(threads), "--set", f"bs={bs}", "--set", f"rw={rw}",
            "--set", f"runtime={seconds}", "--set", f"file_size={FILE_SIZE}", "--json"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=seconds * 10 + 120)
    if done.returncode != 0:
        raise RuntimeError(f"benchbay failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    step = json.loads(done.stdout)["steps"][0]
    busiest = step.get("busiest_client") or {}
    return float(step["ops"]), float(busiest.get("cpu_share") or 0.0), bool(step.get("client_limit"))


def _fio(directory: Path, rw: str, bs: int, threads: int, seconds: int) -> tuple[float, bool]:
    direct = bs % 512 == 0
    argv = ["fio", "--name=shared", f"--directory={directory}", f"--rw={rw}", f"--bs={bs}", f"--size={FILE_SIZE}",
            f"--numjobs={threads}", "--thread", f"--direct={int(direct)}", "--ioengine=psync", "--time_based",
            f"--runtime={seconds}", "--group_reporting", "--output-format=json"]
    if rw == "write":
        argv.append("--sync=1")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds * 10 + 120)
    if done.returncode != 0:
        raise RuntimeError(f"fio failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    job = json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]
    for name in Path(directory).glob("shared.*"):
        name.unlink()
    return float(job[rw]["iops"]), direct


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="where both write (default: a temporary directory here)")
    parser.add_argument("--threads", default="1,4,16")
    parser.add_argument("--bs", default="1,4096")
    parser.add_argument("--rw", default="write,read")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if shutil.which("fio") is None:
        print("shared_engine_vs_fio.py needs fio", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="benchbay-shared-vs-fio-", dir=Path.cwd()))
    try:
        directory = args.dir or (work / "shared")
        directory.mkdir(parents=True, exist_ok=True)
        home = work / "home"
        home.mkdir()
        print(f"# one client on this machine, {args.seconds} s per run, {args.rounds} rounds, in {directory}; "
              f"load before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
        print(f"{'rw':<6} {'bs':>5} {'threads':>7} {'benchbay op/s':>14} {'fio op/s':>10} {'ratio':>6} "
              f"{'client CPU':>10}  Benchbay's note")
        for rw in args.rw.split(","):
            for bs in (int(v) for v in args.bs.split(",")):
                for threads in (int(v) for v in args.threads.split(",")):
                    ours, theirs, busy, noted, direct = [], [], [], [], True
                    for _ in range(args.rounds):
                        ops, share, said = _benchbay(home, directory, rw, bs, threads, args.seconds)
                        ours.append(ops)
                        busy.append(share)
                        noted.append(said)
                        ops, direct = _fio(directory, rw, bs, threads, args.seconds)
                        theirs.append(ops)
                    a, b = statistics.median(ours), statistics.median(theirs)
                    share = statistics.median(busy)
                    flagged = f"client may be the limit ({sum(noted)} of {len(noted)})" if any(noted) else "-"
                    note = "" if direct else "  (fio without O_DIRECT: bs is not a multiple of 512)"
                    print(f"{rw:<6} {bs:>5} {threads:>7} {a:>14.0f} {b:>10.0f} {a / b if b else float('nan'):>6.2f} "
                          f"{share * 100:>9.0f}%  {flagged}{note}", flush=True)
        print(f"# load after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
