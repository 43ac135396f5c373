"""A real hot-plug while the sampler and the real iostat both watch: a zram disk is made mid-run, written,
and removed. Both must show it from the interval it appeared in, count every write it took, and drop it
once it is gone. Needs root and the zram module (/sys/class/zram-control); skipped without them."""
from __future__ import annotations

import contextlib
import json
import mmap
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from remote.local_transport import LocalTransport
from remote.telemetry import RawTickParser, TelemetryComputer, sampler_script
from remote.telemetry.sampler import start_command

pytestmark = pytest.mark.integration

ZRAM_CONTROL = Path("/sys/class/zram-control")
WRITES = 16                  # 64 KiB each, O_DIRECT: one request each
REPORTS = 7


@contextlib.contextmanager
def hot_added_zram() -> Iterator[str]:
    """A new zram disk for the duration; always removed afterwards."""
    try:
        number = (ZRAM_CONTROL / "hot_add").read_text().strip()
    except OSError as exc:
        pytest.skip(f"cannot add a zram device here: {exc}")
    name = f"zram{number}"
    try:
        yield name
    finally:
        with contextlib.suppress(OSError):
            Path(f"/sys/block/{name}/reset").write_text("1\n")
        with contextlib.suppress(OSError):
            (ZRAM_CONTROL / "hot_remove").write_text(f"{number}\n")


def write_to(name: str) -> None:
    Path(f"/sys/block/{name}/disksize").write_text("16M\n")
    fd = os.open(f"/dev/{name}", os.O_WRONLY | os.O_DIRECT)
    try:
        block = mmap.mmap(-1, 65536)         # page-aligned, as O_DIRECT wants
        block.write(os.urandom(65536))
        for i in range(WRITES):
            os.pwrite(fd, block, i * 65536)
    finally:
        os.close(fd)


def test_a_disk_made_and_removed_mid_run_as_iostat_sees_it(capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() != 0 or not (ZRAM_CONTROL / "hot_add").exists():
        pytest.skip("needs root and the zram module to make a disk mid-run")
    iostat = shutil.which("iostat")
    if iostat is None:
        if os.environ.get("CI"):
            pytest.fail("iostat is not installed (apt install sysstat)", pytrace=False)
        pytest.skip("iostat is not installed (apt install sysstat)")
    with LocalTransport() as local:
        run = Path(local.make_private_dir())
        (run / "sampler.sh").write_bytes(sampler_script())
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        (run / "deadline").write_text(f"{uptime + 120:.0f}\n")
        proc = None
        try:
            proc = subprocess.Popen([iostat, "-x", "-y", "-d", "-o", "JSON", "1", str(REPORTS)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env={**os.environ, "LC_ALL": "C"})
            assert local.run(start_command(str(run), 1.0), timeout=10).ok
            time.sleep(2.5)
            with hot_added_zram() as name:
                if not Path(f"/dev/{name}").exists():
                    pytest.skip(f"/dev/{name} was not made (no devtmpfs here)")
                write_to(name)
                time.sleep(2.0)
            out, err = proc.communicate(timeout=REPORTS + 15)
            assert proc.returncode == 0, err.decode()
            time.sleep(1.2)
            raw = (run / "samples.raw").read_bytes()
        finally:
            (run / "stop").touch()
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
            time.sleep(0.1)
            local.remove_dir(str(run))

    reports = json.loads(out)["sysstat"]["hosts"][0]["statistics"]
    theirs = [{d["disk_device"]: d for d in r["disk"]} for r in reports]
    parser = RawTickParser()
    computer = TelemetryComputer()
    ours = [s for snap in parser.feed(raw) if (s := computer.add(snap)) is not None]
    assert parser.bad_ticks == 0 and name not in parser.header.disks   # it came after the start

    def shown(samples: list[dict]) -> list[bool]:
        return [name in s for s in samples]

    ours_shown = shown([s.disks for s in ours])
    theirs_shown = shown(theirs)
    # both: absent, then present for a stretch, then absent again (after it was removed)
    for flags in (ours_shown, theirs_shown):
        first, last = flags.index(True), len(flags) - 1 - flags[::-1].index(True)
        assert not flags[0] and all(flags[first:last + 1]) and not flags[-1], flags
    # every write it took is counted once, from the interval it appeared in (iostat's interval is about 1 s)
    ours_writes = sum(s.disks[name]["w/s"] * s.interval for s in ours if name in s.disks)
    theirs_writes = sum(r[name]["w/s"] * 1.0 for r in theirs if name in r)
    assert ours_writes == pytest.approx(WRITES, abs=1e-6)
    assert theirs_writes == pytest.approx(WRITES, rel=0.05)
    with capsys.disabled():
        print(f"\nhot-plugged {name}, shown per interval: ours {''.join('x' if f else '.' for f in ours_shown)}, "
              f"iostat {''.join('x' if f else '.' for f in theirs_shown)}; writes counted: ours "
              f"{ours_writes:.2f}, iostat {theirs_writes:.2f} of {WRITES}")
