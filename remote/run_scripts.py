"""The POSIX sh a detached run sends to its host: start, deadline, liveness, stopping, signals.

Pure functions from the run directory (and a few numbers) to script text: no I/O here, so each
script can be read, quoted and tested on its own. Every remote argument is shlex-quoted. The
scripts need only sh, awk, sed, cat, kill, df, tr and grep: a host may have no python at all.
"""
from __future__ import annotations

import shlex

from remote.agent.run_secrets import SECRETS_FIFO
from remote.telemetry.sampler import SAMPLER_FILE

# how the agent's python starts: -E -s -S, so the host's PYTHON* variables, user site-packages and the .pth
# files of its site-packages (some import whole packages at every start) neither change nor slow the agent,
# which needs the standard library only
AGENT_FLAGS = ("-E", "-s", "-S")
SECRETS_TIMEOUT = 15.0   # seconds the agent has to open its secrets fifo after it started


def _q(text: str) -> str:
    return shlex.quote(text)


def alive_function() -> str:
    """sh defining `alive PID`: running, and not a zombie (an init slow to reap would fool kill -0)."""
    return ("alive() { kill -0 \"$1\" 2>/dev/null || return 1; "
            "[ \"$(sed -n 's/^.*) \\(.\\).*/\\1/p' /proc/$1/stat 2>/dev/null)\" != Z ]; }; ")


def deadline_command(run_dir: str, floor: float, add: float) -> str:
    """RUN/deadline = max(floor, host uptime + add), replaced whole: readers never see it empty.

    Fails with one line of its own, not awk's: a full disk (under 64 KB free) is the usual reason.
    """
    tmp, path = f"{run_dir}/deadline.tmp", f"{run_dir}/deadline"
    program = '{d = $1 + add; if (d < floor) d = floor; printf "%d\\n", d}'
    run = _q(run_dir)
    why = (f"a=$(df -Pk {run} 2>/dev/null | awk 'NR > 1 {{print $4}}'); case $a in '' | *[!0-9]*) a=64;; esac; "
           f"if [ \"$a\" -lt 64 ]; then echo {_q(f'no space left in the run directory {run_dir}')} >&2; "
           f"else echo {_q(f'could not write {path}')} >&2; fi")
    return (f"{{ awk -v add={add:.0f} -v floor={floor:.0f} {_q(program)} /proc/uptime > {_q(tmp)} "
            f"&& mv -f {_q(tmp)} {_q(path)}; }} 2>/dev/null || {{ rm -f {_q(tmp)}; {why}; false; }}")


KILL_FILE = "kill.sh"
_KILL_END = "BENCHBAY_KILL_SCRIPT_END"


BOOT_ID = "/proc/sys/kernel/random/boot_id"   # a new one at every boot: tells a reboot from a removal
PRINT_BOOT = f"printf 'boot=%s\\n' \"$(cat {BOOT_ID} 2>/dev/null)\""


def boot_id_in(words: list[str]) -> str:
    """The host's boot id from a script's `boot=...` word ("" when the host has none)."""
    found = [w.split("=", 1)[1] for w in words if w.startswith("boot=")]
    return found[-1] if found else ""


def start_script(run_dir: str, deadline: str, start_sampler: str, python: str | None, secrets: bool,
                 kill_script: str = "") -> str:
    """sh that starts the run detached in `run_dir` and prints `deadline=N` once it runs.

    `deadline` and `start_sampler` are commands of their own (deadline_command, the sampler's
    start_command); `python` is None for a monitor (no agent). With `secrets`, the command's
    stdin is copied into the agent's fifo: no file, no argv, no environment holds them.
    `kill_script` goes to RUN/kill.sh, which the sampler runs when the run expires without a
    workbench: an agent that hangs then still takes everything it started (and its test files) with it.
    """
    lines = [f"cd {_q(run_dir)} || exit 1", deadline + " || exit 1"]
    if kill_script:
        lines.append(f"cat > {KILL_FILE} <<'{_KILL_END}' || exit 1\n{kill_script.rstrip()}\n{_KILL_END}")
    lines.append(start_sampler)
    if secrets:
        lines.append(f"mkfifo -m 600 {SECRETS_FIFO} || exit 1")
    if python:
        # the background sh becomes the agent by exec (same pid), and the agent makes it its own
        # session; the pid is written here, before the start returns, so a cancel can always find it
        lines.append(f"sh -c 'exec \"$0\" {' '.join(AGENT_FLAGS)} agent.pyz run --run-dir \"$1\"' "
                     f"{_q(python)} {_q(run_dir)} </dev/null >>agent.log 2>&1 & echo $! > agent.pid")
    if secrets:
        lines.append(f"[ -p {SECRETS_FIFO} ] && timeout {SECRETS_TIMEOUT:.0f} sh -c 'cat > {SECRETS_FIFO}' "
                     "|| { echo 'the agent did not take the secrets' >&2; exit 1; }")
    lines.append(PRINT_BOOT)
    lines.append("printf 'deadline=%s\\n' \"$(cat deadline)\"")
    return "\n".join(lines)


def renew_script(run_dir: str, deadline: str) -> str:
    """sh for re-attaching: `boot=ID`, then `gone` without the run directory, else run `deadline` and print
    `deadline=N`."""
    return (f"{PRINT_BOOT}; cd {_q(run_dir)} 2>/dev/null || {{ echo gone; exit 0; }}; "
            + deadline + " && printf 'deadline=%s\\n' \"$(cat deadline)\"")


def liveness_script(run_dir: str) -> str:
    """sh printing `boot=ID`, then `gone`, or `agent=alive|dead sampler=alive|dead` from the pid files in
    `run_dir`."""
    return (alive_function() + f"{PRINT_BOOT}; cd {_q(run_dir)} 2>/dev/null || {{ echo gone; exit 0; }}; "
            "for f in agent sampler; do p=$(cat $f.pid 2>/dev/null); if [ -n \"$p\" ] && alive \"$p\"; "
            "then echo $f=alive; else echo $f=dead; fi; done")


def stop_sampler_script(run_dir: str) -> str:
    """sh that stops the sampler: TERM its group (the pid without setsid), KILL what is left after 0.5 s.

    Waits for it to be gone, so a drain that follows reads its very last tick. Signals only a pid that is
    still the sampler (its command line names RUN/sampler.sh): one that stopped by itself left its pid free.
    """
    return (alive_function() + f"cd {_q(run_dir)} 2>/dev/null || exit 0; p=$(cat sampler.pid 2>/dev/null); "
            "[ -n \"$p\" ] || exit 0; touch stop; "
            f"tr '\\0' '\\n' < \"/proc/$p/cmdline\" 2>/dev/null | grep -qxF -e {_q(f'{run_dir}/{SAMPLER_FILE}')} "
            "|| exit 0; for s in TERM KILL; do "
            "kill -$s \"-$p\" 2>/dev/null || kill -$s \"$p\" 2>/dev/null || break; i=0; "
            "while alive \"$p\" && [ $i -lt 5 ]; do sleep 0.1; i=$((i + 1)); done; done; true")


def signal_agent_script(run_dir: str, signal_name: str, touch_cancel: bool = False) -> str:
    """sh sending `signal_name` to the agent's process group (with RUN/cancel first when asked).

    For SIGKILL use remote.run_kill.kill_run_script: it also finds what left the agent's group.
    """
    touch = "touch cancel; " if touch_cancel else ""
    return (f"cd {_q(run_dir)} 2>/dev/null || exit 0; {touch}p=$(cat agent.pid 2>/dev/null); "
            "[ -n \"$p\" ] && [ \"$(cd \"/proc/$p/cwd\" 2>/dev/null && pwd -P)\" = \"$(pwd -P)\" ] && "
            f"kill -{_q(signal_name)} \"-$p\" 2>/dev/null; true")
