"""The built-in Redis load generator against redis-benchmark: same server, clients, pipeline and command.

    python benchmarks/redis_builtin_vs_redis_benchmark.py [--target 127.0.0.1:6379] [--db 15]
        [--clients 1,10,50] [--pipelines 1,16] [--ops get,set] [--seconds 3] [--rounds 5]
        [--processes 0,1,2] [--tool-threads N] [--pin] [--link-delay-ms D] [--together]

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

--pin (a server on this machine, found by the process id it gives in INFO server) puts the server alone on CPU 0
and this process, and so both tools, on the others for the run (the server's own CPUs are given back after):
on a 2-core machine each tool then has one core, as redis-benchmark's one thread uses, and the server one of
its own, as it has on a database host; unpinned, server and tool take turns on whatever core is free, and
the latencies hold those turns.

--link-delay-ms D puts the server D ms of round trip away, as a database host across a network is from the
client hosts that load it (the dbload test's set-up): both tools connect through a relay on loopback that holds every
byte D/2 each way (benchmarks/tcp_delay.py; this machine's kernel has no netem), the server's CPU is read
directly. On loopback a round trip takes some 70-130 µs here, of the size of a client's own wake-up and read, so a
Python client's extra microseconds per reply decide a one-connection latency; across a link they are noise
beside the milliseconds, as they are on a real network. The relay's own wake-ups add to every reply of both
tools alike, and its share of a core is printed (near 1.0: the relay, not the tools, limits the rate).

--together adds a third run to each round, both tools at once on the same server for the same seconds, and
takes the latency ratios from those (the ops/s and CPU ratios stay those of the runs one after the other): a
p99 is the worst few stalls of its seconds (the server's, the relay's, the clients' scheduling on a shared
machine), which runs one after the other meet at different moments. The two tools then share the server.
"""
import argparse
import binascii
import contextlib
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from benchmarks.dns_rig import cpu_seconds  # noqa: E402
from remote.agent import redis_benchmark_run, resp_load, resp_wire  # noqa: E402
from tests.fixtures.processes import stop_group  # noqa: E402


def _popen(args, **kwargs):
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen(args, start_new_session=True, **kwargs)


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)   # reaped children: the workers, redis-benchmark
    return usage.ru_utime + usage.ru_stime


def _server_cpu(cfg: dict) -> float:
    """The Redis server's CPU seconds so far (user + system, all its threads), from INFO cpu (asked directly,
    not through a relay)."""
    with resp_wire.Client(*cfg.get("server", (cfg["host"], int(cfg["port"])))) as client:
        info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _measured(cfg: dict, run) -> dict:
    """Runs `run`; adds the CPU time of the tool's processes and of the server, per request and as the share
    of one core they kept busy over the run's wall time (who was CPU-bound)."""
    relay = cfg.get("relay_pid")
    cpu, server, wall = _child_cpu(), _server_cpu(cfg), time.perf_counter()
    relayed = cpu_seconds(relay) if relay else 0.0
    out = run()
    cpu, server, wall = _child_cpu() - cpu, _server_cpu(cfg) - server, time.perf_counter() - wall
    out.update(cpu_us=cpu / max(out["count"], 1) * 1e6, server_us=server / max(out["count"], 1) * 1e6,
               busy=cpu / wall, server_busy=server / wall,
               relay_busy=(cpu_seconds(relay) - relayed) / wall if relay else None)
    return out


def _builtin_run(cfg: dict) -> dict:
    out = resp_load.run_load(cfg, lambda *a: None)
    op = "get" if cfg["get_ratio"] >= 1.0 else "set"
    count = sum(out["per_second"])
    return {"ops": count / cfg["seconds"], "p50": out["p50_ms"][op], "p99": out["p99_ms"][op],
            "errors": out["errors"], "processes": out["processes"], "count": count}


def builtin(cfg: dict) -> dict:
    return _measured(cfg, lambda: _builtin_run(cfg))


def tool_argv(cfg: dict, rate: float) -> tuple[list, bytes | None]:
    """redis-benchmark's command line for about cfg["seconds"] at `rate` (the built-in's last rate): -n = rate x
    seconds; and what it reads on its standard input (a SET's value)."""
    op = "get" if cfg["get_ratio"] >= 1.0 else "set"
    requests = max(int(rate * cfg["seconds"]), cfg["clients"] * cfg["pipeline"])
    args = redis_benchmark_run.argv(cfg, op, cfg["clients"], requests)
    if cfg.get("tool_threads"):   # -x SET's key stays last: --threads goes before the command
        at = args.index("-x") if "-x" in args else len(args) - 2
        args[at:at] = ["--threads", str(cfg["tool_threads"])]
    return args, b"x" * cfg["value_size"] if op == "set" else None


def _tool_figures(printed: str) -> dict:
    report = redis_benchmark_run.parse_report(printed)
    return {"ops": report["throughput"], "p50": report["p50_ms"], "p99": report["p99_ms"], "errors": 0,
            "count": report["requests"]}


def tool(cfg: dict, rate: float) -> dict:
    args, value = tool_argv(cfg, rate)

    def run() -> dict:
        done = subprocess.run(args, input=value, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=cfg["seconds"] * 20 + 60, check=True)
        return _tool_figures(done.stdout.decode())
    return _measured(cfg, run)


def both(cfg: dict, rate: float) -> tuple[dict, dict]:
    """Both tools at once, each with the case's clients and pipeline, for about the same seconds: their latencies
    are of the same moments. A p99 is the worst few stalls of those seconds (the server's, the relay's, the
    client's own scheduling on a shared machine), which runs one after the other meet at different moments."""
    args, value = tool_argv(cfg, rate)
    with tempfile.TemporaryFile() as printed:
        proc = _popen(args, stdin=subprocess.PIPE if value else subprocess.DEVNULL, stdout=printed,
                      stderr=subprocess.STDOUT)
        try:
            if value:
                proc.stdin.write(value)
                proc.stdin.close()
            ours = _builtin_run(cfg)
            proc.wait(timeout=cfg["seconds"] * 20 + 60)
        finally:
            if proc.poll() is None:
                stop_group(proc)
        printed.seek(0)
        theirs = _tool_figures(printed.read().decode())
    return ours, theirs


@contextlib.contextmanager
def delayed(cfg: dict, each_way_ms: float):
    """benchmarks/tcp_delay.py on loopback in front of the server: the address and port the tools connect to, and
    the relay's pid; stopped after."""
    argv = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tcp_delay.py"), "127.0.0.1",
            cfg["host"], str(cfg["port"]), f"{each_way_ms:g}"]
    process = _popen(argv, stdout=subprocess.PIPE)
    try:
        line = process.stdout.readline()
        if not line.strip().isdigit():
            raise SystemExit(f"the delaying relay did not start (exit {process.poll()})")
        yield "127.0.0.1", int(line), process.pid
    finally:
        stop_group(process)
        process.stdout.close()


def pin_server(cfg: dict) -> tuple:
    """The server (every thread) onto the first CPU this process may use, this process onto the rest: returns
    the server's pid and its CPUs before, per thread, to give back."""
    with resp_wire.Client(cfg["host"], int(cfg["port"])) as client:
        pid = int(client.info("server")["process_id"])
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2:
        raise SystemExit("--pin needs 2 CPUs or more")
    before = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        before[int(task)] = os.sched_getaffinity(int(task))
        os.sched_setaffinity(int(task), {mine[0]})
    os.sched_setaffinity(0, set(mine[1:]))
    return pid, before


def unpin_server(before: dict) -> None:
    for task, cpus in before.items():
        with contextlib.suppress(OSError):     # the thread has ended
            os.sched_setaffinity(task, cpus)


def spread(values: list) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def _latencies(runs: list) -> str:
    """p50/p99 in µs, each the median of the runs' figures."""
    shown = [statistics.median(r[k] for r in runs if r[k]) * 1e3 if any(r[k] for r in runs) else None
             for k in ("p50", "p99")]
    return "/".join(f"{v:.0f}" if v is not None else "-" for v in shown)


def case(cfg: dict, rounds: int) -> str:
    """One case (command x clients x pipeline x built-in processes): a warm-up, then `rounds` rounds of both tools
    in alternating order (and with --together, both at once after them: the latencies); its row."""
    op, clients, pipeline = "get" if cfg["get_ratio"] >= 1.0 else "set", cfg["clients"], cfg["pipeline"]
    ours, theirs, timed = [], [], []
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
        if cfg.get("together"):   # redis-benchmark sized by its own last rate beside the built-in: they end together
            timed.append(both(dict(cfg), timed[-1][1]["ops"] if timed else rate))
    ratio = [a["ops"] / b["ops"] for a, b in zip(ours, theirs, strict=True)]
    # the latencies of the runs together where there are (see both()), else of the runs one after the other
    pairs = timed or list(zip(ours, theirs, strict=True))
    p50 = [a["p50"] / b["p50"] for a, b in pairs if a["p50"] and b["p50"]]
    p99 = [a["p99"] / b["p99"] for a, b in pairs if a["p99"] and b["p99"]]
    cpu = [a["cpu_us"] / b["cpu_us"] for a, b in zip(ours, theirs, strict=True) if b["cpu_us"]]
    med = {k: statistics.median(r[k] for r in ours) for k in ("ops", "cpu_us", "server_us",
                                                                 "busy", "server_busy")}
    their = {k: statistics.median(r[k] for r in theirs) for k in med}
    relay = ""
    if ours[0]["relay_busy"] is not None:
        relay = " | relay busy: with builtin {:.2f}, redis-benchmark {:.2f}".format(
            statistics.median(r["relay_busy"] for r in ours), statistics.median(r["relay_busy"] for r in theirs))
    row = ("{:3} c={:<3} P={:<3} ops/s builtin {:>7.0f} ({} proc) redis-benchmark {:>7.0f}"
           " | ratio ops {} | p50 {} | p99 {} | p50/p99 µs, medians: builtin {} redis-benchmark {}"
           " | CPU us/op builtin {:.2f} redis-benchmark {:.2f}, ratio {}"
           " | server us/op {:.2f} vs {:.2f} | cores busy: builtin {:.2f} + server {:.2f},"
           " redis-benchmark {:.2f} + server {:.2f} | load {:.2f}").format(
        op, clients, pipeline, med["ops"], ours[-1]["processes"], their["ops"], spread(ratio),
        spread(p50) if p50 else "-", spread(p99) if p99 else "-",
        _latencies([a for a, _ in pairs]), _latencies([b for _, b in pairs]),
        med["cpu_us"], their["cpu_us"],
        spread(cpu) if cpu else "-", med["server_us"], their["server_us"], med["busy"],
        med["server_busy"], their["busy"], their["server_busy"], os.getloadavg()[0])
    return row + relay


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
    parser.add_argument("--pin", action="store_true",
                        help="the server (on this machine) alone on CPU 0, both tools on the other CPUs")
    parser.add_argument("--together", action="store_true",
                        help="the latencies from both tools run at the same time (a third run per round)")
    parser.add_argument("--link-delay-ms", type=float, default=None, metavar="D",
                        help="the server D ms of round trip away: both tools go through a delaying relay")
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
            "seconds": args.seconds, "rate": 0, "tool_threads": args.tool_threads, "together": args.together}
    print(f"redis-benchmark {version} against {host}:{port} db {args.db}, {args.seconds} s per run, "
          f"{args.rounds} rounds, {args.value_size} B values, {args.keyspace} keys; {os.cpu_count()} CPUs"
          + (f"; redis-benchmark --threads {args.tool_threads}" if args.tool_threads else ""))
    print("The machine is shared with other work: figures move with its load (load average printed).")
    print("load average before: {}".format(" ".join(f"{x:.2f}" for x in os.getloadavg())))
    pinned = None
    if args.pin:
        pid, pinned = pin_server(base)
        print(f"redis-server (pid {pid}) pinned to CPU {min(os.sched_getaffinity(pid))}, the tools to CPUs "
              + ",".join(str(c) for c in sorted(os.sched_getaffinity(0))))
    try:
        resp_load.fill(dict(base))
    except BaseException:
        if pinned:
            unpin_server(pinned)
        raise
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))   # the keys are deleted on a kill too
    rows = []
    link = contextlib.ExitStack()
    try:
        if args.link_delay_ms is not None:
            relay_host, relay_port, relay_pid = link.enter_context(delayed(base, args.link_delay_ms / 2))
            base = dict(base, host=relay_host, port=relay_port, server=(host, port), relay_pid=relay_pid)
            print(f"the server {args.link_delay_ms:g} ms away: both tools through a relay on {relay_host}:{relay_port}"
                  f" holding every byte {args.link_delay_ms / 2:g} ms each way (benchmarks/tcp_delay.py)")
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
        link.close()
        base = dict(base, host=host, port=port)
        left = resp_load.cleanup(dict(base))
        time.sleep(0.1)
        print(f"keys deleted: {left}, left: {resp_load.count_keys(dict(base))}")
        if pinned:
            unpin_server(pinned)
    print("load average after: {}".format(" ".join(f"{x:.2f}" for x in os.getloadavg())))
    print(f"ratios are built-in / redis-benchmark, min / median / max of {args.rounds} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
