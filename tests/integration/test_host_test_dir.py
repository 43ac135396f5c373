"""`host add/edit --test-dir` steers the tests that write files, from the command line and from the window's
path (Workbench.run with the dialog's parameters, which name no directory when its field is blank); a run's
own test_dir still wins; the run's events and the CLI's progress say which directory was used and why."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.cli import main
from app.engine.orchestrator import RunRequest
from tests.fixtures.sshd import ssh_keygen_fingerprint

pytestmark = pytest.mark.integration

# a disk test of a second: one job, a small file, no warm-up
SHORT_DISK = {"tests": ["randread_4k"], "runtime": 0.5, "warmup": 0.0, "file_size": "8M"}
SHORT_DISK_ARGS = [arg for key, value in SHORT_DISK.items()
                   for arg in ("--set", f"{key}={','.join(value) if isinstance(value, list) else value}")]


def _directory_of(workbench, run_id: int) -> tuple[dict, str, set[str]]:
    """The run's test_dir event, the path of its test file and the test_dir its results name."""
    events = workbench.run_events(run_id)
    chosen = [e for e in events if e.get("type") == "test_dir"]
    assert len(chosen) == 1, [e.get("type") for e in events]
    test_file = next(e["path"] for e in events if e.get("type") == "test_file")
    results = workbench.find_run(run_id).results
    return chosen[0], test_file, {str(r.metadata.get("test_dir")) for r in results}


def test_the_hosts_test_dir_steers_the_disk_test(cli_env, workbench, ssh_host, tmp_path, capsys) -> None:
    first, second, own = (tmp_path / name for name in ("inventory-dir", "edited-dir", "run-dir-given"))
    for directory in (first, second, own):
        directory.mkdir()
        os.chmod(directory, 0o777)
    name = "steered"
    assert main(["host", "add", name, "--address", ssh_host.address, "--port", str(ssh_host.port),
                 "--user", ssh_host.user, "--key", str(ssh_host.client_key_path), "--test-dir", str(first)]) == 0
    assert main(["host", "trust", name, "--fingerprint", ssh_keygen_fingerprint(ssh_host.host_key_path)]) == 0
    capsys.readouterr()

    # the command line, with no --set test_dir: the inventory's directory, and the progress says so
    assert main(["run", name, "--test", "disk", *SHORT_DISK_ARGS]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    out = captured.out + captured.err   # the progress goes to stderr
    run_id = max(run.id for run in workbench.store.runs.list())
    event, test_file, stored = _directory_of(workbench, run_id)
    assert event == {**event, "directory": str(first), "source": "the host's test directory"}
    assert Path(test_file).parent == first and stored == {str(first)}
    assert f"test directory {first} (the host's test directory)" in out
    assert list(first.iterdir()) == []   # the test file went there, and is gone again

    # edited in the inventory; the window's path (the dialog names no directory when its field is blank)
    assert main(["host", "edit", name, "--test-dir", str(second)]) == 0
    outcome = workbench.run(RunRequest(name, "disk", dict(SHORT_DISK), interval=0.5))
    assert outcome.status == "done", outcome.error
    event, test_file, stored = _directory_of(workbench, outcome.run_id)
    assert (event["directory"], event["source"], Path(test_file).parent, stored) == (
        str(second), "the host's test directory", second, {str(second)})

    # a directory given for the run wins over the host's
    outcome = workbench.run(RunRequest(name, "disk", {**SHORT_DISK, "test_dir": str(own)}, interval=0.5))
    assert outcome.status == "done", outcome.error
    event, test_file, stored = _directory_of(workbench, outcome.run_id)
    assert (event["directory"], event["source"], Path(test_file).parent) == (str(own), "set for this run", own)
    assert workbench.find_run(outcome.run_id).run.parameters["params"]["test_dir"] == str(own)


def test_without_a_test_dir_the_run_directory_is_named(cli_env, workbench, ssh_host, capsys) -> None:
    name = "unsteered"
    assert main(["host", "add", name, "--address", ssh_host.address, "--port", str(ssh_host.port),
                 "--user", ssh_host.user, "--key", str(ssh_host.client_key_path)]) == 0
    assert main(["host", "trust", name, "--fingerprint", ssh_keygen_fingerprint(ssh_host.host_key_path)]) == 0
    outcome = workbench.run(RunRequest(name, "disk", dict(SHORT_DISK), interval=0.5))
    assert outcome.status == "done", outcome.error
    event, test_file, _stored = _directory_of(workbench, outcome.run_id)
    started = next(e for e in workbench.run_events(outcome.run_id) if e.get("type") == "started")
    assert event["source"] == "the run directory" and event["directory"] == started["run_dir"]
    assert Path(test_file).parent == Path(started["run_dir"])
