"""The built-in Redis load generator against redis-benchmark: same server, clients, pipeline and command.

    python benchmarks/redis_builtin_vs_redis_benchmark.py [--target 127.0.0.1:6379] [--db 15]
        [--clients 1,10,50] [--pipelines 1,16] [--ops get,set] [--seconds 3] [--rounds 5]
        [--processes 0,1,2] [--tool-threads N]

For each case (command x clients x pipeline) and round, both tools load the server for the same seconds,
in alternating order: the built-in generator (remote/agent/resp_load.py) and redis-benchmark with the
dbload test's command line (remote/agent/redis_benchmark_run.py) and -n = the built-in's last rate x the
seconds; a warm-up run of the built-in first. --processes 0,1,2 repeats each case with the built-in's own choice
of worker processes and with 1 and 2 (which is faster on this host, and truer against redis-benchmark's one thread).
Prints, per case, the ratios built-in / redis-benchmark of ops/s (goal >= 0.9) and of the p50 and p99
latency (goal within 10 %), min / median / max over the rounds, the CPU time each tool spent per
request (user + system, of its processes: steadier than rates on a busy machine), the server's CPU time per
request, the share of a core each tool and the server kept busy (the one near 1.0 is what limits the rate;
on a 2-core host with the server on it, the tools and the server share those two cores) and the load average.
The keys (a prefix of their own in the chosen database) are written first and deleted at the end.
"""
import argparse
import binascii
import os
import resource
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from remote.agent import redis_benchmark_run, resp_load, resp_wire  # noqa: E402


def _popen(args, **kwargs):
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen(args, start_new_session=True, **kwargs)


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)   # reaped children: the workers, redis-benchmark
    return usage.ru_utime + usage.ru_stime


def _server_cpu(cfg: dict) -> float:
    """The Redis server's CPU seconds so far (user + system, all its threads), from INFO cpu."""
    with resp_wire.Client(cfg["host"], int(cfg["port"])) as client:
        info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _measured(cfg: dict, run) -> dict:
    """Runs `run`; adds the CPU time of the tool's processes and of the server, per request and as the share
    of one core they kept busy over the run's wall time (who was CPU-bound)."""
    cpu, server, wall = _child_cpu(), _server_cpu(cfg), time.perf_counter()
    out = run()
    cpu, server, wall = _child_cpu() - cpu, _server_cpu(cfg) - server, time.perf_counter() - wall
    out.update(cpu_us=cpu / max(out["count"], 1) * 1e6, server_us=server / max(out["count"], 1) * 1e6,
               busy=cpu / wall, server_busy=server / wall)
    return out


def builtin(cfg: dict) -> dict:
    def run() -> dict:
        out = resp_load.run_load(cfg, lambda *a: None)
        op = "get" if cfg["get_ratio"] >= 1.0 else "set"
        count = sum(out["per_second"])
        return {"ops": count / cfg["seconds"], "p50": out["p50_ms"][op], "p99": out["p99_ms"][op],
                "errors": out["errors"], "processes": out["processes"], "count": count}
    return _measured(cfg, run)


def tool(cfg: dict, rate: float) -> dict:
    """redis-benchmark for about cfg["seconds"] at `rate` (the built-in's last rate): -n = rate x seconds."""
    op = "get" if cfg["get_ratio"] >= 1.0 else "set"
    requests = max(int(rate * cfg["seconds"]), cfg["clients"] * cfg["pipeline"])
    args = redis_benchmark_run.argv(cfg, op, cfg["clients"], requests)
    if cfg.get("tool_threads"):   # -x SET's key stays last: --threads goes before the command
        at = args.index("-x") if "-x" in args else len(args) - 2
        args[at:at] = ["--threads", str(cfg["tool_threads"])]

    def run() -> dict:
        done = subprocess.run(args, input=b"x" * cfg["value_size"] if op == "set" else None,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=cfg["seconds"] * 20 + 60,
                              check=True)
        report = redis_benchmark_run.parse_report(done.stdout.decode())
        return {"ops": report["throughput"], "p50": report["p50_ms"], "p99": report["p99_ms"], "errors": 0,
                "count": report["requests"]}
    return _measured(cfg, run)


def spread(values: list) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def _latencies(runs: list) -> str:
    """p50/p99 in µs, each the median of the runs' figures."""
    shown = [statistics.median(r[k] for r in runs if r[k]) * 1e3 if any(r[k] for r in runs) else None
             for k in ("p50", "p99")]
    return "/".join(f"{v:.0f}" if v is not None else "-" for v in shown)


def case(cfg: dict, rounds: int) -> str:
    """One case (command x clients x pipeline x built-in processes): a warm-up, then `rounds` rounds of both tools
    in alternating order; its row."""
    op, clients, pipeline = "get" if cfg["get_ratio"] >= 1.0 else "set", cfg["clients"], cfg["pipeline"]
    ours, theirs = [], []
    rate = builtin(dict(cfg))["ops"]   # a warm-up, and the first estimate of -n
    for round_ in range(rounds):
        # alternating order: the machine's load drifts between the two runs of a round
        if round_ % 2 == 0:
            ours.append(builtin(dict(cfg)))
            theirs.append(tool(dict(cfg), ours[-1]["ops"]))
        else:
            theirs.append(tool(dict(cfg), rate))
            ours.append(builtin(dict(cfg)))
        rate = ours[-1]["ops"]
    ratio = [a["ops"] / b["ops"] for a, b in zip(ours, theirs, strict=True)]
    p50 = [a["p50"] / b["p50"] for a, b in zip(ours, theirs, strict=True) if a["p50"] and b["p50"]]
    p99 = [a["p99"] / b["p99"] for a, b in zip(ours, theirs, strict=True) if a["p99"] and b["p99"]]
    cpu = [a["cpu_us"] / b["cpu_us"] for a, b in zip(ours, theirs, strict=True) if b["cpu_us"]]
    med = {k: statistics.median(r[k] for r in ours) for k in ("ops", "cpu_us", "server_us",
                                                                 "busy", "server_busy")}
    their = {k: statistics.median(r[k] for r in theirs) for k in med}
    row = ("{:3} c={:<3} P={:<3} ops/s builtin {:>7.0f} ({} proc) redis-benchmark {:>7.0f}"
           " | ratio ops {} | p50 {} | p99 {} | p50/p99 µs, medians: builtin {} redis-benchmark {}"
           " | CPU us/op builtin {:.2f} redis-benchmark {:.2f}, ratio {}"
           " | server us/op {:.2f} vs {:.2f} | cores busy: builtin {:.2f} + server {:.2f},"
           " redis-benchmark {:.2f} + server {:.2f} | load {:.2f}").format(
        op, clients, pipeline, med["ops"], ours[-1]["processes"], their["ops"], spread(ratio),
        spread(p50) if p50 else "-", spread(p99) if p99 else "-", _latencies(ours), _latencies(theirs),
        med["cpu_us"], their["cpu_us"],
        spread(cpu) if cpu else "-", med["server_us"], their["server_us"], med["busy"],
        med["server_busy"], their["busy"], their["server_busy"], os.getloadavg()[0])
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="127.0.0.1:6379")
    parser.add_argument("--db", type=int, default=15)
    parser.add_argument("--clients", default="1,10,50")
    parser.add_argument("--pipelines", default="1,16")
    parser.add_argument("--ops", default="get,set")
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="at least 3: min / median / max")
    parser.add_argument("--tool-threads", type=int, default=0,
                        help="redis-benchmark --threads N (0: its default, one thread, as the dbload test runs it); "
                             "where one redis-benchmark thread is the limit, both tools at about one rate")
    parser.add_argument("--keyspace", type=int, default=10000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--processes", default="0",
                        help="built-in worker processes, a list to compare (0: its own choice, from clients x "
                             "pipeline and where the server is)")
    args = parser.parse_args()
    if args.rounds < 3:
        parser.error("--rounds must be 3 or more (min / median / max of the rounds)")
    host, port = resp_wire.parse_target(args.target)
    version = redis_benchmark_run.version()
    if version is None:
        print(redis_benchmark_run.INSTALL_HINT)
        return 1
    base = {"host": host, "port": port, "db": args.db, "keyspace": args.keyspace, "value_size": args.value_size,
            "prefix": f"benchbay-bench:{binascii.hexlify(os.urandom(3)).decode()}:".encode(),
            "seconds": args.seconds, "rate": 0, "tool_threads": args.tool_threads}
    print(f"redis-benchmark {version} against {host}:{port} db {args.db}, {args.seconds} s per run, "
          f"{args.rounds} rounds, {args.value_size} B values, {args.keyspace} keys; {os.cpu_count()} CPUs"
          + (f"; redis-benchmark --threads {args.tool_threads}" if args.tool_threads else ""))
    print("The machine is shared with other work: figures move with its load (load average printed).")
    print("load average before: {}".format(" ".join(f"{x:.2f}" for x in os.getloadavg())))
    resp_load.fill(dict(base))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))   # the keys are deleted on a kill too
    rows = []
    try:
        for op in args.ops.split(","):
            for pipeline in (int(p) for p in args.pipelines.split(",")):
                for clients in (int(c) for c in args.clients.split(",")):
                    for procs in (int(n) for n in args.processes.split(",")):
                        cfg = dict(base, clients=clients, pipeline=pipeline, processes=procs,
                                   get_ratio=1.0 if op == "get" else 0.0)
                        row = case(cfg, args.rounds)
                        rows.append(row)
                        print(row, flush=True)
    finally:
        left = resp_load.cleanup(dict(base))
        time.sleep(0.1)
        print(f"keys deleted: {left}, left: {resp_load.count_keys(dict(base))}")
    print("load average after: {}".format(" ".join(f"{x:.2f}" for x in os.getloadavg())))
    print(f"ratios are built-in / redis-benchmark, min / median / max of {args.rounds} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
