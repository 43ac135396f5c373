"""Noise floors: how far a test's headline figures move from one run to the next on identical hosts.

    sudo .venv/bin/python benchmarks/noise_floors.py [--runs 5] [--tests cpu,disk] [--write resources/noise_floors.json]

Runs each test's quick preset `--runs` times, round after round, on identical hosts: two loopback sshd test
hosts in cgroups with the same capacity (a whole CPU each, an ext4 loop disk each: tests/fixtures/
capacity_hosts.py; needs root) and `local` (this machine, its own disk). Each run goes through the real run
engine and store, as `benchbay run` does. Per figure (the catalogue's headline figures, plus the p99 and
p99.9 latencies of the disk jobs), the relative standard deviation over the runs of each group of identical
hosts: the twins' runs pooled (a difference between them counts as noise too); the figure's floor is the 95 %
upper confidence bound of that (chi-square). `local`'s variation is printed and said beside it: this machine is
shared, and a busy host's variation is not a quiet server's. Prints min/median/max per host and the machine's
load; with --write, puts the floors into the JSON file the comparison reads (tests not measured keep theirs).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from scipy.stats import chi2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.catalogue import CATALOGUE  # noqa: E402
from app.compare.metrics import figures  # noqa: E402
from app.engine.orchestrator import RunControl, RunRequest, execute_run  # noqa: E402
from app.workbench import Workbench  # noqa: E402
from remote.hostspec import AUTH_KEY, HostSpec  # noqa: E402
from tests.fixtures.capacity_hosts import SHAPES, capacity_host_set, standalone_session, unavailable  # noqa: E402
from tests.fixtures.sshd import ssh_keygen_fingerprint  # noqa: E402

TWINS = ("twin-a", "twin-b")
TAILS = ("lat_p99", "lat_p99.9")
TAIL_JOBS = ("randread_4k", "syncwrite_4k")


def figure_keys(test: str) -> list[str]:
    keys = [m.key for m in CATALOGUE.compared_metrics() if m.test == test]
    if test == "disk":
        keys += [f"disk:{job}.{tail}" for job in TAIL_JOBS for tail in TAILS if f"disk:{job}.{tail}" not in keys]
    return keys


def run_values(bench: Workbench, host: str, test: str) -> dict[str, float]:
    outcome = execute_run(bench, RunRequest(host, test, {"preset": "quick"}, interval=1.0), RunControl())
    if outcome.status != "done":
        raise RuntimeError(f"{test} on {host}: {outcome.status} {outcome.error}")
    results = bench.store.runs.get(outcome.run_id).results
    found = {key: figure.value for key, figure in figures(results).items()}
    found.update({f"{r.test}:{r.metric}": float(r.value) for r in results if r.value is not None})
    return {key: found[key] for key in figure_keys(test) if key in found}


def rsd(values: list[float]) -> float:
    mean = statistics.fmean(values)
    return 100.0 * statistics.stdev(values) / mean if len(values) > 1 and mean else 0.0


def upper_bound(rsd_percent: float, n: int) -> float:
    """The 95 % upper confidence bound of a standard deviation estimated from n runs (chi-square, n - 1 degrees
    of freedom): ten runs can show a spread well below the true one, and a floor too low names false winners."""
    return rsd_percent * math.sqrt((n - 1) / chi2.ppf(0.025, n - 1))


def floor_entry(twins_rsd: float, twins_n: int, local_rsd: float, local_n: int, runs: int, load_1min: str) -> dict:
    """A figure's entry in the floors file. The floor comes from the identical hosts, whose CPU the cgroups
    guarantee (the run-to-run variation of a quiet server); `local` shares this machine with whatever else runs
    on it, so its variation is said beside the floor, not taken as it."""
    floor = upper_bound(twins_rsd, twins_n)
    return {
        "rsd_percent": round(max(floor, 0.1), 1), "runs": twins_n, "hosts": 2,
        "how": (f"Quick preset, {runs} single runs on each of two identical loopback test hosts (a whole CPU each by "
                f"cgroup quota and weight, an ext4 disk each on a tmpfs-backed loop device), in rounds: their "
                f"{twins_n} runs varied {twins_rsd:.1f} % (relative standard deviation between runs, both hosts "
                f"pooled); the floor is its 95 % upper confidence bound. For comparison, the same runs on a shared "
                f"2-core machine's own CPUs and disk at load {load_1min} varied {local_rsd:.1f} % ({local_n} runs): "
                f"a busy host varies more than any floor says."),
    }


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per host and test (at least 5)")
    parser.add_argument("--tests", default="cpu,disk")
    parser.add_argument("--write", metavar="FILE", help="merge the floors into this JSON file")
    parser.add_argument("--raw", metavar="FILE", help="also write every run's figures, per host, as JSON")
    args = parser.parse_args()
    tests = [t.strip() for t in args.tests.split(",") if t.strip()]
    if args.runs < 5:
        parser.error("--runs: at least 5")
    reason = unavailable()
    if reason:
        print(f"cannot make the identical test hosts: {reason}", file=sys.stderr)
        return 1
    shapes = tuple(s for s in SHAPES if s.name in TWINS)
    # host -> test -> key -> values
    values: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    loads = [load()]
    started = time.monotonic()
    with standalone_session() as (root, session), capacity_host_set(root, session, shapes) as hosts, \
            tempfile.TemporaryDirectory(prefix="benchbay-floors-") as tmp:
        empty = Path(tmp, "ssh_config")
        empty.write_text("")
        bench = Workbench(home=Path(tmp, "home"), db_url=f"sqlite:///{tmp}/store.sqlite3", ssh_config_path=empty,
                          user_known_hosts=Path(tmp, "known_hosts"))
        try:
            for name in TWINS:
                host = hosts[name]
                bench.add_host(HostSpec(name, host.host.address, host.host.port, host.host.user, AUTH_KEY,
                                        str(host.host.client_key_path), test_dir=str(host.test_dir)))
                bench.trust_host(name, ssh_keygen_fingerprint(host.host.host_key_path))
            for round_ in range(1, args.runs + 1):
                for test in tests:
                    for name in (*TWINS, "local"):
                        began = time.monotonic()
                        for key, value in run_values(bench, name, test).items():
                            values[name][test][key].append(value)
                        loads.append(load())
                        print(f"# round {round_}/{args.runs}: {test} on {name}, {time.monotonic() - began:.0f} s, "
                              f"load {loads[-1]}", file=sys.stderr, flush=True)
        finally:
            bench.close()
        described = hosts.describe()

    if args.raw:
        Path(args.raw).write_text(json.dumps(values, indent=1) + "\n")
    floors: dict[str, dict[str, dict]] = {}
    print(f"# quick preset, {args.runs} runs per host, {time.monotonic() - started:.0f} s; cgroups: {described}")
    print(f"# load (1, 5, 15 min) before, during, after: {loads[0]} / {loads[len(loads) // 2]} / {loads[-1]}")
    print(f"{'figure':<32}{'host':<8}{'min':>11}{'median':>11}{'max':>11}{'RSD %':>8}")
    for test in tests:
        for key in figure_keys(test):
            twins = [v for name in TWINS for v in values[name][test].get(key, [])]
            local = values["local"][test].get(key, [])
            if len(twins) < 2 * args.runs or len(local) < args.runs:
                continue
            for name in (*TWINS, "local"):
                series = values[name][test][key]
                print(f"{key:<32}{name:<8}{min(series):>11.4g}{statistics.median(series):>11.4g}"
                      f"{max(series):>11.4g}{rsd(series):>8.1f}")
            floor = floor_entry(rsd(twins), len(twins), rsd(local), len(local), args.runs,
                                loads[len(loads) // 2].split()[0])
            print(f"{key:<32}{'floor':<8}{'':>33}{floor['rsd_percent']:>8.1f}   (twins pooled {rsd(twins):.1f}, "
                  f"its 95 % upper bound; local {rsd(local):.1f})")
            floors.setdefault(test, {})[key] = floor
    if args.write:
        path = Path(args.write)
        current = json.loads(path.read_text()) if path.exists() else {}
        for test, entries in floors.items():
            current[test] = entries   # a measured test is replaced whole: no guessed entry stays beside it
        path.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n")
        print(f"# wrote {', '.join(floors)} to {path}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
    sys.exit(130)
