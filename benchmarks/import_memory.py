"""Memory and time of exporting and importing a large run document (`benchbay export` / `benchbay import`).

    python benchmarks/import_memory.py [--mb 240] [--tags 100000]
    python benchmarks/import_memory.py --points 12000000 [--rounds 3]

Fills a temporary SQLite store with runs of telemetry (series of random floats, as long monitors make)
until the export reaches about --mb megabytes, plus one run with --tags tags. Then, each in a fresh
process so the peaks do not mix: the export to a file (as `benchbay export --out FILE` does) and the
import of that file into an empty store (as `benchbay import FILE` does). Prints, for each, the seconds,
the peak resident memory above the process's baseline (resource.getrusage ru_maxrss) and that peak as a
ratio of the document's size.

With --points N: one run with one series of N points instead (a month of 1 s telemetry is 2.6 M), the
document written directly (an export of it would measure the export), then imported --rounds times, each
in a fresh process into an empty store; prints each round and the min/median/max of seconds and peak memory.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from storage.db import open_store  # noqa: E402
from storage.records import ResultSample, SeriesData  # noqa: E402
from storage.run_exchange import DOCUMENT_FORMAT, DOCUMENT_VERSION, import_file, write_runs  # noqa: E402

SERIES_PER_RUN = 8
POINTS_PER_SERIES = 20_000
BYTES_PER_POINT = 42          # "t" and "value" as JSON text with indentation, measured on this generator


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux


def _fill(db: str, megabytes: float, tags: int) -> list[int]:
    store = open_store(db)
    rng = random.Random(1)
    per_run = SERIES_PER_RUN * POINTS_PER_SERIES * BYTES_PER_POINT
    count = max(1, round(megabytes * 1e6 / per_run))
    ids = []
    try:
        for n in range(count):
            run_id = store.runs.create(f"host-{n % 20}", "monitor", {"interval": 1.0})
            t = [i * 1.0 for i in range(POINTS_PER_SERIES)]
            store.runs.add_series(run_id, [
                SeriesData(f"metric-{k}", "sda", "%", t, [rng.random() * 100 for _ in t])
                for k in range(SERIES_PER_RUN)
            ])
            store.runs.add_results(run_id, [ResultSample("monitor", "samples", float(POINTS_PER_SERIES), "", {})])
            store.runs.finish(run_id, "done")
            ids.append(run_id)
        if tags:
            run_id = store.runs.create("tagged", "monitor", {})
            store.runs.finish(run_id, "done")
            store.runs.set_tags(run_id, [f"tag-{i}" for i in range(tags)])
            ids.append(run_id)
    finally:
        store.close()
    return ids


def _huge_series_document(path: str, points: int) -> None:
    """One run holding one series of `points` points, written a slice at a time."""
    rng = random.Random(1)
    run = {"uid": f"{rng.getrandbits(128):032x}", "host_name": "db1", "test": "monitor", "status": "done",
           "parameters": {"interval": 1.0}, "started_at": "2026-11-01T00:00:00+00:00",
           "finished_at": "2026-11-30T00:00:00+00:00", "agent_version": "", "engine": "sampler",
           "engine_version": "", "error": "", "tags": [], "notes": "", "facts": [], "results": [], "events": []}
    head = json.dumps({"format": DOCUMENT_FORMAT, "version": DOCUMENT_VERSION, "runs": [run]})
    before, after = head.split('"events": []', 1)
    step = 100_000
    with open(path, "w", encoding="utf-8") as out:
        out.write(before + '"events": [], "series": [{"name": "disk.util", "device": "sda", "unit": "%", "t": [')
        for start in range(0, points, step):
            out.write(("," if start else "") + ",".join(f"{i}.0" for i in range(start, min(points, start + step))))
        out.write('], "values": [')
        for start in range(0, points, step):
            count = min(points, start + step) - start
            out.write(("," if start else "") + ",".join(f"{rng.random() * 100:.2f}" for _ in range(count)))
        out.write("]}]" + after)


def _huge_series(points: int, rounds: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        document = str(Path(tmp) / "runs.json")
        began = time.perf_counter()
        _huge_series_document(document, points)
        size_mb = Path(document).stat().st_size / 1e6
        print(f"document: {size_mb:.1f} MB, one run with one series of {points:,} points "
              f"(written in {time.perf_counter() - began:.0f} s); load {os.getloadavg()[0]:.1f}", flush=True)
        figures = []
        for n in range(rounds):
            target = f"sqlite:///{Path(tmp) / f'target-{n}.sqlite3'}"
            figures.append(_phase(["--phase", "import", "--db", target, "--file", document]))
            print(f"import {n + 1}: {figures[-1]['seconds']:.1f} s, peak memory +{figures[-1]['peak_mb']:.0f} MB "
                  f"({figures[-1]['peak_mb'] / size_mb:.2f}x the document); load {os.getloadavg()[0]:.1f}",
                  flush=True)
            Path(target.removeprefix("sqlite:///")).unlink()
    for what, unit in (("seconds", "s"), ("peak_mb", "MB")):
        values = [f[what] for f in figures]
        print(f"{what}: min {min(values):.1f} {unit}, median {statistics.median(values):.1f} {unit}, "
              f"max {max(values):.1f} {unit}")
    return 0


def _phase(argv: list[str]) -> dict[str, float]:
    """Run one phase in a new process and read its JSON line."""
    done = subprocess.run([sys.executable, __file__, *argv], check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _export(db: str, ids: list[int], out: str) -> dict[str, float]:
    store = open_store(db)
    base = _peak_mb()
    began = time.perf_counter()
    with open(out, "w", encoding="utf-8", newline="") as handle:
        write_runs(store, ids, handle)
    seconds = time.perf_counter() - began
    store.close()
    return {"seconds": seconds, "peak_mb": _peak_mb() - base}


def _import(db: str, path: str) -> dict[str, float]:
    store = open_store(db)
    base = _peak_mb()
    began = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        report = import_file(store, handle, path)
    seconds = time.perf_counter() - began
    store.close()
    return {"seconds": seconds, "peak_mb": _peak_mb() - base, "runs": len(report.imported)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=240.0, help="size of the export to make, in MB")
    parser.add_argument("--tags", type=int, default=100_000, help="tags on one extra run")
    parser.add_argument("--points", type=int, default=0, help="one series of this many points instead")
    parser.add_argument("--rounds", type=int, default=1, help="with --points: imports, each in a new process")
    parser.add_argument("--phase", choices=("export", "import"), help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    parser.add_argument("--ids", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "export":
        print(json.dumps(_export(args.db, [int(i) for i in args.ids.split(",")], args.file)))
        return 0
    if args.phase == "import":
        print(json.dumps(_import(args.db, args.file)))
        return 0
    if args.points:
        return _huge_series(args.points, args.rounds)

    with tempfile.TemporaryDirectory() as tmp:
        source, target = f"sqlite:///{Path(tmp) / 'source.sqlite3'}", f"sqlite:///{Path(tmp) / 'target.sqlite3'}"
        document = str(Path(tmp) / "runs.json")
        ids = _fill(source, args.mb, args.tags)
        exported = _phase(["--phase", "export", "--db", source, "--ids", ",".join(map(str, ids)), "--file", document])
        size_mb = Path(document).stat().st_size / 1e6
        imported = _phase(["--phase", "import", "--db", target, "--file", document])
    print(f"document: {size_mb:.1f} MB, {len(ids)} runs (one with {args.tags} tags)")
    for name, figures in (("export", exported), ("import", imported)):
        print(f"{name}: {figures['seconds']:.1f} s, {size_mb / figures['seconds']:.1f} MB/s, peak memory "
              f"+{figures['peak_mb']:.0f} MB = {figures['peak_mb'] / size_mb:.2f}x the document")
    return 0


if __name__ == "__main__":
    sys.exit(main())
