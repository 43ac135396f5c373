"""One workbench running the idle test on N hosts at once: do all finish, how long, at what cost.

    sudo .venv/bin/python benchmarks/many_hosts.py [--hosts 50] [--seconds 60] [--startup-ms 100 [--startup-cpu]]
                                                   [--keep]

Needs root (each test host is a real OpenSSH sshd). Starts N sshd test hosts with the test suite's
helpers (tests/fixtures/sshd.py) on 127.0.0.100, 127.0.0.101, ... (free high ports), each with its own
host keys and its own TMPDIR (SetEnv), so the runs do not share /tmp. In a fresh Benchbay home and SQLite
store in a temporary directory (its settings point at an empty ssh_config and known_hosts, so the user's
~/.ssh is not read) it adds the hosts (`benchbay host add NAME --auth key --key ...`) and trusts their
ed25519 keys (`benchbay host trust NAME --fingerprint ...`), in this process through app.cli.main. Then
ONE subprocess, timed by `/usr/bin/time -v` (resource.getrusage of children without it):

    python main.py run h1 ... hN --test idle --set phases=[[warm-up],[measure]] --json

with phases totalling --seconds (10 % warm-up). Prints how many hosts finished done / failed (each
failure's reason from `benchbay runs list --json`, or from the run's own output when no run was stored),
the wall time of the whole command against the seconds measured (ratio), the workbench's CPU seconds
(user + sys, also as a share of one core over the wall time), its peak resident memory, how spread
out the hosts started and finished, and the machine's load average before and after. Every sshd is
stopped and the temporary directory removed at the end, also on failure or Ctrl-C (--keep leaves the
directory, with the run's stderr in run.stderr, for a look).

--startup-ms N gives each host's login user a heavy start-up file, as `pyenv init` or `conda init` in
~/.bashrc are (bash reads it for every command sshd runs): a `.bashrc` in the host's HOME that sleeps N ms
(with --startup-cpu: spends N ms of CPU time, as those do) and appends a line to `.startups` there, so
the output also says how many shell start-ups each host paid.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pwd
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402  (SshdServer.start reports a failed start with pytest.fail)

from app.cli import main as benchbay  # noqa: E402
from tests.fixtures.processes import processes_using  # noqa: E402
from tests.fixtures.sshd import SSHD, SshdServer, keygen, ssh_keygen_fingerprint  # noqa: E402
from tests.fixtures.store import write_settings  # noqa: E402

FIRST_ADDRESS = 100            # 127.0.0.100 + i
MAX_HOSTS = 255 - FIRST_ADDRESS
TIME = "/usr/bin/time"
SETUP_WORKERS = 8              # sshd set-ups (two host keys each) at once
STOP_GRACE = 60.0              # seconds a cancelled run gets to clean up before it is killed
STARTUPS = ".startups"         # in a host's HOME: a line per run of its start-up file (--startup-ms)


class Interrupted(Exception):
    """SIGTERM: leave as Ctrl-C does, through the clean-up."""


def _on_sigterm(_signum, _frame) -> None:
    raise Interrupted


def _cli(*argv: str) -> tuple[int, str, str]:
    """`benchbay ARGV` in this process; its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = benchbay(list(argv))
    return code, out.getvalue(), err.getvalue()


def _start_server(root: Path, index: int, authorized: Path, startup: str) -> SshdServer:
    name = f"h{index + 1}"
    host_dir = root / "hosts" / name
    tmpdir = host_dir / "tmp"
    tmpdir.mkdir(parents=True, mode=0o700)
    server = SshdServer(host_dir, name, f"127.0.0.{FIRST_ADDRESS + index}", authorized, env={"TMPDIR": str(tmpdir)})
    if startup:
        (server.home / ".bashrc").write_text(f'echo x >> "$HOME/{STARTUPS}"\n{startup}\n')
    server.start()
    return server


def _startup_file(ms: float, cpu: bool) -> str:
    """The .bashrc's work: a sleep, or (cpu) a bash loop calibrated here to take `ms` of CPU time, as
    `pyenv init` does (its cost then grows with the machine's load, as a real start-up file's does)."""
    if ms <= 0:
        return ""
    if not cpu:
        return f"sleep {ms / 1000:g}"
    loop = "i=0; while [ $i -lt {n} ]; do i=$((i + 1)); done"
    trial = 200_000
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["bash", "-c", loop.format(n=trial)], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return loop.format(n=max(1, round(trial * ms / 1000 / max(spent, 1e-3))))


def _startups(servers: list[SshdServer]) -> list[int]:
    """How many times each host's start-up file ran (and reset the count)."""
    counts = []
    for server in servers:
        path = server.home / STARTUPS
        counts.append(len(path.read_text().splitlines()) if path.exists() else 0)
        path.unlink(missing_ok=True)
    return counts


def _start_servers(root: Path, count: int, authorized: Path, servers: list[SshdServer], startup: str) -> None:
    """Start `count` sshd, appending each to `servers` as soon as it runs (so the clean-up finds it)."""
    pool = ThreadPoolExecutor(max_workers=SETUP_WORKERS)
    futures = []
    try:
        futures = [pool.submit(_start_server, root, i, authorized, startup) for i in range(count)]
        for future in futures:
            try:
                servers.append(future.result())
            except pytest.fail.Exception as exc:      # did not start: its log is in the message
                raise RuntimeError(str(exc)) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for future in futures:   # started after an error or an interrupt: still ours to stop
            started = future.done() and not future.cancelled() and future.exception() is None
            if started and future.result() not in servers:
                servers.append(future.result())


def _parse_time_v(path: Path) -> dict[str, float]:
    figures = {}
    keys = {"User time (seconds)": "user", "System time (seconds)": "sys",
            "Maximum resident set size (kbytes)": "maxrss_kb"}
    for line in path.read_text().splitlines():
        label, _, value = line.strip().rpartition(": ")
        if label in keys:
            figures[keys[label]] = float(value)
    return figures


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _timeline(runs, began: float, ended: float) -> str:
    """How spread out the hosts started (stored as running) and finished, from the stored runs; how long the
    command took before the first start (connections, its own start-up) and after the last end (wall clock)."""
    def when(text: str | None) -> float | None:
        return datetime.fromisoformat(text).timestamp() if text else None

    starts = [t for t in (when(run.get("started_at")) for run in runs) if t is not None]
    ends = [t for t in (when(run.get("finished_at")) for run in runs) if t is not None]
    if not starts or not ends:
        return ""
    longest = max(e - s for s, e in zip(starts, ends, strict=False))
    return (f"hosts started within {max(starts) - min(starts):.1f} s of each other and finished within "
            f"{max(ends) - min(ends):.1f} s; the longest run took {longest:.1f} s; the first run was stored "
            f"{min(starts) - began:.1f} s after the command began, the command ended {ended - max(ends):.1f} s "
            "after the last run did")


def _stop_run(proc: subprocess.Popen) -> None:
    """Cancel as Ctrl-C would (the hosts clean up), then kill what is left."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(STOP_GRACE)
    except (subprocess.TimeoutExpired, KeyboardInterrupt, Interrupted):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _cleanup(root: Path, servers: list[SshdServer], keep: bool) -> None:
    for server in servers:
        server.stop()
    # an agent the run left behind on a host (it is detached from sshd): it names its run directory
    for pid in processes_using(str(root)):
        if pid != os.getpid():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    if keep:
        print(f"# kept {root}", file=sys.stderr)
    else:
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=50, help=f"sshd test hosts, 1-{MAX_HOSTS} (default 50)")
    parser.add_argument("--seconds", type=float, default=60.0, help="the idle test's length (default 60)")
    parser.add_argument("--startup-ms", type=float, default=0.0,
                        help="milliseconds each host's ~/.bashrc takes (default 0: no start-up file)")
    parser.add_argument("--startup-cpu", action="store_true",
                        help="the start-up file spends its time on the CPU (as pyenv init does) instead of sleeping")
    parser.add_argument("--keep", action="store_true", help="do not remove the temporary directory")
    args = parser.parse_args()
    if not 1 <= args.hosts <= MAX_HOSTS:
        parser.error(f"--hosts must be 1-{MAX_HOSTS}")
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.startup_ms < 0:
        parser.error("--startup-ms must not be negative")
    if os.geteuid() != 0:
        print("many_hosts.py needs root: the test hosts are sshd processes (run it with sudo)", file=sys.stderr)
        return 2
    if not os.access(SSHD, os.X_OK):
        print(f"many_hosts.py needs {SSHD} (openssh-server)", file=sys.stderr)
        return 2

    warmup = round(args.seconds * 0.1, 3)
    phases = [["warmup", "Warm-up", warmup], ["measure", "Measure", round(args.seconds - warmup, 3)]]
    names = [f"h{i + 1}" for i in range(args.hosts)]
    signal.signal(signal.SIGINT, signal.default_int_handler)   # also when started in the background
    signal.signal(signal.SIGTERM, _on_sigterm)
    root = Path(tempfile.mkdtemp(prefix="benchbay-many-hosts-"))
    servers: list[SshdServer] = []
    proc: subprocess.Popen | None = None
    try:
        # -- the hosts
        began = time.monotonic()
        client_key = keygen(root / "client_ed25519", "ed25519", "benchbay-many-hosts")
        authorized = root / "authorized_keys"
        authorized.write_text(Path(f"{client_key}.pub").read_text())
        _start_servers(root, args.hosts, authorized, servers, _startup_file(args.startup_ms, args.startup_cpu))
        sshd_seconds = time.monotonic() - began

        # -- a fresh workbench that knows them
        began = time.monotonic()
        home, db = root / "home", f"sqlite:///{root / 'store.sqlite3'}"
        home.mkdir()
        (root / "ssh_config").touch()
        (root / "known_hosts").touch()
        write_settings(home, ssh_config=str(root / "ssh_config"), user_known_hosts=str(root / "known_hosts"))
        common = ("--home", str(home), "--db", db)
        user = pwd.getpwuid(os.getuid()).pw_name
        for server in servers:
            for argv in (("host", "add", server.name, "--address", server.address, "--port", str(server.port),
                          "--user", user, "--auth", "key", "--key", str(client_key)),
                         ("host", "trust", server.name, "--fingerprint",
                          ssh_keygen_fingerprint(server.host_key_path))):
                code, _out, err = _cli(*common, *argv)
                if code != 0:
                    print(f"`benchbay {' '.join(argv)}` failed ({code}): {err.strip()}", file=sys.stderr)
                    return 1
        hosts_seconds = time.monotonic() - began
        _startups(servers)   # the set-up ran none, but start the count from nothing
        print(f"# idle test, {args.seconds:g} s (warm-up {phases[0][2]:g} s + measure {phases[1][2]:g} s), "
              f"on {args.hosts} sshd hosts 127.0.0.{FIRST_ADDRESS}-127.0.0.{FIRST_ADDRESS + args.hosts - 1}, "
              f"one `benchbay run`; "
              + (f"start-up file {args.startup_ms:g} ms{' of CPU' if args.startup_cpu else ''}; "
                 if args.startup_ms else "")
              + f"set-up: sshd {sshd_seconds:.1f} s, host add + trust {hosts_seconds:.1f} s",
              flush=True)

        # -- ONE run on all of them
        command = [sys.executable, str(ROOT / "main.py"), *common, "run", *names, "--test", "idle",
                   "--set", "phases=" + json.dumps(phases), "--json"]
        timed = os.access(TIME, os.X_OK)
        time_file = root / "time.txt"
        if timed:
            command = [TIME, "-v", "-o", str(time_file), *command]
        load_before = _load()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        limit = 5 * args.seconds + 300
        with open(root / "run.stdout", "wb") as out, open(root / "run.stderr", "wb") as err:
            began, began_wall = time.monotonic(), time.time()
            # its own session: the run is cancelled by us (SIGINT to its group), never half by the terminal
            proc = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True)
            try:
                code = proc.wait(limit)
            except subprocess.TimeoutExpired:
                print(f"# the run did not end in {limit:g} s: cancelled", file=sys.stderr)
                _stop_run(proc)
                code = proc.returncode
            wall, ended_wall = time.monotonic() - began, time.time()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if timed and time_file.exists() and time_file.stat().st_size:
            usage = _parse_time_v(time_file)
            user_s, sys_s, peak_mb = usage["user"], usage["sys"], usage["maxrss_kb"] / 1024
            how = "/usr/bin/time -v"
        else:
            user_s, sys_s = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
            peak_mb, how = after.ru_maxrss / 1024, "getrusage(RUSAGE_CHILDREN)"

        # -- what the store says
        _code, listed, _err = _cli(*common, "runs", "list", "--test", "idle", "--json")
        runs = {run["host_name"]: run for run in json.loads(listed or "[]")}
        try:
            reported = {row["host"]: row for row in json.loads((root / "run.stdout").read_text())["runs"]}
        except (ValueError, KeyError):
            reported = {}
        statuses: dict[str, list[str]] = {}
        failures = []
        for name in names:
            run = runs.get(name)
            if run is not None:
                status, reason = run["status"], run["error"]
            elif name in reported:
                status, reason = reported[name]["status"], f"(no stored run) {reported[name]['error']}"
            else:
                status, reason = "missing", "no stored run and no line in the run's output"
            statuses.setdefault(status, []).append(name)
            if status != "done":
                failures.append((name, status, reason))

        cpu = user_s + sys_s
        print(f"machine load (1/5/15 min) before the run: {load_before}, after: {_load()}")
        print(f"exit code: {code}")
        print("hosts: " + ", ".join(f"{len(hosts)} {status}" for status, hosts in sorted(statuses.items()))
              + f" (of {args.hosts})")
        print(f"wall time: {wall:.1f} s for {args.seconds:g} s measured = {wall / args.seconds:.2f}x "
              f"(+{wall - args.seconds:.1f} s)")
        print(f"workbench CPU ({how}): user {user_s:.1f} s + sys {sys_s:.1f} s = {cpu:.1f} s = "
              f"{100 * cpu / wall:.0f} % of one core over the wall time, {cpu / args.hosts:.2f} s per host")
        print(f"workbench peak RSS: {peak_mb:.0f} MB ({peak_mb / args.hosts:.1f} MB per host)")
        if args.startup_ms:
            counts = sorted(_startups(servers))
            print(f"shell start-ups per host: min {counts[0]}, median {counts[len(counts) // 2]}, max {counts[-1]} "
                  f"({sum(counts)} in all)")
        timeline = _timeline(runs.values(), began_wall, ended_wall)
        if timeline:
            print(timeline)
        for name, status, reason in failures:
            print(f"  {name}: {status}: {reason}")
        if not runs and not reported:
            tail = (root / "run.stderr").read_text(errors="replace").strip().splitlines()[-10:]
            print("run stderr (last lines):\n  " + "\n  ".join(tail))
        return 0 if not failures else 1
    except (KeyboardInterrupt, Interrupted):
        print("# interrupted: cleaning up", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)    # the clean-up is not to be interrupted halfway
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if proc is not None:
            _stop_run(proc)
        _cleanup(root, servers, args.keep)


if __name__ == "__main__":
    sys.exit(main())
