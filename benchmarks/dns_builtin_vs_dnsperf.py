"""The dns test's built-in engine against dnsperf: same Unbound, same query list, same load.

    python benchmarks/dns_builtin_vs_dnsperf.py [--seconds 2] [--slices 5] [--in-flight 100] [--rate 2000]
                                                [--rounds 3] [--processes N] [--kernel-stamps]
                                                [--link-delay-ms D]

Starts the test suite's resolvers on loopback (tests/fixtures/dns_servers.py: NSD serving bench.test.,
Unbound in front; needs nsd, unbound and dnsperf installed, and root or the right to bind 127.0.0.x), makes a
5,000-name list of the zone (names that exist and some that do not), sends it once to fill Unbound's cache,
then per round `--slices` pairs of short measurements, the two engines back to back (alternating which goes
first), so that a change in the machine's load hits both alike; a round's figure is the median of its pairs':

- max: as many queries as the engine sends in `--seconds` with `--in-flight` outstanding (dnsperf -q), the
  built-in one as the dns test's max mode runs it (remote/agent/dns_fanout.py: `--processes` senders, by
  default as many as the test uses on this machine, answers timed at the read as dnsperf's are); the queries
  per second of each, and the ratio built-in / dnsperf (goal >= 0.9). dnsperf runs without -v here: printing
  a line per query would slow it down. With them the CPU time per answered query of each client (user +
  system, the kernel's loopback delivery to Unbound included) and of Unbound, and the cores each used: what
  says, on a machine whose other work moves the rates, which party limits the rate;
- rate: both engines at the same time, each at half of `--rate` queries a second for `--seconds` (dnsperf
  -Q) with per-query latencies (dnsperf -v, written to a file so that a full pipe never holds it up): the p50
  and p99 of each and how far the built-in one is from dnsperf's (goal within 10 %). Together, because on a
  busy machine a p99 is the resolver's and the client's worst scheduling delays of those seconds: measured
  one after the other, the two engines' tails are of different moments and disagree by tens of percent
  either way whatever their timing. dnsperf stamps a query just before its sendto and an answer just after
  its recv (a thread waiting in poll); the built-in engine, as the dns test runs it by default, stamps just
  before its send and just after its recv. --kernel-stamps times its answers with the kernel's receive time
  (SO_TIMESTAMPNS, the test's stamps=kernel) instead, which leaves the client's own wake-up and read out: to
  show how much they weigh.

--link-delay-ms D puts the resolver side (NSD, the odd authority, the blackhole, Unbound) in a private network
namespace D ms of round trip away from the clients, which run in another (benchmarks/dns_link.py: a veth pair,
`tc netem` D/2 on each end, or a delaying relay where the kernel has no netem; needs root): a resolver across a
network, as a user compares them, where the clients' own microseconds are noise beside the milliseconds.

Prints every round, then min / median / max over the rounds and the load average before and after: the
figures are only as quiet as the machine (a shared machine's other work shows in them).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import dns_link, dns_rig  # noqa: E402
from remote.agent import dns_dnsperf, dns_fanout, dns_replay, dns_stats  # noqa: E402


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return dns_stats.percentile(ordered, pct)


def builtin(address: str, port: int, prepared: dns_replay.Prepared, seconds: float, window: int,
            rate: float | None, kernel_stamps: bool = False) -> dict:
    # at a rate: that many queries; at most: far more than one core sends in the time, cut by `seconds`
    total = int(rate * seconds) if rate else int(seconds * 1_000_000)
    lanes = dns_replay.replay([(address, port)], prepared, window=window, rate=rate, timeouts=(3.0,),
                              tcp_fallback=False, total=total, seconds=None if rate else seconds,
                              kernel_stamps=kernel_stamps)
    lane = lanes[0]
    figures = dns_stats.summarise(lane.columns(), max(lane.end - lane.start, 1e-6))
    return {"qps": figures["qps"], "p50": figures.get("p50_ms"), "p99": figures.get("p99_ms"),
            "lost": figures["timeouts"], "answered": figures["answered"]}


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def builtin_max(address: str, port: int, prepared: dns_replay.Prepared, seconds: float, window: int,
                processes: int, unbound_pid: int) -> dict:
    """The dns test's max mode without dnsperf: the window over `processes` forked senders (their CPU time comes
    back with their exit, as the children's)."""
    mine0, kids0, res0 = dns_rig.cpu_seconds(), children_cpu(), dns_rig.cpu_seconds(unbound_pid)
    columns, elapsed, _stray = dns_fanout.replay_max((address, port), prepared, window, 3.0, seconds, processes)
    cpu = dns_rig.cpu_seconds() - mine0 + children_cpu() - kids0
    resolver_cpu = dns_rig.cpu_seconds(unbound_pid) - res0
    figures = dns_stats.summarise(columns, max(elapsed, 1e-6))
    answered = max(1, figures["answered"])
    return {"qps": figures["qps"], "lost": figures["timeouts"], "answered": figures["answered"],
            "cpu_us": 1e6 * cpu / answered, "cores": cpu / max(elapsed, 1e-6),
            "resolver_us": 1e6 * resolver_cpu / answered, "resolver_cores": resolver_cpu / max(elapsed, 1e-6)}


def dnsperf_max(path: str, address: str, port: int, data: str, seconds: float, window: int,
                unbound_pid: int) -> dict:
    kids0, res0 = children_cpu(), dns_rig.cpu_seconds(unbound_pid)
    found = dnsperf(path, address, port, data, seconds, window, None, False)
    cpu, resolver_cpu = children_cpu() - kids0, dns_rig.cpu_seconds(unbound_pid) - res0
    answered = max(1, found["answered"])
    elapsed = answered / found["qps"] if found["qps"] else seconds
    return dict(found, cpu_us=1e6 * cpu / answered, cores=cpu / elapsed, resolver_us=1e6 * resolver_cpu / answered,
                resolver_cores=resolver_cpu / elapsed)


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
             window: int, rate: float, scratch: Path, kernel_stamps: bool) -> tuple[dict, dict]:
    """Both engines at rate/2 each over the same seconds: the same resolver stalls and machine load in both."""
    out_path = scratch / "dnsperf-v.txt"
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(dnsperf_argv(path, address, port, data, seconds, window, rate / 2, True),
                                stdout=out, stderr=subprocess.STDOUT)
        try:
            mine = builtin(address, port, prepared, seconds, window, rate / 2, kernel_stamps)
            proc.wait(timeout=seconds + 60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return mine, dnsperf_figures(out_path.read_text("utf-8", "replace"), address, port)


def spread(values: list[float]) -> str:
    return f"min {min(values):,.3g} / median {statistics.median(values):,.3g} / max {max(values):,.3g}"


@contextlib.contextmanager
def resolver(root: Path, delay_ms: float | None) -> Iterator[tuple[str, int, int, str, int | None]]:
    """Unbound (and its authorities) on loopback, or `delay_ms` away across a veth when given: the address and
    port the clients query, Unbound's pid, words on where it is, and the delaying relay's pid (None: none)."""
    if delay_ms is None:
        with dns_rig.authorities(root) as auth, dns_rig.unbound(root / "unbound", auth) as daemon:
            yield daemon.address, daemon.port, daemon.process.pid, "on loopback", None
    else:
        with dns_link.far_unbound(root, delay_ms) as far:
            how = ("tc netem" if far.delay_by == "netem" else
                   "a relay in its namespace: this kernel has no netem") + f", {delay_ms / 2:g} ms each way"
            yield (far.address, far.port, far.unbound.process.pid, f"{delay_ms:g} ms away (veth; {how})",
                   far.relay_pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--slices", type=int, default=5, help="pairs of measurements per round")
    parser.add_argument("--in-flight", type=int, default=100)
    parser.add_argument("--rate", type=float, default=2000.0, help="queries/s of the latency comparison")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", type=int, default=dns_fanout.default_processes(),
                        help="the built-in max mode's sending processes (default: as the dns test on this machine)")
    parser.add_argument("--pin", action="store_true",
                        help="Unbound alone on CPU 0, the clients (this process, dnsperf, the senders) on the others")
    parser.add_argument("--link-delay-ms", type=float, default=None, metavar="D",
                        help="the resolver side in a namespace of its own, D ms of round trip away (needs root)")
    parser.add_argument("--kernel-stamps", action="store_true",
                        help="time the built-in engine's answers with the kernel's receive time, not at the read")
    args = parser.parse_args()
    path = dns_dnsperf.find()
    if path is None or not shutil.which("unbound") and not os.access("/usr/sbin/unbound", os.X_OK):
        print("dnsperf and unbound are needed (Debian packages dnsperf, unbound, nsd)", file=sys.stderr)
        return 1
    version = dns_dnsperf.version(path) or "?"
    # a kill ends the run through its cleanups: the servers stopped, a link's namespaces and veth removed
    signal.signal(signal.SIGTERM, lambda _sig, _frame: sys.exit(143))
    if args.link_delay_ms is not None and dns_link.missing():
        print(dns_link.missing(), file=sys.stderr)
        return 1
    with dns_rig.scratch("bb-dnsbench-") as root, resolver(root, args.link_delay_ms) as \
            (address, port, pid, where, relay_pid):
        names = dns_rig.zone_list(5000, 250)
        data = str(names.write(root / "queries.txt"))
        queries = [(name.rstrip("."), "A") for name in names.order]
        prepared = dns_replay.Prepared(queries)
        cpus = sorted(os.sched_getaffinity(0))
        if args.pin and len(cpus) > 1:
            dns_rig.pin(pid, {cpus[0]})
            dns_rig.pin(os.getpid(), set(cpus[1:]))
        builtin(address, port, prepared, 5.0, 50, None)     # Unbound's cache filled: both engines meet it warm
        load_before = dns_rig.load()
        stamping = "kernel receive time" if args.kernel_stamps else "at the read"
        print(f"Unbound {address}:{port} {where} (one thread), {len(queries)} names (cached), dnsperf {version}, "
              f"{args.slices} pairs of {args.seconds:g} s measurements per round, {args.in_flight} in flight, "
              f"built-in max mode over {args.processes} process(es), answers timed at the read; at a rate, "
              f"built-in answers timed: {stamping}; "
              f"{'Unbound pinned to CPU 0, the clients to the others; ' if args.pin else ''}"
              f"load {load_before:.2f} on {os.cpu_count()} CPUs")
        rounds = []
        for round_ in range(1, args.rounds + 1):
            pairs = []
            for slice_ in range(args.slices):
                order = ("builtin", "dnsperf") if (round_ + slice_) % 2 else ("dnsperf", "builtin")
                found: dict[tuple[str, str], dict] = {}
                for engine in order:
                    relay0 = dns_rig.cpu_seconds(relay_pid) if relay_pid else 0.0
                    if engine == "builtin":
                        found[("max", engine)] = builtin_max(address, port, prepared, args.seconds,
                                                             args.in_flight, args.processes, pid)
                    else:
                        found[("max", engine)] = dnsperf_max(path, address, port, data, args.seconds,
                                                             args.in_flight, pid)
                    # the relay's share: what says whether it, not an engine, held the rate down
                    found[("max", engine)]["relay_cores"] = (
                        (dns_rig.cpu_seconds(relay_pid) - relay0) / args.seconds if relay_pid else 0.0)
                found[("rate", "builtin")], found[("rate", "dnsperf")] = together(
                    path, address, port, data, prepared, args.seconds, args.in_flight, args.rate, root,
                    args.kernel_stamps)
                pairs.append(found)
            figures = round_figures(pairs)
            figures["load"] = dns_rig.load()
            rounds.append(figures)
            print(f"round {round_}: " + round_words(figures, args.rate / 2))
            time.sleep(1.0)
        load_after = dns_rig.load()
    print(f"qps ratio built-in/dnsperf: {spread([r['ratio'] for r in rounds])} (goal >= 0.9)")
    print(f"p50 built-in vs dnsperf, %: {spread([r['d50'] for r in rounds])} (goal within ±10)")
    print(f"p99 built-in vs dnsperf, %: {spread([r['d99'] for r in rounds])} (goal within ±10)")
    for who, key in (("built-in", "builtin"), ("dnsperf", "dnsperf")):
        column = [r[key] for r in rounds]
        print(f"max mode, {who}: CPU µs per answer {spread([c['cpu_us'] for c in column])}, cores used "
              f"{spread([c['cores'] for c in column])}; Unbound's CPU µs per answer "
              f"{spread([c['resolver_us'] for c in column])}, cores {spread([c['resolver_cores'] for c in column])}")
    print(f"load average (1 min) before {load_before:.2f}, during {spread([r['load'] for r in rounds])}, after "
          f"{load_after:.2f} on {os.cpu_count()} CPUs: the machine's other work is in these figures")
    return 0


def round_figures(pairs: list[dict]) -> dict:
    """A round's figures: the median over its pairs of each engine's max-mode figures, of the q/s ratio and of
    the latency differences at a rate."""
    out: dict = {}
    for engine in ("builtin", "dnsperf"):
        out[engine] = {key: statistics.median(f[("max", engine)][key] for f in pairs)
                       for key in ("qps", "cpu_us", "cores", "resolver_us", "resolver_cores", "relay_cores")}
        out[engine]["lost"] = sum(f[("max", engine)]["lost"] for f in pairs)
        out[engine + "_rate"] = {k: statistics.median(f[("rate", engine)][k] for f in pairs) for k in ("p50", "p99")}
    out["ratio"] = statistics.median(f[("max", "builtin")]["qps"] / f[("max", "dnsperf")]["qps"] for f in pairs)
    for key in ("p50", "p99"):
        out["d" + key[1:]] = statistics.median(
            100.0 * (f[("rate", "builtin")][key] / f[("rate", "dnsperf")][key] - 1.0) for f in pairs)
    return out


def round_words(r: dict, each: float) -> str:
    mine, theirs = r["builtin"], r["dnsperf"]
    relay = (f", relay {mine['relay_cores']:.2f} / {theirs['relay_cores']:.2f} cores" if mine["relay_cores"] or
             theirs["relay_cores"] else "")
    return (f"max q/s built-in {mine['qps']:,.0f} dnsperf {theirs['qps']:,.0f} ratio {r['ratio']:.2f} (lost "
            f"{mine['lost']} / {theirs['lost']}; CPU µs per answer {mine['cpu_us']:.2f} / {theirs['cpu_us']:.2f}, "
            f"cores {mine['cores']:.2f} / {theirs['cores']:.2f}, Unbound {mine['resolver_cores']:.2f} / "
            f"{theirs['resolver_cores']:.2f} cores{relay}); together at {each:g} q/s each p50 "
            f"{r['builtin_rate']['p50']:.3f} / {r['dnsperf_rate']['p50']:.3f} ms ({r['d50']:+.1f} %), "
            f"p99 {r['builtin_rate']['p99']:.3f} / "
            f"{r['dnsperf_rate']['p99']:.3f} ms ({r['d99']:+.1f} %); load {r['load']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
