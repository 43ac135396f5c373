"""Benchbay's mail storm against Postfix's own generator, smtp-source, on the same Postfix in one run.

    python benchmarks/mailstorm_vs_smtp_source.py [--messages 2000] [--sessions 20] [--size 4096] [--rounds 3]

Configures the local Postfix as the tests do (loopback only, benchbay.invalid to discard:), then for
each session mode — a new session per message (smtp-source's default) and reused sessions (its -d) —
sends the same messages with smtp-source and with Benchbay's agent test through the run engine on
`local`, and prints accepted msg/s of each (median of the rounds) and the ratio. Goal: ≥ 0.9, so the
generator is never the bottleneck. smtp-source is timed from its start to its exit.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.run_orchestrator import RunControl, RunRequest, execute_run  # noqa: E402
from app.workbench import Workbench  # noqa: E402
from tests.fixtures.postfix import configure_postfix  # noqa: E402

SINK = "sink@benchbay.invalid"


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
                ours, theirs = [], []
                for _ in range(args.rounds):   # alternate, so a slow spell of the machine hits both
                    theirs.append(smtp_source_rate(args.messages, args.sessions, args.size, reuse))
                    ours.append(benchbay_rate(bench, args.messages, args.sessions, args.size, reuse))
                a, b = statistics.median(ours), statistics.median(theirs)
                verdict = "ok" if a / b >= 0.9 else "MISSED"
                print(f"{label:<24} smtp-source {b:8.0f} msg/s   benchbay {a:8.0f} msg/s   ratio {a / b:5.2f}  "
                      f"(goal >= 0.9: {verdict})")
        finally:
            bench.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
