"""CPU cost of our telemetry sampler against `iostat -x 1`, side by side on this machine.

    python benchmarks/sampler_overhead.py [--seconds 60] [--interval 1]

Runs the sampler (bash path, and the plain POSIX sh path under dash when the machine has dash) and
`iostat -x <interval>` at the same time for the given seconds, stops them, and takes each one's CPU time
(user + system) from wait4(), which includes the children it waited for (the POSIX path's cat and sleep).
That total includes starting up (exec, bash's own start, the sampler's one mkfifo); the steady state,
what an hour of monitoring costs, is measured from the 5th second on: the kernel's precise run time of
the process (/proc/PID/schedstat, ns) plus the CPU time of the children it reaped meanwhile
(cutime + cstime in /proc/PID/stat). Prints CPU seconds per hour for each, and the ratio to iostat.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from remote.telemetry.sampler import interval_text, sampler_script  # noqa: E402


@dataclass
class Contender:
    name: str
    argv: list[str]
    output: Path
    proc: subprocess.Popen | None = None
    cpu: float = 0.0              # whole life, from wait4
    steady_start: float = 0.0
    steady: float = 0.0           # from the warm-up on


def _cpu_now(pid: int) -> float:
    """Seconds of CPU used so far by pid itself (precise) and by the children it has reaped."""
    with open(f"/proc/{pid}/schedstat") as handle:
        own = int(handle.read().split()[0]) / 1e9
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    children = (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime, cstime
    return own + children


def _start(contender: Contender, cwd: str) -> None:
    with open(contender.output, "ab") as out:
        contender.proc = subprocess.Popen(contender.argv, stdin=subprocess.DEVNULL, stdout=out,
                                          stderr=subprocess.DEVNULL, cwd=cwd, start_new_session=True)


def _stop(contender: Contender) -> None:
    proc = contender.proc
    assert proc is not None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    contender.cpu = usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before the steady state is measured")
    args = parser.parse_args(argv)
    if not shutil.which("iostat"):
        print("iostat (sysstat) is not installed: nothing to compare with", file=sys.stderr)
        return 1
    interval = interval_text(args.interval)
    with tempfile.TemporaryDirectory(prefix="benchbay-bench-") as tmp:
        root = Path(tmp)
        contenders = [Contender("iostat -x", ["iostat", "-x", interval], root / "iostat.out")]
        shells = [("sampler (bash)", "sh", "auto")]
        if shutil.which("dash"):
            shells.append(("sampler (POSIX sh: dash, cat, sleep)", "dash", "posix"))
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        for name, shell, mode in shells:
            run = root / mode
            run.mkdir(mode=0o700)
            (run / "sampler.sh").write_bytes(sampler_script())
            (run / "deadline").write_text(f"{uptime + args.seconds + 600:.0f}\n")
            contenders.append(Contender(name, [shell, str(run / "sampler.sh"), str(run), interval, mode],
                                        run / "samples.raw"))
        started = time.monotonic()
        for contender in contenders:
            _start(contender, tmp)
        warmup = min(args.warmup, args.seconds / 2)
        try:
            time.sleep(warmup)
            for contender in contenders:
                contender.steady_start = _cpu_now(contender.proc.pid)  # type: ignore[union-attr]
            steady_from = time.monotonic()
            time.sleep(args.seconds - warmup)
            for contender in contenders:
                contender.steady = _cpu_now(contender.proc.pid) - contender.steady_start  # type: ignore[union-attr]
            steady_time = time.monotonic() - steady_from
        finally:
            for contender in contenders:
                _stop(contender)
        elapsed = time.monotonic() - started
        print(f"{elapsed:.0f} s at {interval} s intervals; CPU time = user + system, children included")
        print(f"  {'':38s} {'whole run':>17s}   {'steady state (after ' + f'{warmup:g}' + ' s)':>34s}")
        for contender in contenders:
            size = contender.output.stat().st_size * 3600 / elapsed / 1e6
            print(f"  {contender.name:38s} {contender.cpu * 1000:7.1f} ms {_ratio(contender.cpu, contenders[0].cpu)}"
                  f"   {contender.steady * 3600 / steady_time:6.2f} CPU s/hour "
                  f"{_ratio(contender.steady, contenders[0].steady)}   output {size:.1f} MB/hour")
    return 0


def _ratio(value: float, base: float) -> str:
    return f"({value / base:4.2f} x iostat)" if base else "(iostat: no measurable CPU)"


if __name__ == "__main__":
    sys.exit(main())
