"""The telemetry sampler (a shell script, so a host without python3 can be monitored) and how to start it."""
from __future__ import annotations

import shlex
from importlib import resources

SAMPLER_FILE = "sampler.sh"
RAW_FILE = "samples.raw"
PID_FILE = "sampler.pid"
LOG_FILE = "sampler.log"
STOP_FILE = "stop"
MIN_INTERVAL = 0.5
MAX_INTERVAL = 10.0
# auto: bash when the host has it; posix: plain sh (cat + sleep per tick); compat: bash as before 5.2
MODES = ("auto", "posix", "compat")


def sampler_script() -> bytes:
    return resources.files("remote.telemetry").joinpath(SAMPLER_FILE).read_bytes()


def interval_text(interval: float) -> str:
    """The interval as the script takes it (seconds, at most two decimals); ValueError outside 0.5-10 s."""
    if not MIN_INTERVAL <= interval <= MAX_INTERVAL:
        raise ValueError(f"the telemetry interval must be {MIN_INTERVAL:g} to {MAX_INTERVAL:g} s, not {interval:g}")
    return f"{round(interval, 2):g}"


def span_text(seconds: float | None) -> str:
    """How long the sampler measures, as the script takes it ("0": until stopped)."""
    if seconds is None:
        return "0"
    if not 0 < seconds < 10**9:
        raise ValueError(f"a measurement lasts more than 0 seconds, not {seconds:g}")
    return f"{seconds:.2f}"


def start_command(run_dir: str, interval: float, mode: str = "auto", seconds: float | None = None) -> str:
    """Shell code that starts RUN/sampler.sh detached and returns at once.

    The sampler gets a session of its own when the host has setsid (then `kill -TERM -PID` stops it with
    anything it runs; without setsid it still stops when RUN/stop appears or RUN goes), ignores SIGHUP
    from its first instruction on, reads nothing, appends to RUN/samples.raw and complains into
    RUN/sampler.log; its pid goes to RUN/sampler.pid. The script must already be in RUN, and RUN/deadline
    should be written first (until it can read one, the sampler stops itself 5 minutes after starting).
    With `seconds`, it takes no tick past that span of the host's own clock and then writes RUN/sampler.done.
    """
    if mode not in MODES:
        raise ValueError(f"sampler mode must be one of {', '.join(MODES)}")
    run = shlex.quote(run_dir)

    def path(name: str) -> str:
        return shlex.quote(f"{run_dir}/{name}")

    # A background job of a non-interactive sh is never a process group leader, so setsid does not fork
    # and $! is the sampler's own pid (= its session and process group). An ignored signal stays ignored
    # across exec: no nohup needed.
    return (
        "if command -v setsid >/dev/null 2>&1; then bb_setsid=setsid; else bb_setsid=; fi; "
        f"(trap '' HUP; cd / && exec $bb_setsid sh {path(SAMPLER_FILE)} {run} {interval_text(interval)} {mode} "
        f"{span_text(seconds)} "
        f"</dev/null >>{path(RAW_FILE)} 2>>{path(LOG_FILE)}) & "
        f"echo $! >{path(PID_FILE)}"
    )
