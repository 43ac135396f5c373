"""Benchbay's mail storm against Postfix's own generator, smtp-source, on the same Postfix in one run.

    python benchmarks/mailstorm_vs_smtp_source.py [--messages 2000] [--sessions 20] [--size 4096] [--rounds 3]

Configures the local Postfix as the tests do (loopback only, benchbay.invalid to discard:), then for
each session mode — a new session per message (smtp-source's default) and reused sessions (its -d) —
sends the same messages with smtp-source and with Benchbay's agent test through the run engine on
`local`, and prints accepted msg/s of each (median of the rounds) and the ratio. Goal: ≥ 0.9, so the
generator is never the bottleneck. A third figure, "generator alone", is the agent's sender
(remote.agent.mail_sender) driven in this process without the run engine, its telemetry and the
workbench beside it: on a small machine shared with the MTA, the difference between the two is what
the run engine costs the MTA, not the generator. smtp-source is timed from its start to its exit. Every storm starts
with Postfix's queue empty: the previous storm's messages still on their way to discard would slow down
whichever tool came next.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.engine.orchestrator import RunControl, RunRequest, execute_run  # noqa: E402
from app.workbench import Workbench  # noqa: E402
from remote.agent import bench_mailstorm, mail_sender, mail_smtp  # noqa: E402
from tests.fixtures.postfix import configure_postfix  # noqa: E402

SINK = "sink@benchbay.invalid"


def wait_for_empty_queue(timeout: float = 300.0) -> None:
    tool = shutil.which("postqueue") or "/usr/sbin/postqueue"
    deadline = time.monotonic() + timeout
    while subprocess.run([tool, "-j"], capture_output=True, text=True, check=True).stdout.strip():
        if time.monotonic() > deadline:
            raise SystemExit("Postfix's queue did not drain")
        time.sleep(0.5)
    time.sleep(1.0)   # let the delivery agents of the last messages go idle


def smtp_source_rate(messages: int, sessions: int, size: int, reuse: bool) -> float:
    tool = shutil.which("smtp-source") or "/usr/sbin/smtp-source"
    argv = [tool, "-s", str(sessions), "-m", str(messages), "-l", str(size), "-f", "bench@benchbay.invalid",
            "-t", SINK, "-M", "localhost"] + (["-d"] if reuse else []) + ["127.0.0.1:25"]
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, timeout=600)
    return messages / (time.perf_counter() - started)


def benchbay_rate(bench: Workbench, messages: int, sessions: int, size: int, reuse: bool) -> float:
    params = {"messages": messages, "concurrency": sessions, "size": size, "recipient": SINK,
              "session_per_message": not reuse}
    outcome = execute_run(bench, RunRequest("local", "mailstorm", params, interval=1.0), RunControl())
    if outcome.status != "done":
        raise SystemExit(f"mail storm failed: {outcome.error}")
    detail = bench.store.runs.get(outcome.run_id)
    rates = {s.metric: s.value for s in detail.results}
    if rates.get("accepted") != messages:
        raise SystemExit(f"only {rates.get('accepted')} of {messages} accepted")
    return float(rates["accepted_per_s"])


def generator_rate(messages: int, sessions: int, size: int, reuse: bool) -> float:
    stats = mail_smtp.Stats()
    batches = [bench_mailstorm._messages("bench", SINK, size, 1 + i * messages, bench_mailstorm._share(
        messages, sessions, i)) for i in range(sessions)]
    mail_sender.storm("127.0.0.1", 25, bench_mailstorm.HELO, 30.0, bench_mailstorm.SENDER, SINK, batches,
                      not reuse, stats, threading.Event())
    if stats.accepted != messages:
        raise SystemExit(f"generator alone: only {stats.accepted} of {messages} accepted ({stats.last_error})")
    return messages / (stats.accept_times[-1] - stats.first_attempt)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    why = configure_postfix()
    if why:
        print(f"no Postfix sink: {why}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "ssh_config").write_text("")
        bench = Workbench(home=Path(tmp) / "home", db_url=f"sqlite:///{Path(tmp) / 'store.sqlite3'}",
                          ssh_config_path=Path(tmp) / "ssh_config", user_known_hosts=Path(tmp) / "known_hosts")
        try:
            print(f"{args.messages} messages of {args.size} B over {args.sessions} sessions to Postfix on "
                  f"127.0.0.1:25 (benchbay.invalid discarded), median of {args.rounds} rounds")
            for reuse, label in ((False, "a session per message"), (True, "reused sessions (-d)")):
                ours, theirs, alone = [], [], []
                for _ in range(args.rounds):   # alternate, so a slow spell of the machine hits all three
                    wait_for_empty_queue()
                    theirs.append(smtp_source_rate(args.messages, args.sessions, args.size, reuse))
                    wait_for_empty_queue()
                    ours.append(benchbay_rate(bench, args.messages, args.sessions, args.size, reuse))
                    wait_for_empty_queue()
                    alone.append(generator_rate(args.messages, args.sessions, args.size, reuse))
                a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(alone)
                paired = statistics.median(x / y for x, y in zip(ours, theirs, strict=True))
                print(f"  rounds: smtp-source {', '.join(f'{x:.0f}' for x in theirs)}; "
                      f"benchbay {', '.join(f'{x:.0f}' for x in ours)}; generator alone "
                      f"{', '.join(f'{x:.0f}' for x in alone)}; median of the rounds' ratios {paired:.2f}")
                verdict = "ok" if a / b >= 0.9 else "MISSED"
                print(f"{label:<24} smtp-source {b:6.0f} msg/s   benchbay {a:6.0f} msg/s   ratio {a / b:5.2f}  "
                      f"(goal >= 0.9: {verdict})   generator alone {c:6.0f} msg/s   ratio {c / b:5.2f}")
        finally:
            bench.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
