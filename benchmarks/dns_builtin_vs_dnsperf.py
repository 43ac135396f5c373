"""The dns test's built-in engine against dnsperf: same Unbound, same query list, same load.

    python benchmarks/dns_builtin_vs_dnsperf.py [--seconds 2] [--slices 5] [--in-flight 100] [--rate 2000]
                                                [--rounds 3] [--read-stamps]

Starts the test suite's resolvers on loopback (tests/fixtures/dns_servers.py: NSD serving bench.test.,
Unbound in front; needs nsd, unbound and dnsperf installed, and root or the right to bind 127.0.0.x), makes a
5,000-name list of the zone (names that exist and some that do not), sends it once to fill Unbound's cache,
then per round `--slices` pairs of short measurements, the two engines back to back (alternating which goes
first), so that a change in the machine's load hits both alike; a round's figure is the median of its pairs':

- max: as many queries as the engine sends in `--seconds` with `--in-flight` outstanding (dnsperf -q);
  the queries per second of each, and the ratio built-in / dnsperf (goal >= 0.9). dnsperf runs without -v
  here: printing a line per query would slow it down;
- rate: both engines at the same time, each at half of `--rate` queries a second for `--seconds` (dnsperf
  -Q) with per-query latencies (dnsperf -v, written to a file so that a full pipe never holds it up): the p50
  and p99 of each and how far the built-in one is from dnsperf's (goal within 10 %). Together, because on a
  busy machine a p99 is the resolver's and the client's worst scheduling delays of those seconds: measured
  one after the other, the two engines' tails are of different moments and disagree by tens of percent
  either way whatever their timing. dnsperf stamps a query just before its sendto and an answer just after
  its recv (a thread waiting in poll); the built-in engine stamps just before its send and takes the
  kernel's receive time of the answer (SO_TIMESTAMPNS), so the client's own wake-up is in dnsperf's
  latencies only. --read-stamps times the built-in engine's answers at the read instead, to show how much
  the client's own delays weigh.

Prints every round, then min / median / max over the rounds and the load average before and after: the
figures are only as quiet as the machine (a shared machine's other work shows in them).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from remote.agent import dns_clock, dns_dnsperf, dns_replay, dns_stats  # noqa: E402
from tests.fixtures.dns_authority import Blackhole, OddAuthority  # noqa: E402
from tests.fixtures.dns_query_list import build_query_list  # noqa: E402
from tests.fixtures.dns_servers import (  # noqa: E402
    ODD_ADDRESS,
    ODD_ZONE,
    VOID_ADDRESS,
    Authorities,
    odd_kind,
    start_nsd,
    start_unbound,
)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return dns_stats.percentile(ordered, pct)


def builtin(address: str, port: int, prepared: dns_replay.Prepared, seconds: float, window: int,
            rate: float | None) -> dict:
    # at a rate: that many queries; at most: far more than one core sends in the time, cut by `seconds`
    total = int(rate * seconds) if rate else int(seconds * 1_000_000)
    lanes = dns_replay.replay([(address, port)], prepared, window=window, rate=rate, timeouts=(3.0,),
                              tcp_fallback=False, total=total, seconds=None if rate else seconds)
    lane = lanes[0]
    figures = dns_stats.summarise(lane.columns(), max(lane.end - lane.start, 1e-6))
    return {"qps": figures["qps"], "p50": figures.get("p50_ms"), "p99": figures.get("p99_ms"),
            "lost": figures["timeouts"], "answered": figures["answered"]}


def dnsperf_argv(path: str, address: str, port: int, data: str, seconds: float, window: int,
                 rate: float | None, verbose: bool) -> list[str]:
    argv = [path, "-s", address, "-p", str(port), "-d", data, "-l", f"{seconds:g}", "-q", str(window), "-t", "3"]
    if rate:
        argv += ["-Q", str(int(rate))]
    if verbose:
        argv.append("-v")
    return argv


def dnsperf_figures(out: str, address: str, port: int) -> dict:
    found = dns_dnsperf.parse(out, f"{address}:{port}")
    latencies = [ms for ms in found["columns"].latency if ms is not None]
    return {"qps": found["qps"], "p50": percentile(latencies, 50) if latencies else None,
            "p99": percentile(latencies, 99) if latencies else None, "lost": found["lost"],
            "answered": found["completed"]}


def dnsperf(path: str, address: str, port: int, data: str, seconds: float, window: int, rate: float | None,
            verbose: bool) -> dict:
    argv = dnsperf_argv(path, address, port, data, seconds, window, rate, verbose)
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                         timeout=seconds + 60).stdout.decode("utf-8", "replace")
    return dnsperf_figures(out, address, port)


def together(path: str, address: str, port: int, data: str, prepared: dns_replay.Prepared, seconds: float,
             window: int, rate: float, scratch: Path) -> tuple[dict, dict]:
    """Both engines at rate/2 each over the same seconds: the same resolver stalls and machine load in both."""
    out_path = scratch / "dnsperf-v.txt"
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(dnsperf_argv(path, address, port, data, seconds, window, rate / 2, True),
                                stdout=out, stderr=subprocess.STDOUT)
        try:
            mine = builtin(address, port, prepared, seconds, window, rate / 2)
            proc.wait(timeout=seconds + 60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return mine, dnsperf_figures(out_path.read_text("utf-8", "replace"), address, port)


@contextlib.contextmanager
def read_stamps(on: bool):
    """The built-in engine without the kernel's receive stamps (answers timed at the read), for comparison."""
    if not on:
        yield
        return
    enable = dns_clock.enable
    dns_clock.enable = lambda sock: False
    try:
        yield
    finally:
        dns_clock.enable = enable


def spread(values: list[float]) -> str:
    return f"min {min(values):,.3g} / median {statistics.median(values):,.3g} / max {max(values):,.3g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--slices", type=int, default=5, help="pairs of measurements per round")
    parser.add_argument("--in-flight", type=int, default=100)
    parser.add_argument("--rate", type=float, default=2000.0, help="queries/s of the latency comparison")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--read-stamps", action="store_true",
                        help="time the built-in engine's answers at the read, not with the kernel's receive time")
    args = parser.parse_args()
    path = dns_dnsperf.find()
    if path is None or not shutil.which("unbound") and not os.access("/usr/sbin/unbound", os.X_OK):
        print("dnsperf and unbound are needed (Debian packages dnsperf, unbound, nsd)", file=sys.stderr)
        return 1
    version = dns_dnsperf.version(path) or "?"
    root = Path(tempfile.mkdtemp(prefix="bb-dnsbench-"))
    nsd = unbound = None
    odd = void = None
    try:
        nsd = start_nsd(root / "nsd")
        odd, void = OddAuthority(ODD_ADDRESS, ODD_ZONE, odd_kind), Blackhole(VOID_ADDRESS)
        unbound = start_unbound(root / "unbound", Authorities(nsd, odd, void))
        names = build_query_list(total=5000, missing=250, slow=0, servfail=0, big=0, lost=0)
        data = str(names.write(root / "queries.txt"))
        queries = [(name.rstrip("."), "A") for name in names.order]
        prepared = dns_replay.Prepared(queries)
        address, port = unbound.address, unbound.port
        builtin(address, port, prepared, 5.0, 50, None)     # Unbound's cache filled: both engines meet it warm
        load_before = os.getloadavg()
        stamping = "at the read" if args.read_stamps else "kernel receive time"
        print(f"Unbound {address}:{port}, {len(queries)} names (cached), dnsperf {version}, "
              f"{args.slices} pairs of {args.seconds:g} s measurements per round, {args.in_flight} in flight, "
              f"built-in answers timed: {stamping}; load {load_before[0]:.2f}")
        ratios, p50_diffs, p99_diffs = [], [], []
        loads = []
        for round_ in range(1, args.rounds + 1):
            pairs = []
            for slice_ in range(args.slices):
                order = ("builtin", "dnsperf") if (round_ + slice_) % 2 else ("dnsperf", "builtin")
                found: dict[tuple[str, str], dict] = {}
                with read_stamps(args.read_stamps):
                    for engine in order:
                        if engine == "builtin":
                            found[("max", engine)] = builtin(address, port, prepared, args.seconds,
                                                             args.in_flight, None)
                        else:
                            found[("max", engine)] = dnsperf(path, address, port, data, args.seconds,
                                                             args.in_flight, None, False)
                    found[("rate", "builtin")], found[("rate", "dnsperf")] = together(
                        path, address, port, data, prepared, args.seconds, args.in_flight, args.rate, root)
                pairs.append(found)
            mine = {"qps": statistics.median(f[("max", "builtin")]["qps"] for f in pairs),
                    "lost": sum(f[("max", "builtin")]["lost"] for f in pairs)}
            theirs = {"qps": statistics.median(f[("max", "dnsperf")]["qps"] for f in pairs),
                      "lost": sum(f[("max", "dnsperf")]["lost"] for f in pairs)}
            ratio = statistics.median(f[("max", "builtin")]["qps"] / f[("max", "dnsperf")]["qps"] for f in pairs)
            slow_mine = {k: statistics.median(f[("rate", "builtin")][k] for f in pairs) for k in ("p50", "p99")}
            slow_theirs = {k: statistics.median(f[("rate", "dnsperf")][k] for f in pairs) for k in ("p50", "p99")}
            d50 = statistics.median(100.0 * (f[("rate", "builtin")]["p50"] / f[("rate", "dnsperf")]["p50"] - 1.0)
                                    for f in pairs)
            d99 = statistics.median(100.0 * (f[("rate", "builtin")]["p99"] / f[("rate", "dnsperf")]["p99"] - 1.0)
                                    for f in pairs)
            ratios.append(ratio)
            p50_diffs.append(d50)
            p99_diffs.append(d99)
            load = os.getloadavg()[0]
            loads.append(load)
            print(f"round {round_}: max q/s built-in {mine['qps']:,.0f} dnsperf {theirs['qps']:,.0f} "
                  f"ratio {ratio:.2f} (lost {mine['lost']} / {theirs['lost']}); together at {args.rate / 2:g} q/s each "
                  f"p50 "
                  f"{slow_mine['p50']:.3f} / {slow_theirs['p50']:.3f} ms ({d50:+.1f} %), p99 {slow_mine['p99']:.3f} / "
                  f"{slow_theirs['p99']:.3f} ms ({d99:+.1f} %); load {load:.2f}")
            time.sleep(1.0)
        load_after = os.getloadavg()
        print(f"qps ratio built-in/dnsperf: {spread(ratios)} (goal >= 0.9)")
        print(f"p50 built-in vs dnsperf, %: {spread(p50_diffs)} (goal within ±10)")
        print(f"p99 built-in vs dnsperf, %: {spread(p99_diffs)} (goal within ±10)")
        print(f"load average (1 min) before {load_before[0]:.2f}, during {spread(loads)}, after {load_after[0]:.2f} "
              f"on {os.cpu_count()} CPUs: the machine's other work is in these figures")
        return 0
    finally:
        for daemon in (unbound, nsd):
            if daemon is not None:
                daemon.stop()
        for server in (odd, void):
            if server is not None:
                server.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
