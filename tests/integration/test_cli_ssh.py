"""`benchbay host ...` against real sshd test hosts, as an admin would type it."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from tests.fixtures.sshd import ssh_keygen_fingerprint
from tests.fixtures.store import write_settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _proc_facts() -> tuple[set[str], int]:
    cpuinfo = Path("/proc/cpuinfo").read_text()
    models = {line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")}
    meminfo = Path("/proc/meminfo").read_text()
    total_kb = next(int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal:"))
    return models, total_kb * 1024


def _add(host, name: str | None = None) -> str:
    name = name or host.name
    assert main(["host", "add", name, "--address", host.address, "--port", str(host.port), "--user", host.user,
                 "--key", str(host.client_key_path)]) == 0
    return name


def _run_dirs(host) -> set[str]:
    """Run directories in the test host's own TMPDIR (other test runs on this machine have theirs)."""
    return set(glob.glob(os.path.join(host.tmpdir, "benchbay-*")))


def test_first_contact_trust_then_facts_match_proc(cli_env, ssh_host, capsys) -> None:
    name = _add(ssh_host)
    capsys.readouterr()
    expected_fp = ssh_keygen_fingerprint(ssh_host.host_key_path)

    # unknown key: refused, with the fingerprint and what to do
    assert main(["host", "facts", name]) == 1
    err = capsys.readouterr().err
    assert expected_fp in err and "benchbay host trust" in err

    # trust without a fingerprint and without a terminal: shown, not trusted
    assert main(["host", "trust", name]) == 1
    out, err = capsys.readouterr()
    assert expected_fp in out and f"--fingerprint {expected_fp}" in err

    # a wrong fingerprint is refused
    assert main(["host", "trust", name, "--fingerprint", "SHA256:" + "A" * 43]) == 1
    assert "NOT trusted" in capsys.readouterr().err

    assert main(["host", "trust", name, "--fingerprint", expected_fp]) == 0
    assert expected_fp in capsys.readouterr().out

    before = _run_dirs(ssh_host)
    assert main(["host", "facts", name, "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    models, total_bytes = _proc_facts()
    if models:
        assert facts["cpu"]["model"] in models
    assert facts["memory"]["total_bytes"] == total_bytes
    assert facts["cpu"]["threads"] == os.cpu_count()
    assert facts["tools"]["fio"]["present"] in (True, False)
    # the agent's private run directory is gone from the host
    assert _run_dirs(ssh_host) - before == set()  # none left behind

    assert main(["runs", "list", "--host", name, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [(r["test"], r["status"]) for r in runs] == [("facts", "done")]


def test_changed_host_key_is_refused(cli_env, fresh_ssh_host, capsys) -> None:
    name = _add(fresh_ssh_host)
    assert main(["host", "trust", name, "--fingerprint", ssh_keygen_fingerprint(fresh_ssh_host.host_key_path)]) == 0
    known_hosts = cli_env["home"] / "known_hosts"
    trusted_before = known_hosts.read_text()
    fresh_ssh_host.restart(new_host_key=True)
    capsys.readouterr()

    assert main(["host", "facts", name]) == 1
    err = capsys.readouterr().err
    assert "HOST KEY CHANGED" in err and ssh_keygen_fingerprint(fresh_ssh_host.host_key_path) in err
    assert len(err.strip().splitlines()) == 1
    # trusting again is refused too, and the stored key is untouched
    assert main(["host", "trust", name, "--fingerprint",
                 ssh_keygen_fingerprint(fresh_ssh_host.host_key_path)]) == 1
    assert known_hosts.read_text() == trusted_before
    capsys.readouterr()
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []   # a refused connection leaves no run behind


def test_host_without_python3_says_what_to_install(cli_env, ssh_host_nopython, capsys) -> None:
    name = _add(ssh_host_nopython)
    main(["host", "trust", name, "--fingerprint", ssh_keygen_fingerprint(ssh_host_nopython.host_key_path)])
    capsys.readouterr()
    before = _run_dirs(ssh_host_nopython)
    assert main(["host", "facts", name]) == 1
    err = capsys.readouterr().err
    assert "python3" in err and "install" in err
    assert _run_dirs(ssh_host_nopython) - before == set()  # none left behind


def test_ssh_config_alias_works_like_ssh(cli_env, ssh_host, capsys) -> None:
    cli_env["ssh_config"].write_text(
        f"Host bench-alias\n    HostName {ssh_host.address}\n    Port {ssh_host.port}\n"
        f"    User {ssh_host.user}\n    IdentityFile {ssh_host.client_key_path}\n"
    )
    fp = ssh_keygen_fingerprint(ssh_host.host_key_path)
    assert main(["host", "trust", "bench-alias", "--fingerprint", fp]) == 0
    assert main(["host", "facts", "bench-alias", "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{"):])["memory"]["total_bytes"] == _proc_facts()[1]
    # added by its alias alone, it takes address, port, user and key from ~/.ssh/config
    assert main(["host", "add", "bench-alias"]) == 0
    assert main(["host", "facts", "bench-alias", "--json"]) == 0


def test_wrong_password_is_one_line(cli_env, ssh_host, capsys, monkeypatch) -> None:
    name = _add(ssh_host, "pw-host")
    assert main(["host", "edit", name, "--auth", "password"]) == 0
    main(["host", "trust", name, "--fingerprint", ssh_keygen_fingerprint(ssh_host.host_key_path)])
    capsys.readouterr()
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("certainly-not-the-password\n"))
    assert main(["host", "facts", name, "--password-stdin"]) == 1
    err = capsys.readouterr().err
    assert "authentication failed" in err and len(err.strip().splitlines()) == 1
    # without a password and without a terminal: it says a password is needed
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["host", "facts", name]) == 1
    assert "password" in capsys.readouterr().err


def test_unreachable_hosts_fail_within_the_timeout(cli_env, tarpit, capsys) -> None:
    write_settings(cli_env["home"], connect_timeout=2)
    assert main(["host", "add", "silent", "--address", tarpit.address, "--port", str(tarpit.port)]) == 0
    assert main(["host", "add", "closed", "--address", "127.0.0.1", "--port", "1"]) == 0
    assert main(["host", "add", "noname", "--address", "no-such-host.invalid"]) == 0
    for name, words in (("silent", "banner"), ("closed", "refused"), ("noname", "resolve")):
        # a real process, so that everything it prints on stderr is seen (paramiko logs too); its start-up
        # (seconds on a busy machine) is not part of the promise: the bound on the whole is only "no hang"
        done = subprocess.run([sys.executable, str(ROOT / "main.py"), "host", "facts", name], capture_output=True,
                              text=True, timeout=120, env=os.environ.copy(), stdin=subprocess.DEVNULL)
        assert done.returncode == 1
        assert words in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    # the promise, as the silent server sees it: from its accept to the client's close, the 2 s timeout
    # (which also counted the TCP connect before the accept) and a second for a busy machine to act on it
    [connection] = tarpit.connections
    assert tarpit.wait_closed(30), "the silent server's connection is still open after its client ended"
    assert connection.held < 2 + 1, f"held {connection.held:.2f} s (timeout 2 s)"
