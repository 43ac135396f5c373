"""Noise floors: how far a test's headline figures move from one run to the next on identical hosts.

    sudo .venv/bin/python benchmarks/noise_floors.py [--runs 5] [--tests cpu,disk] [--write resources/noise_floors.json]
    .venv/bin/python benchmarks/noise_floors.py --real-disk DIR [--runs 10] [--write resources/noise_floors.json]
    .venv/bin/python benchmarks/noise_floors.py --from-raw RAW [--from-raw RAW2] [--write ...]

Runs each test's quick preset `--runs` times, round after round, on identical hosts: two loopback sshd test
hosts in cgroups with the same capacity (a whole CPU each, an ext4 loop disk each: tests/fixtures/
capacity_hosts.py; needs root) and `local` (this machine, its own disk). Each run goes through the real run
engine and store, as `benchbay run` does. Per figure (the catalogue's headline figures, plus the p99 and
p99.9 latencies of the disk jobs), the relative standard deviation over the runs of each group of identical
hosts: the twins' runs pooled (a difference between them counts as noise too); the figure's floor is the 95 %
upper confidence bound of that (chi-square). `local`'s variation is printed and said beside it: this machine is
shared, and a busy host's variation is not a quiet server's. Prints min/median/max per host and the machine's
load; with --write, puts the floors into the JSON file the comparison reads (tests not measured keep theirs).

--real-disk DIR: the disk floors from a real disk instead. DIR must be on a disk-backed filesystem (not
tmpfs, not a loop device); the disk test's quick preset runs `--runs` times on `local` with DIR as its test
directory (fio when installed, O_DIRECT), and each figure's floor is the 95 % upper bound of those runs'
variation. The entries say the filesystem, the device's kind, the engine and the load they were measured at.
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
from remote.agent import disk_fio  # noqa: E402
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


def run_values(bench: Workbench, host: str, test: str, test_dir: str = "") -> dict[str, float]:
    params = {"preset": "quick", **({"test_dir": test_dir} if test_dir else {})}
    outcome = execute_run(bench, RunRequest(host, test, params, interval=1.0), RunControl())
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


def mount_of(directory: Path) -> tuple[str, str]:
    """(filesystem type, device) of the mount that holds directory: the longest mount point above it."""
    best = ("", "", "")
    for line in Path("/proc/self/mounts").read_text().splitlines():
        device, point, fstype = line.split()[:3]
        point = point.replace("\\040", " ")
        inside = str(directory) == point or str(directory).startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best[1]):
            best = (device, point, fstype)
    return best[2], best[0]


def device_kind(device: str) -> str:
    """What the disk under a device node is, in words (no names of this machine): virtio, NVMe, SCSI/SATA."""
    name = Path(device).name
    if name.startswith("loop") or not device.startswith("/dev/"):
        return ""
    if name.startswith("vd"):
        return "a virtio disk of a virtual machine"
    if name.startswith("nvme"):
        return "an NVMe disk"
    if name.startswith(("sd", "xvd")):
        return "a SCSI/SATA disk"
    return "a block device"


def real_disk_entry(series: list[float], fstype: str, kind: str, engine: str, loads: str,
                    nearer_tail: tuple[str, float] | None = None) -> dict:
    """A disk figure's floor from runs on one real disk: the 95 % upper bound of their variation. A p99.9 is
    never given a narrower floor than the same job's p99 (`nearer_tail`): a few dozen I/Os lie beyond it in a
    short run, and fio's bucketed percentiles can repeat one value run after run by chance."""
    value = rsd(series)
    floor = upper_bound(value, len(series))
    how = (f"Measured on a real disk: the disk test's quick preset, {len(series)} single runs one after another "
           f"on one host, its test directory on {fstype} on {kind} ({engine}, O_DIRECT); the runs varied "
           f"{value:.1f} % (relative standard deviation between runs); the floor is its 95 % upper confidence "
           f"bound. The host was a 2-core virtual machine whose disk and CPUs other work shared (load average "
           f"{loads}): a quiet server on its own disk may vary less, so this floor errs towards can't tell yet "
           f"rather than a false winner.")
    if nearer_tail is not None and nearer_tail[1] > floor:
        how += (f" Raised from {floor:.1f} % to the {nearer_tail[0]} floor: a tail further out is not steadier "
                f"than a nearer one, and few I/Os lie beyond p99.9 in a short run.")
        floor = nearer_tail[1]
    return {"rsd_percent": round(max(floor, 0.1), 1), "runs": len(series), "hosts": 1, "how": how}


def measure_real_disk(directory: Path, runs: int, raw: str | None) -> dict | None:
    """The disk test's figures of `runs` runs on the disk that holds directory, with where and how."""
    fstype, device = mount_of(directory.resolve())
    kind = device_kind(device)
    if fstype in ("tmpfs", "ramfs") or not kind:
        print(f"{directory} is on {fstype or 'an unknown filesystem'} ({device or '?'}): give a directory on a "
              f"disk-backed filesystem (not tmpfs, not a loop device)", file=sys.stderr)
        return None
    values: dict[str, list[float]] = defaultdict(list)
    loads = [load()]
    with tempfile.TemporaryDirectory(prefix="benchbay-floors-") as tmp, \
            tempfile.TemporaryDirectory(prefix="benchbay-floors-disk-", dir=directory) as test_dir:
        empty = Path(tmp, "ssh_config")
        empty.write_text("")
        bench = Workbench(home=Path(tmp, "home"), db_url=f"sqlite:///{tmp}/store.sqlite3", ssh_config_path=empty,
                          user_known_hosts=Path(tmp, "known_hosts"))
        try:
            for round_ in range(1, runs + 1):
                began = time.monotonic()
                for key, value in run_values(bench, "local", "disk", test_dir).items():
                    values[key].append(value)
                loads.append(load())
                print(f"# run {round_}/{runs}: disk on a real disk, {time.monotonic() - began:.0f} s, load {loads[-1]}",
                      file=sys.stderr, flush=True)
        finally:
            bench.close()
    fio = disk_fio.available()   # the agent picks fio when the host has it (engine auto)
    document = {"values": values, "loads": [float(x.split()[0]) for x in loads], "fstype": fstype, "kind": kind,
                "engine": fio.split("-")[0] if fio else "the built-in engine"}
    if raw:
        Path(raw).write_text(json.dumps(document, indent=1) + "\n")
    return document


def real_disk_floors(documents: list[dict], write: str | None) -> int:
    """The floors of one or more measurements (their runs pooled), printed and merged into `write`."""
    first = documents[0]
    values: dict[str, list[float]] = defaultdict(list)
    for document in documents:
        for key, series in document["values"].items():
            values[key] += series
    loads = [x for document in documents for x in document["loads"]]
    runs = max(len(series) for series in values.values())
    load_words = f"{min(loads):.1f}-{max(loads):.1f}"
    print(f"# quick preset, {runs} runs on {first['fstype']} on {first['kind']}; engine {first['engine']}; "
          f"load average (1 min) {load_words}")
    print(f"{'figure':<32}{'min':>11}{'median':>11}{'max':>11}{'RSD %':>8}{'floor %':>9}")
    floors: dict[str, dict] = {}
    for key in figure_keys("disk"):
        series = values.get(key, [])
        if len(series) < runs:
            continue
        nearer = key.replace(".lat_p99.9", ".lat_p99") if key.endswith(".lat_p99.9") else None
        nearer_tail = (nearer.partition(".")[2].replace("lat_", ""), floors[nearer]["rsd_percent"]) \
            if nearer in floors else None
        entry = real_disk_entry(series, first["fstype"], first["kind"], first["engine"], load_words, nearer_tail)
        print(f"{key:<32}{min(series):>11.4g}{statistics.median(series):>11.4g}{max(series):>11.4g}"
              f"{rsd(series):>8.1f}{entry['rsd_percent']:>9.1f}")
        floors[key] = entry
    if write:
        path = Path(write)
        current = json.loads(path.read_text()) if path.exists() else {}
        current.setdefault("disk", {}).update(floors)   # entries not measured here keep theirs
        path.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n")
        print(f"# wrote {len(floors)} disk floors to {path}")
    return 0


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per host and test (at least 5)")
    parser.add_argument("--tests", default="cpu,disk")
    parser.add_argument("--write", metavar="FILE", help="merge the floors into this JSON file")
    parser.add_argument("--raw", metavar="FILE", help="also write every run's figures, per host, as JSON")
    parser.add_argument("--real-disk", metavar="DIR", type=Path,
                        help="measure the disk floors on the real disk that holds DIR (on this machine, no twins)")
    parser.add_argument("--from-raw", metavar="FILE", action="append",
                        help="the disk floors from the --raw files of earlier --real-disk measurements, pooled")
    args = parser.parse_args()
    if args.from_raw:
        return real_disk_floors([json.loads(Path(f).read_text()) for f in args.from_raw], args.write)
    if args.real_disk is not None:
        if args.runs < 5:
            parser.error("--runs: at least 5")
        document = measure_real_disk(args.real_disk, args.runs, args.raw)
        return 1 if document is None else real_disk_floors([document], args.write)
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
