"""Accounts as servers have them: fish, tcsh, zsh, dash login shells, start-up files that print,
users with and without sudo, an account without a login shell. Each one: facts, a short run,
a monitor and a cancel through the same code the window and `benchbay` use, and nothing left."""
from __future__ import annotations

import json
import threading
import time

import pytest

from app.cli import main
from app.engine.orchestrator import RunControl, RunRequest, execute_run
from remote.connect import connect
from tests.fixtures.login_users import NO_SHELL, WORKING, leftovers
from tests.fixtures.sshd import SshTestHost, known_hosts_for, ssh_keygen_fingerprint

pytestmark = pytest.mark.integration


def _add_cli(host: SshTestHost) -> str:
    assert main(["host", "add", host.name, "--address", host.address, "--port", str(host.port),
                 "--user", host.user, "--key", str(host.client_key_path)]) == 0
    assert main(["host", "trust", host.name, "--fingerprint", ssh_keygen_fingerprint(host.host_key_path)]) == 0
    return host.name


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


def _nothing_left(user: str) -> None:
    dirs, pids = leftovers(user)
    assert dirs == [], f"run directories of {user} left in /tmp"
    assert pids == [], f"processes of {user} still running"


@pytest.mark.parametrize("user", WORKING)
def test_facts_and_monitor_from_the_command_line(cli_env, login_users, user, capsys) -> None:
    name = _add_cli(login_users.host(user))
    capsys.readouterr()
    assert main(["host", "facts", name, "--json"]) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    facts = json.loads(out)              # start-up output never reaches the parser
    assert facts["memory"]["total_bytes"] > 0 and facts["cpu"]["threads"] > 0
    assert "Welcome" not in err
    assert main(["monitor", name, "--seconds", "2", "--interval", "0.5"]) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert "%util" in out and "Welcome" not in out + err
    _nothing_left(user)


@pytest.mark.parametrize("user", WORKING)
def test_idle_run_monitor_and_cancel(workbench, login_users, user) -> None:
    name = _add(workbench, login_users.host(user))

    request = RunRequest(name, "idle", {"phases": [["measure", "Measure", 1.0]]}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    [result] = workbench.store.runs.get(outcome.run_id).results
    assert (result.test, result.metric) == ("idle", "elapsed") and result.value >= 1.0

    samples = []
    monitor = RunRequest(name, "monitor", interval=0.5, duration=2.0)
    outcome = execute_run(workbench, monitor, RunControl(), lambda host, sample: samples.append(sample))
    assert (outcome.status, outcome.error) == ("done", "")
    assert outcome.samples >= 2 and samples[-1].cpu

    control = RunControl()

    def on_event(host, event) -> None:
        if event["type"] == "phase_start":
            threading.Timer(0.5, control.cancel).start()

    started = time.monotonic()
    request = RunRequest(name, "idle", {"phases": [["wait", "Wait", 60.0]]}, interval=0.5)
    outcome = execute_run(workbench, request, control, None, on_event)
    assert outcome.status == "cancelled" and time.monotonic() - started < 30
    agent = [e for e in workbench.store.runs.events(outcome.run_id) if e["seq"] is not None]
    assert agent[-1]["type"] == "done" and agent[-1]["status"] == "cancelled"   # stopped cleanly
    _nothing_left(user)


@pytest.mark.parametrize("user", NO_SHELL)
def test_account_without_login_shell_is_one_true_line(cli_env, login_users, user, capsys) -> None:
    name = _add_cli(login_users.host(user))
    capsys.readouterr()
    started = time.monotonic()
    assert main(["host", "facts", name]) == 1
    err = capsys.readouterr().err.strip()
    assert time.monotonic() - started < 30
    assert len(err.splitlines()) == 1
    assert f"the account {login_users.host(user).user} has no login shell" in err and "python3" not in err
    if user == "bbt-nologin":
        assert "currently not available" in err      # what nologin itself said
    assert main(["monitor", name, "--seconds", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"the account {login_users.host(user).user} has no login shell" in err and "mktemp" not in err
    _nothing_left(user)


@pytest.mark.parametrize("user", ["bbt-fish", "bbt-tcsh", "bbt-chatty", "bbt-dash"])
def test_commands_and_files_whatever_the_shell_prints(login_users, user, tmp_path) -> None:
    host = login_users.host(user)
    weird = "it's \"quoted\" \\ $HOME `x` !bang %s\nsecond line"
    with connect(host.spec(), known_hosts=known_hosts_for(tmp_path, host), timeout=10) as transport:
        # POSIX sh code with quotes, backslashes, `!`, `%` and newlines, read by /bin/sh whatever the shell
        result = transport.run(["printf", "%s|", weird, "BENCHBAY-BEGIN-lookalike"], timeout=20)
        expected = f"{weird}|BENCHBAY-BEGIN-lookalike|".encode()
        assert (result.exit_status, result.stdout, result.stderr) == (0, expected, b"")
        result = transport.run("echo out; echo err >&2; exit 7", timeout=20)
        assert (result.exit_status, result.stdout, result.stderr) == (7, b"out\n", b"err\n")
        assert transport.run("cat", timeout=20, stdin=b"\x00\xff data").stdout == b"\x00\xff data"

        # files: over SFTP, or over command channels where start-up output breaks the external sftp-server
        run_dir = transport.make_private_dir()
        try:
            data = bytes(range(256)) * 1000
            transport.put_bytes(data, f"{run_dir}/blob", mode=0o700)
            stat = transport.run(["stat", "-c", "%a %s", f"{run_dir}/blob"], timeout=20).text().split()
            assert stat == ["700", str(len(data))]
            assert transport.get_bytes(f"{run_dir}/blob") == data
            assert transport.get_bytes(f"{run_dir}/blob", 1000, 300) == data[1000:1300]
            with pytest.raises(FileNotFoundError):
                transport.get_bytes(f"{run_dir}/not-there")
            with pytest.raises(FileNotFoundError):
                transport.put_bytes(b"x", f"{run_dir}/no-dir/file")
        finally:
            transport.remove_dir(run_dir)
    _nothing_left(user)
