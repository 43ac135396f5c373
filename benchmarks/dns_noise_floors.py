"""DNS noise floors: how far the dns test's figures move from one run to the next against the same resolver.

    sudo .venv/bin/python benchmarks/dns_noise_floors.py [--runs 10] [--names 2000] [--stamps read|kernel]
                                                         [--raw FILE] [--write resources/noise_floors.json]
                                                         [--keep-wider]

Starts the test suite's resolvers on loopback (tests/fixtures/dns_servers.py: NSD serving the test zone,
Unbound in front; needs nsd and unbound, and root or the right to bind 127.0.0.x) and runs the dns test
`--runs` times on `local` through the real run engine and store, as `benchbay run local --test dns` does:
its default settings (10 in flight, timeouts 1 s then 2 s, cold then warm pass) and a list of `--names`
names of the zone, 5 % of them missing (NXDOMAIN). Each run gets a fresh Unbound, so its cold pass is cold.
Per figure (queries per second, p50, p99, the list's total time) and pass, the relative standard deviation
between the runs; a figure's floor is the 95 % upper confidence bound (chi-square) of the larger of its
cold and warm variation. Prints min / median / max per figure and pass and the load average; with --write,
replaces the dns entries of the JSON file the comparison reads for single runs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine.orchestrator import RunControl, RunRequest, execute_run  # noqa: E402
from app.workbench import Workbench  # noqa: E402
from benchmarks import dns_rig  # noqa: E402
from benchmarks.noise_floors import load, rsd, upper_bound  # noqa: E402

FIGURES = ("qps", "p50_ms", "p99_ms", "total_s")
PASSES = ("cold", "warm")


def one_run(bench: Workbench, root: Path, auth: dns_rig.Authorities, listing: Path, index: int,
            stamps: str = "read") -> dict[str, float]:
    """(pass, figure) -> value of one run against a fresh Unbound."""
    with dns_rig.unbound(root / f"unbound-{index}", auth) as unbound:
        request = RunRequest("local", "dns", {"resolvers": unbound.spec, "queries": str(listing), "stamps": stamps},
                             interval=1.0)
        outcome = execute_run(bench, request, RunControl())
        if outcome.status != "done":
            raise RuntimeError(f"dns on local: {outcome.status} {outcome.error}")
    out = {}
    for result in bench.store.runs.get(outcome.run_id).results:
        if result.metric in FIGURES and result.value is not None:
            out[f"{result.metadata.get('pass')}:{result.metric}"] = float(result.value)
    return out


def measure(runs: int, names: int, stamps: str = "read") -> dict:
    values: dict[str, list[float]] = defaultdict(list)
    loads = [load()]
    with dns_rig.scratch("benchbay-dnsfloors-") as root, dns_rig.authorities(root) as auth:
        listing = dns_rig.zone_list(names, max(1, names * 5 // 100)).write(root / "queries.txt")
        empty = root / "ssh_config"
        empty.write_text("")
        bench = Workbench(home=root / "home", db_url=f"sqlite:///{root}/store.sqlite3", ssh_config_path=empty,
                          user_known_hosts=root / "known_hosts")
        try:
            for index in range(1, runs + 1):
                began = time.monotonic()
                for key, value in one_run(bench, root, auth, listing, index, stamps).items():
                    values[key].append(value)
                loads.append(load())
                print(f"# run {index}/{runs}: {time.monotonic() - began:.0f} s, load {loads[-1]}", file=sys.stderr,
                      flush=True)
        finally:
            bench.close()
    return {"values": values, "loads": [float(x.split()[0]) for x in loads], "runs": runs, "names": names,
            "stamps": stamps}


def floors(document: dict) -> dict[str, dict]:
    values, runs, names = document["values"], document["runs"], document["names"]
    loads = document["loads"]
    load_words = f"{min(loads):.1f}-{max(loads):.1f}"
    print(f"# dns test, defaults, {names:,} names (5 % missing), {runs} runs on local against a fresh Unbound "
          f"each; load average (1 min) {load_words}")
    print(f"{'figure':<16}{'pass':<6}{'min':>11}{'median':>11}{'max':>11}{'RSD %':>8}")
    out: dict[str, dict] = {}
    for figure in FIGURES:
        spread = {}
        for pass_ in PASSES:
            series = values.get(f"{pass_}:{figure}", [])
            if len(series) < 2:
                continue
            spread[pass_] = rsd(series)
            print(f"{figure:<16}{pass_:<6}{min(series):>11.4g}{statistics.median(series):>11.4g}"
                  f"{max(series):>11.4g}{spread[pass_]:>8.1f}")
        if not spread:
            continue
        worst = max(spread, key=lambda p: spread[p])
        n = len(values[f"{worst}:{figure}"])
        floor = upper_bound(spread[worst], n)
        out[f"dns:{figure}"] = {
            "rsd_percent": round(max(floor, 0.1), 1), "runs": n, "hosts": 1,
            "how": (f"The dns test's default settings (10 in flight, timeouts 1 s then 2 s, {timed(document)}) with a "
                    f"list of {names:,} "
                    f"names (5 % missing), {n} runs one after another from one host against a local Unbound in "
                    f"front of a local authority on loopback, a fresh Unbound each run: the runs varied "
                    + ", ".join(f"{spread[p]:.1f} % in the {p} pass" for p in spread)
                    + f" (relative standard deviation between runs); the floor is the 95 % upper confidence bound "
                    f"of the larger. The host was a shared 2-core machine (load average {load_words}), client and "
                    f"resolver on its CPUs: a resolver across a network adds the network's own variation."),
        }
    return out


def pooled(documents: list[dict]) -> dict:
    """Several measurements' runs as one (the same list size)."""
    if len({d["names"] for d in documents}) != 1:
        raise SystemExit("--from-raw: measurements of different list sizes")
    values: dict[str, list[float]] = defaultdict(list)
    for document in documents:
        for key, series in document["values"].items():
            values[key] += series
    stamps = {d.get("stamps", "read") for d in documents}
    if len(stamps) > 1:
        raise SystemExit("--from-raw: runs that timed answers differently are not pooled")
    return {"values": values, "loads": [x for d in documents for x in d["loads"]],
            "runs": sum(d["runs"] for d in documents), "names": documents[0]["names"], "stamps": stamps.pop()}


def timed(document: dict) -> str:
    return "answers timed when read" if document.get("stamps", "read") == "read" else "answers timed by the kernel"


def wider(old: dict[str, dict], new: dict[str, dict], how: str) -> dict[str, dict]:
    """Per figure the wider of an earlier floor and a new one: a quieter machine's runs do not narrow a floor
    that busier runs measured; the kept floor's text says what the new runs varied."""
    out = {}
    for key, entry in new.items():
        before = old.get(key)
        if before is None or before["rsd_percent"] <= entry["rsd_percent"]:
            out[key] = entry
            continue
        earlier = before["how"].split(" Measured again")[0]
        out[key] = dict(before, how=f"{earlier} Measured again later ({entry['runs']} runs, {how}): "
                                    f"floor {entry['rsd_percent']:.1f} %; the wider floor is kept.")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs (at least 5)")
    parser.add_argument("--names", type=int, default=2000)
    parser.add_argument("--stamps", choices=("read", "kernel"), default="read",
                        help="how the runs time their answers (the test's stamps; read is its default)")
    parser.add_argument("--raw", metavar="FILE", help="also write every run's figures as JSON")
    parser.add_argument("--from-raw", metavar="FILE", action="append",
                        help="the floors from earlier --raw files, their runs pooled")
    parser.add_argument("--write", metavar="FILE", help="replace the dns floors in this JSON file")
    parser.add_argument("--keep-wider", action="store_true",
                        help="with --write: keep the file's floor where it is wider than the measured one (says so)")
    args = parser.parse_args()
    if args.from_raw:
        document = pooled([json.loads(Path(name).read_text()) for name in args.from_raw])
    else:
        if args.runs < 5:
            parser.error("--runs: at least 5")
        document = measure(args.runs, args.names, args.stamps)
        if args.raw:
            Path(args.raw).write_text(json.dumps(document, indent=1) + "\n")
    found = floors(document)
    if args.write:
        path = Path(args.write)
        current = json.loads(path.read_text()) if path.exists() else {}
        if args.keep_wider:
            found = wider(current.get("dns", {}), found, timed(document))
        current["dns"] = found    # measured: no guessed entry stays beside these
        path.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n")
        print(f"# wrote {len(found)} dns floors to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
