"""The shared-storage test on three real client hosts against one directory served over sshfs (FUSE):
a synchronized sweep, totals that are the sum of the clients, each client in its own files, all removed."""
from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from app.workbench import Workbench
from remote.hostkeys import KnownHosts, host_key_id
from tests.fixtures.sshd import SshdServer, public_key, sshd_group
from tests.fixtures.store import write_settings
from tests.fixtures.tarpit import Tarpit

pytestmark = pytest.mark.integration

CLIENTS = 3
FIRST_ADDRESS = 190          # 127.0.0.190 ...: apart from the other test hosts
STORAGE_ADDRESS = "127.0.0.194"


def _mounted(path: Path) -> bool:
    target = str(path).replace(" ", "\\040")
    return any(line.split()[1] == target for line in Path("/proc/self/mounts").read_text().splitlines())


@pytest.fixture
def clients(sshd_session, tmp_path: Path) -> Iterator[list[SshdServer]]:
    hosts = [(f"client{i}", f"127.0.0.{FIRST_ADDRESS + i}") for i in range(CLIENTS)]
    with sshd_group(tmp_path / "clients", hosts, sshd_session.authorized, CLIENTS) as servers:
        yield servers


@pytest.fixture
def shared_dir(sshd_session, tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(the sshfs mount point every client uses, the directory the storage host exports)."""
    sshfs, fusermount = shutil.which("sshfs"), shutil.which("fusermount3") or shutil.which("fusermount")
    if not sshfs or not fusermount or not Path("/dev/fuse").exists():
        pytest.skip("sshfs and /dev/fuse are needed (apt-get install sshfs; run-tests.sh does it)")
    root = tmp_path / "storage"
    root.mkdir()
    server = SshdServer(root, "storage", STORAGE_ADDRESS, sshd_session.authorized)
    server.start()
    exported = tmp_path / "exported"
    exported.mkdir()
    mountpoint = tmp_path / "shared"
    mountpoint.mkdir()
    options = ",".join([f"IdentityFile={sshd_session.client_key}", f"Port={server.port}", "BatchMode=yes",
                        "StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "IdentitiesOnly=yes"])
    user = pwd.getpwuid(os.getuid()).pw_name
    try:
        done = subprocess.run([sshfs, "-o", options, f"{user}@{server.address}:{exported}", str(mountpoint)],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            pytest.skip(f"sshfs cannot mount here: {done.stderr.strip()}")
        try:
            yield mountpoint, exported
        finally:
            subprocess.run([fusermount, "-u", "-z", str(mountpoint)], capture_output=True, timeout=30)
            deadline = time.monotonic() + 10
            while _mounted(mountpoint) and time.monotonic() < deadline:
                time.sleep(0.1)
    finally:
        server.stop()


class _Watcher(threading.Thread):
    """Lists the exported directory while the sweep runs: what each client made, as the server sees it."""

    def __init__(self, exported: Path) -> None:
        super().__init__(daemon=True)
        self.exported = exported
        self.seen: dict[str, set[str]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.2):
            with contextlib.suppress(OSError):
                for entry in os.scandir(self.exported):
                    with contextlib.suppress(OSError):
                        self.seen.setdefault(entry.name, set()).update(os.listdir(entry.path))


def _add_hosts(cli_env, sshd_session, clients: list[SshdServer]) -> None:
    known = KnownHosts(cli_env["home"] / "known_hosts", cli_env["user_known_hosts"])
    user = pwd.getpwuid(os.getuid()).pw_name
    for server in clients:
        assert main(["host", "add", server.name, "--address", server.address, "--port", str(server.port),
                     "--user", user, "--key", str(sshd_session.client_key)]) == 0
        known.add(host_key_id(server.address, server.port), public_key(server.host_key_path))


def test_three_clients_share_one_sshfs_directory(cli_env, sshd_session, clients, shared_dir, capsys) -> None:
    mountpoint, exported = shared_dir
    _add_hosts(cli_env, sshd_session, clients)
    capsys.readouterr()
    watcher = _Watcher(exported)
    watcher.start()
    try:
        code = main(["run", *[s.name for s in clients], "--test", "shared-storage", "--dir", str(mountpoint),
                     "--clients", "1,3", "--threads", "1,2", "--set", "runtime=2", "--set", "gap=0.5",
                     "--set", "bs=1", "--set", "file_size=4096", "--json"])
    finally:
        watcher.stop.set()
        watcher.join()
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    report = json.loads(out)
    # one progress line for the sweep, not one per client
    progress = [line for line in err.splitlines() if " in all" in line]
    assert progress and all(line.startswith(f"{CLIENTS} clients:   ") for line in progress), err[-3000:]
    assert report["seconds"] == 4 * 2 + 3 * 0.5 and report["started_at"] > 0

    # one step per (clients, threads), in the order asked
    assert [(s["clients"], s["threads"]) for s in report["steps"]] == [(1, 1), (1, 2), (3, 1), (3, 2)]
    for step in report["steps"]:
        per_client = list(step["per_client_ops"].values())
        assert len(per_client) == step["clients"]
        # the total of each second is the sum of the clients' same second
        assert step["total_ops"] == [sum(v[i] for v in per_client if i < len(v)) for i in range(len(step["total_ops"]))]
        assert len(step["total_ops"]) == 2 and sum(step["total_ops"]) > 0
        assert step["start_spread_s"] is not None
        assert 0.0 <= step["start_spread_s"] < 0.5, step   # started together
        assert step["start_spread_uncertainty_s"] < 0.5
    assert report["knee"] in {s["step"] for s in report["steps"]} or report["knee_text"].startswith(
        "no knee within the sweep")
    for host, clock in report["offsets"].items():
        assert abs(clock["offset_s"]) <= clock["uncertainty_s"] + 0.01, (host, clock)   # one machine, one clock

    # each client worked in a directory of its own, on files of its own; nothing is left
    names = sorted(watcher.seen)
    assert len(names) == CLIENTS, names
    for index, server in enumerate(clients):
        mine = [n for n in names if n.endswith(f"-c{index + 1}-{server.name}")]
        assert len(mine) == 1, (server.name, names)
        assert watcher.seen[mine[0]] and all(f.startswith("t") and f.endswith(".dat") for f in watcher.seen[mine[0]])
    assert os.listdir(exported) == []
    assert os.listdir(mountpoint) == []

    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        total = bench.find_run(report["total_run_id"])
        assert total is not None and total.run.status == "done", total.run.error if total else None
        figures = {r.metric: r for r in total.results}
        assert figures["c3t2.ops"].value == pytest.approx(sum(report["steps"][-1]["total_ops"]) / 2, rel=1e-3)
        assert ("rate.c3t2.ops", "") in total.series_names
        assert {("rate.c3t2.ops", s.name) for s in clients} <= set(total.series_names)
        member = bench.find_run(report["runs"][0]["run_id"])
        meta = next(r.metadata for r in member.results if r.metric == "c1t1.ops")
        # O_DIRECT kept, or its refusal said and stored beside the figure
        assert meta["direct"] or "O_DIRECT refused" in meta["direct_note"], meta
        print(f"O_DIRECT: {meta['direct']} {meta['direct_note']}")
    finally:
        bench.close()
    for step in report["steps"]:
        print(f"{step['step']}: total {step['ops']:.0f} op/s, spread {step['start_spread_s'] * 1e3:.1f} ms "
              f"± {step['start_spread_uncertainty_s'] * 1e3:.1f} ms")
    print(report["knee_text"])


def test_a_client_that_cannot_be_reached_stops_the_sweep_before_anything_is_written(
        cli_env, sshd_session, clients, shared_dir, capsys) -> None:
    mountpoint, exported = shared_dir
    _add_hosts(cli_env, sshd_session, clients[:2])
    write_settings(cli_env["home"], connect_timeout=3.0)
    silent = Tarpit(f"127.0.0.{FIRST_ADDRESS + CLIENTS + 2}")
    try:
        user = pwd.getpwuid(os.getuid()).pw_name
        assert main(["host", "add", "silent", "--address", silent.address, "--port", str(silent.port),
                     "--user", user, "--key", str(sshd_session.client_key)]) == 0
        capsys.readouterr()
        began = time.monotonic()
        code = main(["run", clients[0].name, "silent", clients[1].name, "--test", "shared-storage", "--dir",
                     str(mountpoint), "--threads", "1", "--set", "runtime=2"])
        took = time.monotonic() - began
    finally:
        silent.close()
    out, err = capsys.readouterr()
    assert code == 1, out + err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("benchbay: silent: ") and "no SSH banner" in lines[-1], lines[-1]
    assert took < 30, took
    assert os.listdir(exported) == []
    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        assert bench.list_runs() == []   # nothing started, nothing stored
    finally:
        bench.close()
