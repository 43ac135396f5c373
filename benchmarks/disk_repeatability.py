"""Repeatability of the disk test: the quick preset 5 times on `local`, through the real run engine.

    python benchmarks/disk_repeatability.py [--repeats 5] [--set key=value ...]

Each repeat is a whole run as `benchbay run local --test disk --preset quick` does it (execute_run,
the agent started detached, events and results stored) on a Workbench with a temporary home and
SQLite store. Prints per metric the mean, the standard deviation and the coefficient of variation
(stdev / mean) over the repeats. --set overrides a disk parameter (e.g. runtime=2 file_size=64M) to
make it shorter; the header says what ran.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.cli.run import parse_settings  # noqa: E402
from app.engine.orchestrator import RunControl, RunRequest, execute_run  # noqa: E402
from app.summary.base import number  # noqa: E402
from app.workbench import Workbench  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--set", action="append", default=[], dest="settings", metavar="KEY=VALUE")
    args = parser.parse_args()
    params = {"preset": "quick", **parse_settings(args.settings)}

    values: dict[tuple[str, str], list[float]] = {}
    engines: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="benchbay-repeat-") as tmp:
        bench = Workbench(home=Path(tmp, "home"), db_url=f"sqlite:///{tmp}/store.sqlite3")
        try:
            for repeat in range(1, args.repeats + 1):
                started = time.monotonic()
                outcome = execute_run(bench, RunRequest("local", "disk", params, interval=1.0), RunControl())
                if outcome.status != "done":
                    print(f"repeat {repeat}: {outcome.status} {outcome.error}", file=sys.stderr)
                    return 1
                for result in bench.store.runs.get(outcome.run_id).results:
                    values.setdefault((result.metric, result.unit), []).append(result.value)
                    engines.add(f"{result.metadata.get('engine')} {result.metadata.get('engine_version')}, "
                                f"{'cached' if result.metadata.get('cached') else 'direct'}")
                print(f"# repeat {repeat}: run {outcome.run_id}, {time.monotonic() - started:.0f} s",
                      file=sys.stderr, flush=True)
        finally:
            bench.close()

    print(f"# disk test {params} x {args.repeats} on local; engine: {'; '.join(sorted(engines))}")
    print(f"{'metric':<34}{'unit':<7}{'mean':>10}{'stdev':>10}{'CV':>8}")
    for (metric, unit), series in values.items():
        mean = statistics.fmean(series)
        stdev = statistics.stdev(series) if len(series) > 1 else 0.0
        cv = f"{100 * stdev / mean:.1f}%" if mean else "-"
        print(f"{metric:<34}{unit:<7}{number(mean):>10}{number(stdev):>10}{cv:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
