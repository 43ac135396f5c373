"""The command line as a user types it: exit codes, messages, JSON."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(cli_env):
    return cli_env


def test_host_add_list_remove(cli, capsys) -> None:
    assert main(["host", "add", "db1", "--address", "10.0.0.5", "--port", "2222", "--user", "admin"]) == 0
    assert main(["host", "list", "--json"]) == 0
    out = capsys.readouterr().out
    hosts = json.loads(out[out.index("["):])
    assert [h["name"] for h in hosts] == ["local", "db1"]
    assert hosts[1]["address"] == "10.0.0.5" and hosts[1]["port"] == 2222 and hosts[1]["user"] == "admin"
    assert main(["host", "remove", "db1"]) == 0
    capsys.readouterr()
    assert main(["host", "list"]) == 0
    table = capsys.readouterr().out
    assert "local" in table and "db1" not in table


def test_duplicate_host_is_a_failure_with_one_line(cli, capsys) -> None:
    assert main(["host", "add", "web", "--address", "192.0.2.1"]) == 0
    capsys.readouterr()
    assert main(["host", "add", "web", "--address", "192.0.2.2"]) == 1
    err = capsys.readouterr().err
    assert "web" in err and len(err.strip().splitlines()) == 1


def test_local_cannot_be_added_or_removed(cli, capsys) -> None:
    assert main(["host", "add", "local", "--address", "127.0.0.1"]) != 0
    assert main(["host", "remove", "local"]) == 2
    assert "built-in" in capsys.readouterr().err


def test_add_without_address_needs_ssh_config_alias(cli, bench_paths, capsys) -> None:
    assert main(["host", "add", "nowhere"]) == 2
    assert "--address" in capsys.readouterr().err
    bench_paths["ssh_config"].write_text("Host backup1\n    HostName 192.0.2.10\n    User ops\n")
    assert main(["host", "add", "backup1"]) == 0


def test_usage_errors_exit_2(cli, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["host", "add", "x", "--port", "70000"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["host", "frobnicate"])
    assert exc.value.code == 2
    assert main(["host", "add", "k", "--address", "a", "--auth", "key"]) == 2


def test_unknown_host_and_unknown_run_fail_with_reason(cli, capsys) -> None:
    assert main(["host", "facts", "ghost"]) == 1
    assert "ghost" in capsys.readouterr().err
    assert main(["runs", "show", "999"]) == 1
    assert "999" in capsys.readouterr().err


def test_facts_of_local_are_stored_as_a_run(cli, capsys) -> None:
    assert main(["host", "facts", "local", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    cpuinfo = Path("/proc/cpuinfo").read_text()
    models = {line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")}
    if models:
        assert facts["cpu"]["model"] in models
    assert facts["cpu"]["threads"] == os.cpu_count()
    for key in ("kernel", "os", "disks", "virtualization"):
        assert key in facts
    assert {"fio", "mta", "postgresql"} <= set(facts["tools"])
    assert main(["runs", "list", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert len(runs) == 1 and runs[0]["test"] == "facts" and runs[0]["status"] == "done"
    assert main(["runs", "show", str(runs[0]["id"]), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["facts"] == facts
    assert main(["runs", "show", str(runs[0]["id"])]) == 0
    assert "cpu:" in capsys.readouterr().out


def test_main_py_and_console_script_agree() -> None:
    out = subprocess.run([sys.executable, "main.py", "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0
    assert "host" in out.stdout and "runs" in out.stdout
