"""One workbench, a rack of real sshd test hosts: `benchbay run @rack` finishes a short run on all of them
together, and a host that never answers fails on its own without holding the others up."""
from __future__ import annotations

import os
import pwd
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

HOSTS = 20
FIRST_ADDRESS = 160          # 127.0.0.160 ...: apart from the other test hosts
SETUP_WORKERS = 6
WARMUP_S, MEASURE_S = 1.0, 4.0
CONNECT_TIMEOUT = 6.0        # the silent host fails after this (stretched while 21 runs start)


@pytest.fixture
def rack(sshd_session, tmp_path: Path) -> Iterator[list[SshdServer]]:
    """HOSTS running sshd test hosts, each with its own TMPDIR (run directories apart)."""
    hosts = [(f"r{i:02d}", f"127.0.0.{FIRST_ADDRESS + i}") for i in range(HOSTS)]
    with sshd_group(tmp_path / "rack", hosts, sshd_session.authorized, SETUP_WORKERS) as servers:
        yield servers


def test_a_rack_runs_together_and_a_silent_host_fails_alone(cli_env, sshd_session, rack, capsys) -> None:
    home = cli_env["home"]
    write_settings(home, connect_timeout=CONNECT_TIMEOUT)
    known = KnownHosts(home / "known_hosts", cli_env["user_known_hosts"])
    user = pwd.getpwuid(os.getuid()).pw_name
    for server in rack:
        assert main(["host", "add", server.name, "--address", server.address, "--port", str(server.port),
                     "--user", user, "--key", str(sshd_session.client_key), "--tag", "rack7"]) == 0
        known.add(host_key_id(server.address, server.port), public_key(server.host_key_path))
    silent = Tarpit(f"127.0.0.{FIRST_ADDRESS + HOSTS}")
    try:
        assert main(["host", "add", "silent", "--address", silent.address, "--port", str(silent.port),
                     "--user", user, "--key", str(sshd_session.client_key), "--tag", "RACK7"]) == 0
        assert main(["host", "add", "elsewhere", "--address", "127.0.0.1", "--tag", "rack8"]) == 0
        capsys.readouterr()

        began = time.monotonic()
        phases = f'[["warmup", "Warm-up", {WARMUP_S}], ["measure", "Measure", {MEASURE_S}]]'
        code = main(["run", "@rack7", "--test", "idle", "--set", f"phases={phases}"])
        wall = time.monotonic() - began
        out, err = capsys.readouterr()
    finally:
        silent.close()

    assert code == 1, err[-3000:]   # one host failed
    lines = out.splitlines()
    # the last lines: one count, and the one host that needs a look, with its reason
    assert lines[-2] == f"{HOSTS + 1} hosts: {HOSTS} done, 1 failed", "\n".join(lines[-5:])
    assert lines[-1].startswith("  silent  failed (not stored): ") and "no SSH banner" in lines[-1], lines[-1]
    assert "elsewhere" not in out            # another rack: not run

    bench = Workbench(home=home, db_url=f"sqlite:///{cli_env['db']}")
    try:
        runs = {run.host_name: run for run in bench.list_runs(test="idle")}
    finally:
        bench.close()
    assert sorted(runs) == sorted(server.name for server in rack)
    assert {run.status for run in runs.values()} == {"done"}, {r.host_name: r.error for r in runs.values()}
    starts = sorted(run.started_at for run in runs.values())
    spread = (starts[-1] - starts[0]).total_seconds()
    longest = max((run.finished_at - run.started_at).total_seconds() for run in runs.values())
    # started spread out, but together; no run waited for the silent host
    assert spread < 20.0, spread
    assert longest < WARMUP_S + MEASURE_S + 25.0, longest
    assert wall < 90.0, wall
    print(lines[-1])
    print(f"{HOSTS} hosts + 1 silent: wall {wall:.1f} s, starts spread {spread:.1f} s, longest run {longest:.1f} s")
