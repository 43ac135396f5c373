"""A real FUSE network filesystem (sshfs from an sshd test host) seen by the real sampler: named as
such in the figures and in `benchbay monitor`'s text, with no NFS or block-device figures invented."""
from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.monitor import _TextPrinter
from remote.telemetry import RawTickParser, TelemetryComputer, sampler_script
from tests.fixtures.sshd import SshTestHost

pytestmark = pytest.mark.integration


def _mounted(path: Path) -> bool:
    target = str(path).replace(" ", "\\040")
    return any(line.split()[1] == target for line in Path("/proc/self/mounts").read_text().splitlines())


@pytest.fixture
def sshfs_mount(ssh_host: SshTestHost, tmp_path: Path) -> Iterator[Path]:
    sshfs, fusermount = shutil.which("sshfs"), shutil.which("fusermount3") or shutil.which("fusermount")
    if not sshfs or not fusermount or not Path("/dev/fuse").exists():
        pytest.skip("sshfs and /dev/fuse are needed (apt-get install sshfs; run-tests.sh does it)")
    exported = tmp_path / "exported"
    exported.mkdir()
    (exported / "file").write_text("over ssh\n")
    mountpoint = tmp_path / "share"
    mountpoint.mkdir()
    options = ",".join([f"IdentityFile={ssh_host.client_key_path}", f"Port={ssh_host.port}", "BatchMode=yes",
                        "StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "IdentitiesOnly=yes"])
    done = subprocess.run([sshfs, "-o", options, f"{ssh_host.user}@{ssh_host.address}:{exported}", str(mountpoint)],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"sshfs cannot mount here: {done.stderr.strip()}")
    try:
        assert (mountpoint / "file").read_text() == "over ssh\n"   # really served over ssh
        yield mountpoint
    finally:
        subprocess.run([fusermount, "-u", "-z", str(mountpoint)], capture_output=True, timeout=30)
        deadline = time.monotonic() + 10
        while _mounted(mountpoint) and time.monotonic() < deadline:
            time.sleep(0.1)


@pytest.mark.parametrize("mode", ["auto", "posix"])   # bash, and plain sh with cat
def test_an_sshfs_mount_is_labelled_a_fuse_network_filesystem(sshfs_mount: Path, tmp_path: Path, capsys,
                                                              mode: str) -> None:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    (run / "sampler.sh").write_bytes(sampler_script())
    proc = subprocess.Popen(["sh", str(run / "sampler.sh"), str(run), "0.5", mode], stdout=subprocess.PIPE)
    try:
        time.sleep(1.8)
        (run / "stop").touch()
        raw, _ = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    parser, computer = RawTickParser(), TelemetryComputer()
    samples = [s for snap in parser.feed(raw) if (s := computer.add(snap)) is not None]
    assert samples and parser.bad_ticks == 0
    mount = str(sshfs_mount)
    for sample in samples:
        assert sample.netfs.get(mount) == "fuse.sshfs"
        assert mount not in sample.nfs and mount not in sample.disks   # no figures, not zeros
    printer = _TextPrinter([], 0.5)
    for sample in samples:
        printer.sample("local", sample)
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith(f"# {mount}:")]
    assert len(notes) == 1 and "fuse.sshfs, a FUSE network filesystem" in notes[0]
