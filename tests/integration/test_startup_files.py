"""Start-up files that are slow (0.1 s, as `pyenv init` in ~/.bashrc) or that print: a run pays them once.

Each account's .bashrc appends what its shell was started for to a file in its home (`exec`: a Benchbay
command shell; the sftp-server's path: sshd starting the external SFTP server through the login shell),
so the tests count the start-ups a whole `benchbay run` cost, and check its results."""
from __future__ import annotations

import json

import pytest

from app.cli import main
from remote.connect import connect
from tests.fixtures.login_users import STARTUPS, account, leftovers, startups
from tests.fixtures.sshd import SshTestHost, known_hosts_for, ssh_keygen_fingerprint

pytestmark = pytest.mark.integration

SECONDS = 3.0


def _add_cli(host: SshTestHost) -> str:
    assert main(["host", "add", host.name, "--address", host.address, "--port", str(host.port),
                 "--user", host.user, "--key", str(host.client_key_path)]) == 0
    assert main(["host", "trust", host.name, "--fingerprint", ssh_keygen_fingerprint(host.host_key_path)]) == 0
    return host.name


@pytest.mark.parametrize("user", ["bbt-slow", "bbt-chatty"])
def test_a_run_starts_the_login_shell_once(cli_env, login_users, user, capsys) -> None:
    name = _add_cli(login_users.host(user))
    startups(login_users, user)
    capsys.readouterr()
    phases = [["warmup", "Warm-up", 0.5], ["measure", "Measure", SECONDS]]
    code = main(["run", name, "--test", "idle", "--set", "phases=" + json.dumps(phases), "--interval", "0.5",
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    [row] = json.loads(out)["runs"]
    assert (row["host"], row["status"], row["error"] or "") == (name, "done", "")

    started = startups(login_users, user)
    # a run sends dozens of commands (look around, start, keep-alives, liveness, stop, clean-up): one shell
    # ran them all. sshd starts the external sftp-server through the login shell too (at most once: for
    # bbt-chatty it prints into SFTP, so the files go over the command shell instead)
    assert started.count("exec") == 1, f"{STARTUPS}: {started}"
    assert set(started) <= {"exec", "/usr/lib/openssh/sftp-server"} and len(started) <= 2, started

    # the stored run is what a run with quick start-up files stores
    assert main(["runs", "show", str(row["run_id"]), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    [result] = [r for r in shown["results"] if r["metric"] == "elapsed"]
    assert SECONDS <= result["value"] < SECONDS + 30
    assert shown["run"]["status"] == "done" and shown["series"]      # telemetry stored too
    assert "Welcome" not in json.dumps(shown)
    dirs, pids = leftovers(user)
    assert (dirs, pids) == ([], [])


def test_commands_on_one_connection_share_one_start_up(login_users, tmp_path) -> None:
    """Output, errors, exit codes and stdin of many commands stay apart, and the start-up file ran once."""
    host = login_users.host("bbt-slow")
    startups(login_users, "bbt-slow")
    with connect(host.spec(), known_hosts=known_hosts_for(tmp_path, host), timeout=10) as transport:
        for i in range(20):
            result = transport.run(f"echo out{i}; echo err{i} >&2; exit {i % 4}", timeout=20)
            assert (result.exit_status, result.stdout, result.stderr) == (i % 4, f"out{i}\n".encode(),
                                                                         f"err{i}\n".encode())
        # what one command does to its shell stays in it: a syntax error, cd, a variable, exit
        assert transport.run("if then fi", timeout=20).exit_status != 0
        assert transport.run("cd /; x=1; exit 0", timeout=20).ok
        home = login_users.homes / account("bbt-slow")
        assert transport.run('pwd; echo "[$x]"', timeout=20).text() == f"{home}\n[]\n"
        assert transport.run("cat", timeout=20, stdin=b"\x00\xff no newline").stdout == b"\x00\xff no newline"
        assert transport.run("cat; echo after", timeout=20).stdout == b"after\n"   # no stdin: EOF at once
        assert transport.run(["printf", "%s", "no newline"], timeout=20).stdout == b"no newline"
    assert startups(login_users, "bbt-slow") == ["exec"]
