"""`benchbay run` on more hosts than the per-host lines suit: overall lines every few seconds, one line per
host that finishes or fails, against a real sshd test host (ten inventory names for it) and a closed port."""
from __future__ import annotations

import os
import pwd
import re
import socket

import pytest

from app.cli import main
from app.cli.run_fleet_progress import FLEET_THRESHOLD
from remote.hostkeys import KnownHosts

pytestmark = pytest.mark.integration

NAMES = [f"f{i:02d}" for i in range(FLEET_THRESHOLD + 2)]
OVERALL = re.compile(r"^(\d+) hosts: (\d+) % in all, (.*)$")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_fleet_reads_as_overall_lines_and_one_line_per_host(cli_env, ssh_host, capsys) -> None:
    user = pwd.getpwuid(os.getuid()).pw_name
    for name in NAMES:
        assert main(["host", "add", name, "--address", ssh_host.address, "--port", str(ssh_host.port),
                     "--user", user, "--key", str(ssh_host.client_key_path), "--tag", "fleet"]) == 0
    KnownHosts(cli_env["home"] / "known_hosts", cli_env["user_known_hosts"]).add(ssh_host.host_id,
                                                                                  ssh_host.host_key())
    assert main(["host", "add", "gone", "--address", "127.0.0.1", "--port", str(_closed_port()), "--user", user,
                 "--key", str(ssh_host.client_key_path), "--tag", "fleet"]) == 0
    capsys.readouterr()
    code = main(["run", "@fleet", "--test", "idle", "--set", 'phases=[["measure", "Measure", 7]]'])
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert code == 1, err
    count = len(NAMES) + 1
    overall = [line for line in lines if OVERALL.match(line)]
    assert overall and overall[-1] == f"{count} hosts: 100 % in all, 0 running · {len(NAMES)} done · 1 failed", err
    shown = [int(OVERALL.match(line)[2]) for line in overall]
    assert shown == sorted(shown), err
    for name in NAMES:
        assert len([line for line in lines if re.match(rf"{name}: done in 0:\d\d \(\d+ of {count} ended\)$", line)]) \
            == 1, err
    [failed] = [line for line in lines if line.startswith("gone: ")]
    assert failed.startswith("gone: failed after ") and "refused" in failed and failed.endswith(f"of {count} ended)"), \
        failed
    # no line per host per second: the overall lines, the ends, and little else
    assert not [line for line in lines if re.match(r"f\d\d: .* in all", line)], err
    assert len(lines) <= len(overall) + count + 5, err
