"""Our figures against sysstat's `iostat -x`: to the printed digit on fixed counters, and side by side
with the real iostat on this machine while fio loads a disk (the agreement is printed; run with -s)."""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from remote.local_transport import LocalTransport
from remote.telemetry import RawTickParser, TelemetryComputer, sampler_script
from remote.telemetry.parse import Header, Snapshot
from remote.telemetry.sampler import start_command
from tests.fixtures import loop_disks

pytestmark = pytest.mark.integration

IO_KEYS = ("r/s", "w/s", "rkB/s", "wkB/s")
LOADED = 20.0          # r/s + w/s above which an interval counts as loaded
IOSTAT_REPORTS = 12


def need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        message = f"{tool} is not installed (apt install fio sysstat)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return found


# -- to the printed digit -----------------------------------------------------------------------------

def _snap(seq: int, uptime_cs: int, disk: tuple[int, ...], cpu: dict[str, int]) -> Snapshot:
    header = Header(version=1, interval=1.0, epoch=1.7e9, uptime=0.0, disks=frozenset({"sda"}))
    return Snapshot(seq=seq, uptime_cs=uptime_cs, cpu=cpu, disks={"sda": disk}, load=(0.0, 0.0, 0.0),
                    tasks=(1, 1), mem={"MemTotal": 1}, psi={}, header=header)


def test_same_digits_as_iostat_on_fixed_counters():
    """iostat.c: S_VALUE(m, n, itv) = (n - m) / itv * 100 with itv in 1/100 s from /proc/uptime; printed %.2f.

    Over itv = 101 (1.01 s): 333 reads, 7 merged, 2663 sectors, 1000 ms reading (across the 32-bit wrap);
    77 writes, 12 merged, 9001 sectors, 123 ms writing; 997 ms busy (across the wrap); 12345 weighted ms.
    CPU: user 123, nice 4, system 56 + irq 7 + softirq 11, idle 703, iowait 89, steal 10: T = 1003 ticks.
    """
    wrap = 1 << 32
    before = (5000, 100, 400000, wrap - 400, 6000, 50, 900000, 7000, 0, wrap - 3, 50000, 0, 0, 0, 0, 0, 0)
    after = (5333, 107, 402663, 600, 6077, 62, 909001, 7123, 2, 994, 62345, 0, 0, 0, 0, 0, 0)
    cpu0 = {"user": 1000, "nice": 10, "system": 500, "idle": 9000, "iowait": 300, "irq": 20, "softirq": 30,
            "steal": 40, "guest": 0, "guest_nice": 0}
    cpu1 = {"user": 1123, "nice": 14, "system": 556, "idle": 9703, "iowait": 389, "irq": 27, "softirq": 41,
            "steal": 50, "guest": 0, "guest_nice": 0}
    computer = TelemetryComputer()
    computer.add(_snap(1, 500000, before, cpu0))
    sample = computer.add(_snap(2, 500101, after, cpu1))
    assert sample is not None
    printed = {key: f"{value:.2f}" for key, value in sample.disks["sda"].items()}
    assert printed == {
        "r/s": "329.70",      # 333 / 101 * 100
        "w/s": "76.24",       # 77 / 101 * 100
        "rkB/s": "1318.32",   # 2663 / 101 * 100 / 2
        "wkB/s": "4455.94",   # 9001 / 101 * 100 / 2
        "rrqm/s": "6.93",     # 7 / 101 * 100
        "wrqm/s": "11.88",    # 12 / 101 * 100
        "r_await": "3.00",    # 1000 / 333
        "w_await": "1.60",    # 123 / 77
        "rareq-sz": "4.00",   # 2663 / 333 / 2
        "wareq-sz": "58.45",  # 9001 / 77 / 2
        "aqu-sz": "12.22",    # 12345 / 101 * 100 / 1000
        "util": "98.71",      # 997 / 101 * 100 / 10
    }
    assert {key: f"{value:.2f}" for key, value in sample.cpu.items()} == {
        "user": "12.26", "nice": "0.40", "system": "7.38", "iowait": "8.87", "steal": "1.00", "idle": "70.09"}


# -- side by side with the real iostat ----------------------------------------------------------------

def _block_device(path: Path) -> str | None:
    """The whole disk (or dm device) under a directory, by kernel name; None on tmpfs and the like."""
    st = os.stat(path)
    sys_dev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not sys_dev.exists():
        return None
    real = sys_dev.resolve()
    return real.parent.name if (real / "partition").exists() else real.name


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A directory on a block device of its own where one can be made (root: a loop disk, so the I/O of the
    tests beside it lands elsewhere and each interval is fio's), else on the machine's disk (tmp may be
    tmpfs, where O_DIRECT and iostat see nothing)."""
    if os.geteuid() == 0 and not loop_disks.missing_tools():
        with loop_disks.loop_disks(tmp_path / "disk", ["agreement"], size_mib=128) as disks:
            yield disks["agreement"].mount
        return
    for base in (tmp_path, Path(__file__).resolve().parent):
        if _block_device(base):
            path = base / f".fio-{os.getpid()}"
            path.mkdir(exist_ok=True)
            yield path
            shutil.rmtree(path, ignore_errors=True)
            return
    pytest.skip("no directory on a block device to load")


class IostatReader:
    """Runs `iostat -x -y -c -d 1 N -o JSON`, noting when each report arrives (boot-time clock, as
    /proc/uptime), which is when iostat read the counters that end its interval."""

    def __init__(self, reports: int) -> None:
        self.arrivals: list[float] = []
        self.text: list[str] = []
        self.proc = subprocess.Popen(["iostat", "-x", "-y", "-c", "-d", "1", str(reports), "-o", "JSON"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "LC_ALL": "C"})
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode()
            if '"avg-cpu"' in line:
                self.arrivals.append(time.clock_gettime(time.CLOCK_BOOTTIME))
            self.text.append(line)

    def reports(self, timeout: float) -> list[tuple[float, dict]]:
        self.proc.wait(timeout=timeout)
        self.thread.join(timeout=5)
        stats = json.loads("".join(self.text))["sysstat"]["hosts"][0]["statistics"]
        assert len(stats) == len(self.arrivals)
        return list(zip(self.arrivals, stats, strict=True))


def _rel(ours: float, theirs: float) -> float:
    return abs(ours - theirs) / max(abs(theirs), 1e-9)


def test_agrees_with_iostat_under_fio_load(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fio = need("fio")
    need("iostat")
    device = _block_device(workdir)
    with LocalTransport() as local:
        run = Path(local.make_private_dir())
        (run / "sampler.sh").write_bytes(sampler_script())
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        (run / "deadline").write_text(f"{uptime + 120:.0f}\n")
        try:
            # both start now, so their one-second intervals nearly coincide
            iostat = IostatReader(IOSTAT_REPORTS)
            assert local.run(start_command(str(run), 1.0), timeout=10).ok
            time.sleep(1.5)
            job = subprocess.run(
                [fio, "--name=benchbay-agreement", f"--directory={workdir}", "--rw=randrw", "--bs=4k",
                 "--direct=1", "--size=64m", "--time_based", "--runtime=8", "--ioengine=psync",
                 "--output-format=json"], capture_output=True, timeout=60)
            assert job.returncode == 0, job.stderr.decode()[-500:]
            reports = iostat.reports(timeout=IOSTAT_REPORTS + 10)
            time.sleep(1.2)   # one more tick of ours after iostat's last
            (run / "stop").touch()
            raw = (run / "samples.raw").read_bytes()
        finally:
            (run / "stop").touch()
            time.sleep(0.1)
            local.remove_dir(str(run))

    parser = RawTickParser()
    snapshots = parser.feed(raw)
    assert parser.bad_ticks == 0 and parser.header is not None
    names = {parser.header.dm_names.get(d, d): d for d in parser.header.disks}
    computer = TelemetryComputer()
    ours = [(snap.uptime, s) for snap in snapshots if (s := computer.add(snap)) is not None]

    # pair each iostat report with our interval that ends nearest to it
    pairs = []
    for arrival, report in reports:
        end, sample = min(ours, key=lambda item: abs(item[0] - arrival))
        # within a quarter second: how close the two clocks' reports land depends on the machine's load
        if abs(end - arrival) < 0.25:
            pairs.append((end - arrival, sample, report))
    assert len(pairs) >= IOSTAT_REPORTS - 1, f"only {len(pairs)} of {len(reports)} intervals paired"

    theirs_devices = {d["disk_device"] for _, _, r in pairs for d in r["disk"]}
    ours_devices = {names.get(d, d) for _, s, _ in pairs for d in s.disks}
    assert ours_devices == theirs_devices    # the same devices as iostat shows by default
    assert device in ours_devices

    def column(key: str) -> list[tuple[float, float, float]]:
        rows = []
        for _, sample, report in pairs:
            mine = next(v for k, v in sample.disks.items() if names.get(k, k) == device)
            theirs = next(d for d in report["disk"] if d["disk_device"] == device)
            rows.append((mine[key], float(theirs[key]), sample.interval))
        return rows

    loaded = [i for i, (m, t, _) in enumerate(column("r/s")) if t + column("w/s")[i][1] > LOADED]
    # steady: loaded, and so were both neighbours (fio's start and end fall inside other intervals)
    steady = [i for i in loaded if i - 1 in loaded and i + 1 in loaded]
    assert len(steady) >= 4, f"fio put too little load on {device}: {[round(t) for _, t, _ in column('r/s')]}"
    skew = [abs(p[0]) for p in pairs]
    # Per interval, the two read the counters at slightly different instants: a few ms apart as paired,
    # more when one of them is preempted between reading the uptime and the disk counters on a busy
    # machine. So: totals over the window must agree, and per interval most (and the median) must.
    offsets = [skew[i] + (skew[i - 1] if i else skew[i]) for i in range(len(pairs))]
    lines = [f"agreement with iostat -x on {device}: {len(pairs)} one-second intervals, {len(steady)} under "
             f"steady load; sampling instants {statistics.mean(skew) * 1000:.0f} ms apart on average "
             f"(max {max(skew) * 1000:.0f} ms)"]
    for key in IO_KEYS + ("util",):
        rows = column(key)
        if key == "util":   # percentage points
            diffs = [abs(rows[i][0] - rows[i][1]) / 100 for i in steady]
            unit = "pp"
        else:
            diffs = [_rel(rows[i][0], rows[i][1]) for i in steady]
            unit = "%"
            total_ours = sum(m * dt for m, _, dt in rows)
            total_theirs = sum(t for _, t, _ in rows) * 1.0   # iostat's intervals: alarm(1), about 1.00 s
            off = _rel(total_ours, total_theirs)
            lines.append(f"  {key:6s} total over the window {total_ours:10.0f} vs {total_theirs:10.0f} ({off:.2%})")
            assert off < 0.03, lines
        within = [d < 0.03 + 2 * offsets[i] for i, d in zip(steady, diffs, strict=True)]
        lines.append(f"  {key:6s} per interval: median {statistics.median(diffs) * 100:.2f} {unit}, worst "
                     f"{max(diffs) * 100:.2f} {unit}, {sum(within)} of {len(within)} within 3 {unit}")
        # the median too is allowed what the sampling instants' distance explains (a few ms on a quiet
        # machine: 3 % and a little; tens of ms when the machine is busy), as each interval is
        allowed = statistics.median(0.03 + 2 * offsets[i] for i in steady)
        assert statistics.median(diffs) < allowed, lines + [f"median allowed {allowed:.2%}"]
        assert sum(within) >= 0.75 * len(within), lines + [f"{p[0]:+.3f} {r}" for p, r in zip(pairs, rows, strict=True)]
    cpu_diff = {key: statistics.mean(abs(s.cpu[key] - r["avg-cpu"][key]) for _, s, r in pairs)
                for key in ("user", "system", "iowait", "idle")}
    lines.append("  cpu    mean difference " + ", ".join(f"{k} {v:.2f}" for k, v in cpu_diff.items())
                 + " percentage points")
    assert max(cpu_diff.values()) < 3.0, lines
    with capsys.disabled():
        print("\n" + "\n".join(lines))
