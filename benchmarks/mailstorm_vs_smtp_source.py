"""Benchbay's mail storm against Postfix's own generator, smtp-source, on the same server in one run.

    python benchmarks/mailstorm_vs_smtp_source.py [--messages 2000] [--sessions 20] [--size 4096] [--rounds 3]
                                                  [--target sink|postfix] [--modes both|per-message|reused]

The server is Postfix's smtp-sink on a free loopback port by default (--target sink): it accepts and
forgets, so only the generators are measured. With --target postfix it is the local Postfix,
configured as the tests do (loopback only, benchbay.invalid to discard:), and every storm starts with
its queue empty (the previous storm's messages still on their way to discard would slow down whichever
tool came next). For each session mode — a new session per message (smtp-source's default) and reused
sessions (its -d) — each round sends the same messages with smtp-source, with Benchbay's agent test
through the run engine on `local`, and with the agent's sender (remote.agent.mail_sender) alone in this
process (no run engine, telemetry or workbench beside it), alternating. Prints accepted msg/s of each
(median of the rounds), the ratios to smtp-source (goal: >= 1.0), and the CPU each generator and the
server used per message: on a small machine shared with other work the rates swing with the load, the
CPU per message much less. smtp-source is timed from its start to its exit, the sender alone from the
first attempt to the last accept.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engine.orchestrator import RunControl, RunRequest, execute_run  # noqa: E402
from app.workbench import Workbench  # noqa: E402
from remote.agent import bench_mailstorm, mail_message, mail_sender, mail_smtp  # noqa: E402
from tests.fixtures.postfix import configure_postfix  # noqa: E402

SINK = "sink@benchbay.invalid"
POSTFIX = "127.0.0.1:25"


@contextlib.contextmanager
def smtp_sink() -> Iterator[tuple[str, Callable[[], float]]]:
    """Postfix's smtp-sink on a free loopback port: (host:port, CPU seconds it has used so far)."""
    tool = shutil.which("smtp-sink") or "/usr/sbin/smtp-sink"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = f"127.0.0.1:{port}"
    argv = [tool] + (["-u", "nobody"] if os.geteuid() == 0 else []) + [server, "1024"]
    sink = subprocess.Popen(argv, stdout=subprocess.DEVNULL)

    def cpu() -> float:
        fields = Path(f"/proc/{sink.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    try:
        deadline = time.monotonic() + 10
        while mail_smtp.probe("127.0.0.1", port, 1.0):
            if time.monotonic() > deadline or sink.poll() is not None:
                raise SystemExit(f"smtp-sink did not start on {server}")
            time.sleep(0.1)
        yield server, cpu
    finally:
        sink.terminate()
        sink.wait()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def wait_for_empty_queue(timeout: float = 300.0) -> None:
    tool = shutil.which("postqueue") or "/usr/sbin/postqueue"
    deadline = time.monotonic() + timeout
    while subprocess.run([tool, "-j"], capture_output=True, text=True, check=True).stdout.strip():
        if time.monotonic() > deadline:
            raise SystemExit("Postfix's queue did not drain")
        time.sleep(0.5)
    time.sleep(1.0)   # let the delivery agents of the last messages go idle


def smtp_source_rate(server: str, messages: int, sessions: int, size: int, reuse: bool) -> tuple[float, float]:
    """msg/s and its CPU seconds."""
    tool = shutil.which("smtp-source") or "/usr/sbin/smtp-source"
    argv = [tool, "-s", str(sessions), "-m", str(messages), "-l", str(size), "-f", "bench@benchbay.invalid",
            "-t", SINK, "-M", "localhost"] + (["-d"] if reuse else []) + [server]
    cpu = children_cpu()
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, timeout=600)
    return messages / (time.perf_counter() - started), children_cpu() - cpu


def benchbay_rate(bench: Workbench, server: str, messages: int, sessions: int, size: int, reuse: bool) -> float:
    params = {"messages": messages, "concurrency": sessions, "size": size, "recipient": SINK, "server": server,
              "session_per_message": not reuse}
    outcome = execute_run(bench, RunRequest("local", "mailstorm", params, interval=1.0), RunControl())
    if outcome.status != "done":
        raise SystemExit(f"mail storm failed: {outcome.error}")
    detail = bench.store.runs.get(outcome.run_id)
    rates = {s.metric: s.value for s in detail.results}
    if rates.get("accepted") != messages:
        raise SystemExit(f"only {rates.get('accepted')} of {messages} accepted")
    return float(rates["accepted_per_s"])


def generator_rate(server: str, messages: int, sessions: int, size: int, reuse: bool) -> tuple[float, float]:
    """msg/s and its CPU seconds."""
    host, port = mail_smtp.parse_server(server)
    stats = mail_smtp.Stats()
    batches = [mail_message.messages("bench", SINK, size, 1 + i * messages, mail_message.share(
        messages, sessions, i)) for i in range(sessions)]
    cpu = own_cpu()
    mail_sender.storm(host, port, bench_mailstorm.HELO, 30.0, bench_mailstorm.SENDER, SINK, batches,
                      not reuse, stats, threading.Event())
    cpu = own_cpu() - cpu
    if stats.accepted != messages:
        raise SystemExit(f"generator alone: only {stats.accepted} of {messages} accepted ({stats.last_error})")
    return messages / (stats.accept_times[-1] - stats.first_attempt), cpu


def median_us(seconds: list[float], messages: int) -> str:
    return f"{statistics.median(seconds) / messages * 1e6:.0f}"


MODES = {"per-message": ((False, "a session per message"),), "reused": ((True, "reused sessions (-d)"),)}
MODES["both"] = MODES["per-message"] + MODES["reused"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--target", choices=("sink", "postfix"), default="sink")
    parser.add_argument("--modes", choices=tuple(MODES), default="both")
    args = parser.parse_args()
    if args.target == "postfix":
        why = configure_postfix()
        if why:
            print(f"no Postfix sink: {why}", file=sys.stderr)
            return 1
        server: contextlib.AbstractContextManager = contextlib.nullcontext((POSTFIX, lambda: 0.0))
    else:
        server = smtp_sink()
    with tempfile.TemporaryDirectory() as tmp, server as (address, server_cpu):
        (Path(tmp) / "ssh_config").write_text("")
        bench = Workbench(home=Path(tmp) / "home", db_url=f"sqlite:///{Path(tmp) / 'store.sqlite3'}",
                          ssh_config_path=Path(tmp) / "ssh_config", user_known_hosts=Path(tmp) / "known_hosts")
        postfix = args.target == "postfix"
        try:
            where = (f"Postfix on {address} (benchbay.invalid discarded)" if postfix
                     else f"smtp-sink on {address}")
            print(f"{args.messages} messages of {args.size} B over {args.sessions} sessions to {where}, "
                  f"median of {args.rounds} rounds; load average before: {os.getloadavg()[0]:.1f}")
            for reuse, label in MODES[args.modes]:
                ours, theirs, alone = [], [], []
                theirs_cpu, alone_cpu, sink_theirs, sink_alone = [], [], [], []
                for _ in range(args.rounds):   # alternate, so a slow spell of the machine hits all three
                    if postfix:
                        wait_for_empty_queue()
                    before = server_cpu()
                    rate, cpu = smtp_source_rate(address, args.messages, args.sessions, args.size, reuse)
                    theirs.append(rate)
                    theirs_cpu.append(cpu)
                    sink_theirs.append(server_cpu() - before)
                    if postfix:
                        wait_for_empty_queue()
                    ours.append(benchbay_rate(bench, address, args.messages, args.sessions, args.size, reuse))
                    if postfix:
                        wait_for_empty_queue()
                    before = server_cpu()
                    rate, cpu = generator_rate(address, args.messages, args.sessions, args.size, reuse)
                    alone.append(rate)
                    alone_cpu.append(cpu)
                    sink_alone.append(server_cpu() - before)
                a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(alone)
                paired = statistics.median(x / y for x, y in zip(ours, theirs, strict=True))
                paired_alone = statistics.median(x / y for x, y in zip(alone, theirs, strict=True))
                print(f"  rounds: smtp-source {', '.join(f'{x:.0f}' for x in theirs)}; "
                      f"benchbay {', '.join(f'{x:.0f}' for x in ours)}; generator alone "
                      f"{', '.join(f'{x:.0f}' for x in alone)}; median of the rounds' ratios {paired:.2f} "
                      f"(alone {paired_alone:.2f})")
                verdict = "ok" if a / b >= 1.0 else "MISSED"
                print(f"{label:<24} smtp-source {b:6.0f} msg/s   benchbay {a:6.0f} msg/s   ratio {a / b:5.2f}  "
                      f"(goal >= 1.0: {verdict})   generator alone {c:6.0f} msg/s   ratio {c / b:5.2f}")
                cost = (f"  CPU per message (us, medians): smtp-source {median_us(theirs_cpu, args.messages)}, "
                        f"generator alone {median_us(alone_cpu, args.messages)}")
                if not postfix:
                    cost += (f"; smtp-sink serving smtp-source {median_us(sink_theirs, args.messages)}, "
                             f"serving the generator {median_us(sink_alone, args.messages)}")
                print(cost)
        finally:
            bench.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
