"""The several-client dbload's "client's limit" note: the machine's CPU against the load tool's own.

    .venv/bin/python benchmarks/tool_cpu_note.py [--seconds 5] [--snapshots 200] [--hogs N]

Two "steps" of --seconds each on this machine, measured the agent's way (remote/agent/tool_cpu.py) and the
old way (the whole machine's /proc/stat, remote/agent/client_sync.py): one in which this process (the "tool")
sleeps, one in which it keeps one CPU busy. On a machine busy with other work the old figure is high in both
steps; the tool's own is near 0 in the first and near 1/usable CPUs in the second. Also prints the CPU time one
snapshot costs (it reads every /proc/<pid>/stat once per step). Give the load average with the figures.

Beside each step the tool's wait for a CPU while it had work (tool_cpu.ReadyWait, sampled every second as the
agent does): --hogs N starts N processes that spin on every CPU for the run, so that a tool which wants a CPU
has to wait for it. The note that would be given is printed (app.engine.dbload_multi.limit_note).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine.dbload_multi import limit_note  # noqa: E402
from remote.agent import client_sync, tool_cpu  # noqa: E402


def _step(seconds: float, burn: bool) -> tuple[float | None, float | None, float | None]:
    tool_before, host_before = tool_cpu.snapshot(), client_sync.host_cpu()
    waits = tool_cpu.ReadyWait()
    waits.sample()
    end = time.monotonic() + seconds
    next_sample = time.monotonic() + 1.0
    while time.monotonic() < end:
        if not burn:
            time.sleep(0.05)
        if time.monotonic() >= next_sample:
            waits.sample()
            next_sample += 1.0
    waits.sample()
    host = client_sync.cpu_busy(host_before, client_sync.host_cpu())
    return tool_cpu.busy(tool_before, tool_cpu.snapshot(), 1), host, waits.share(1)


def _hog() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--snapshots", type=int, default=200)
    parser.add_argument("--hogs", type=int, default=0, help="processes spinning beside the tool")
    args = parser.parse_args()
    hogs = [_start_hog() for _ in range(args.hogs)]
    try:
        _measure(args)
    finally:
        for pid in hogs:
            os.kill(pid, 9)


def _start_hog() -> int:
    """A spinning process outside this one's tree (forked twice, its parent gone): other work, not the tool."""
    read, write = os.pipe()
    if os.fork() == 0:
        pid = os.fork()
        if pid == 0:
            _hog()
        os.write(write, str(pid).encode())
        os._exit(0)
    os.wait()
    return int(os.read(read, 32))


def _measure(args: argparse.Namespace) -> None:
    processes = sum(1 for name in os.listdir("/proc") if name.isdigit())
    began = time.process_time()
    for _ in range(args.snapshots):
        tool_cpu.snapshot()
    cost = (time.process_time() - began) / args.snapshots
    waits = tool_cpu.ReadyWait()
    began = time.process_time()
    for _ in range(args.snapshots):
        waits.sample()
    wait_cost = (time.process_time() - began) / args.snapshots
    print(f"load average {os.getloadavg()[0]:.2f}; {processes} processes; usable CPUs {tool_cpu.usable_cpus():g}; "
          f"{args.hogs} hog(s)")
    print(f"one snapshot: {cost * 1e3:.2f} ms CPU; one wait sample: {wait_cost * 1e3:.2f} ms CPU")
    for burn in (False, True):
        tool, host, waited = _step(args.seconds, burn)
        what = "tool keeps one CPU busy" if burn else "tool sleeps"
        note = limit_note({"tool": tool} if tool is not None else {}, {"tool": waited} if waited is not None else {})
        print(f"{what:<24} tool's own share {tool:.3f} of its one thread   whole machine {host:.3f}   "
              f"waited for a CPU {waited if waited is not None else float('nan'):.3f} of the step   "
              f"note: {note or '-'}")


if __name__ == "__main__":
    main()
