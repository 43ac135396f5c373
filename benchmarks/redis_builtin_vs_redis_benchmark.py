"""The built-in Redis load generator against redis-benchmark: same server, clients, pipeline and command.

    python benchmarks/redis_builtin_vs_redis_benchmark.py [--target 127.0.0.1:6379] [--db 15]
        [--clients 1,10,50] [--pipelines 1,16] [--ops get,set] [--seconds 3] [--rounds 5]

For each case (command x clients x pipeline) and round, both tools load the server for the same seconds,
in alternating order: the built-in generator (remote/agent/resp_load.py) and redis-benchmark with the
dbload test's command line (remote/agent/redis_benchmark_run.py) and -n = the built-in's last rate x the
seconds; a warm-up run of the built-in first.
Prints, per case, the ratios built-in / redis-benchmark of ops/s (goal >= 0.9) and of the p50 and p99
latency (goal within 10 %), min / median / max over the rounds, the CPU time each tool spent per
request (user + system, of its processes: steadier than rates on a busy machine) and the load average.
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


def builtin(cfg: dict) -> dict:
    cpu = _child_cpu()
    out = resp_load.run_load(cfg, lambda *a: None)
    cpu = _child_cpu() - cpu
    op = "get" if cfg["get_ratio"] >= 1.0 else "set"
    count = sum(out["per_second"])
    return {"ops": count / cfg["seconds"], "p50": out["p50_ms"][op], "p99": out["p99_ms"][op],
            "errors": out["errors"], "processes": out["processes"], "cpu_us": cpu / max(count, 1) * 1e6}


def tool(cfg: dict, rate: float) -> dict:
    """redis-benchmark for about cfg["seconds"] at `rate` (the built-in's last rate): -n = rate x seconds."""
    op = "get" if cfg["get_ratio"] >= 1.0 else "set"
    requests = max(int(rate * cfg["seconds"]), cfg["clients"] * cfg["pipeline"])
    args = redis_benchmark_run.argv(cfg, op, cfg["clients"], requests)
    cpu = _child_cpu()
    done = subprocess.run(args, input=b"x" * cfg["value_size"] if op == "set" else None, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=cfg["seconds"] * 20 + 60, check=True)
    cpu = _child_cpu() - cpu
    report = redis_benchmark_run.parse_report(done.stdout.decode())
    return {"ops": report["throughput"], "p50": report["p50_ms"], "p99": report["p99_ms"], "errors": 0,
            "cpu_us": cpu / report["requests"] * 1e6}


def spread(values: list) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="127.0.0.1:6379")
    parser.add_argument("--db", type=int, default=15)
    parser.add_argument("--clients", default="1,10,50")
    parser.add_argument("--pipelines", default="1,16")
    parser.add_argument("--ops", default="get,set")
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keyspace", type=int, default=10000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--processes", type=int, default=0, help="built-in worker processes (0: one per CPU)")
    args = parser.parse_args()
    host, port = resp_wire.parse_target(args.target)
    version = redis_benchmark_run.version()
    if version is None:
        print(redis_benchmark_run.INSTALL_HINT)
        return 1
    base = {"host": host, "port": port, "db": args.db, "keyspace": args.keyspace, "value_size": args.value_size,
            "prefix": f"benchbay-bench:{binascii.hexlify(os.urandom(3)).decode()}:".encode(),
            "seconds": args.seconds, "rate": 0, "processes": args.processes}
    print(f"redis-benchmark {version} against {host}:{port} db {args.db}, {args.seconds} s per run, "
          f"{args.rounds} rounds, {args.value_size} B values, {args.keyspace} keys; {os.cpu_count()} CPUs")
    print("The machine is shared with other work: figures move with its load (load average printed).")
    print("load average before: {}".format(" ".join(f"{x:.2f}" for x in os.getloadavg())))
    resp_load.fill(dict(base))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))   # the keys are deleted on a kill too
    rows = []
    try:
        for op in args.ops.split(","):
            for pipeline in (int(p) for p in args.pipelines.split(",")):
                for clients in (int(c) for c in args.clients.split(",")):
                    cfg = dict(base, clients=clients, pipeline=pipeline, get_ratio=1.0 if op == "get" else 0.0)
                    ours, theirs = [], []
                    rate = builtin(dict(cfg))["ops"]   # a warm-up, and the first estimate of -n
                    for round_ in range(args.rounds):
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
                    row = "{:3} c={:<3} P={:<3} ops/s builtin {:>7.0f} redis-benchmark {:>7.0f} | ratio ops {}" \
                          " | p50 {} | p99 {} | CPU us/op {:.1f} vs {:.1f}, ratio {} | load {:.2f}".format(
                              op, clients, pipeline, statistics.median(a["ops"] for a in ours),
                              statistics.median(b["ops"] for b in theirs), spread(ratio),
                              spread(p50) if p50 else "-", spread(p99) if p99 else "-",
                              statistics.median(a["cpu_us"] for a in ours),
                              statistics.median(b["cpu_us"] for b in theirs),
                              spread(cpu) if cpu else "-", os.getloadavg()[0])
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
