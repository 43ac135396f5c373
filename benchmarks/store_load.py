"""Storing and loading the telemetry of 8 hosts x 1 hour at 1 s, on SQLite in a temporary directory.

    python benchmarks/store_load.py [--hosts 8] [--seconds 3600] [--disks 2]

Makes realistic samples (every key: CPU, load, tasks, memory, PSI, two disks with all 12 iostat
fields), then times what the run engine does when a run ends (samples_to_series, then
RunRepository.add_series for each host's run) and what opening a stored run's graphs does
(RunRepository.series, then series_to_samples). Prints the seconds of each; the goal is < 1 s each.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from remote.telemetry.sample import samples_to_series, series_to_samples  # noqa: E402
from storage.db import open_store  # noqa: E402
from tests.fixtures.telemetry import synthetic_samples  # noqa: E402

T0 = 1_700_000_000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=3600)
    parser.add_argument("--disks", type=int, default=2)
    args = parser.parse_args()
    disks = tuple(f"sd{chr(ord('a') + i)}" for i in range(args.disks))
    hosts = {f"host-{i + 1}": synthetic_samples(args.seconds, t0=T0, disks=disks, seed=i) for i in range(args.hosts)}
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'store.sqlite3'}")
        try:
            run_ids = {host: store.runs.create(host, "monitor", {"interval": 1.0}) for host in hosts}
            began = time.perf_counter()
            series_count = values = 0
            for host, samples in hosts.items():
                series = samples_to_series(samples, T0)
                series_count += len(series)
                values += sum(len(s.values) for s in series)
                store.runs.add_series(run_ids[host], series)
            stored = time.perf_counter() - began

            began = time.perf_counter()
            loaded = {host: series_to_samples(store.runs.series(run_id), T0) for host, run_id in run_ids.items()}
            load = time.perf_counter() - began
        finally:
            store.close()
        size = (Path(tmp) / "store.sqlite3").stat().st_size
    assert all(len(loaded[h]) == args.seconds for h in hosts), "a sample went missing"
    assert loaded["host-1"][-1].disks[disks[0]] == hosts["host-1"][-1].disks[disks[0]]
    print(f"{args.hosts} hosts x {args.seconds} samples, {args.disks} disks: {series_count} series, "
          f"{values:,} values, {size / 1e6:.1f} MB in SQLite")
    print(f"store (samples_to_series + add_series): {stored:.3f} s  {'(< 1 s)' if stored < 1 else '(over 1 s)'}")
    print(f"load  (series + series_to_samples):     {load:.3f} s  {'(< 1 s)' if load < 1 else '(over 1 s)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
