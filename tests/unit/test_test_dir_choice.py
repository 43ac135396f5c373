"""Which directory a test that writes files gets: the run's, else the host's, else the run directory; tests that
write no files (cpu, idle) get none, and shared storage only the one its run names (the same on every client)."""
from __future__ import annotations

import pytest

from app.engine.orchestrator import RunRequest, RunRequestError, validate_request, with_test_dir
from app.engine.test_dir import FROM_HOST, FROM_RUN, FROM_RUN_DIR, choose_test_dir
from remote.hostspec import HostSpec

HOST = HostSpec("db1", "192.0.2.10", 22, "bench", test_dir="/srv/bench")
BARE = HostSpec("db2", "192.0.2.11", 22, "bench")


@pytest.mark.parametrize("test", ["disk", "mailstorm", "restore"])
def test_the_hosts_directory_fills_in_for_every_test_that_writes_files(test: str) -> None:
    request = RunRequest("db1", test, {})
    steered, params, choice = with_test_dir(request, validate_request(request), HOST)
    assert (choice.directory, choice.source) == ("/srv/bench", FROM_HOST)
    assert params["test_dir"] == "/srv/bench" and steered.params["test_dir"] == "/srv/bench"
    assert choice.event("/tmp/benchbay-run-1") == {"directory": "/srv/bench", "source": FROM_HOST}


def test_a_directory_given_for_the_run_wins_and_none_means_the_run_directory() -> None:
    given = RunRequest("db1", "disk", {"test_dir": "/mnt/new"})
    _steered, params, choice = with_test_dir(given, validate_request(given), HOST)
    assert (params["test_dir"], choice.source) == ("/mnt/new", FROM_RUN)
    plain = RunRequest("db2", "disk", {})
    _steered, params, choice = with_test_dir(plain, validate_request(plain), BARE)
    assert params["test_dir"] == "" and choice.source == FROM_RUN_DIR
    assert choice.event("/tmp/benchbay-run-2")["directory"] == "/tmp/benchbay-run-2"


def test_tests_without_files_and_shared_storage_are_left_alone() -> None:
    for test in ("cpu", "idle"):
        request = RunRequest("db1", test, {})
        assert choose_test_dir(test, {}, validate_request(request), HOST) is None
        assert "test_dir" not in with_test_dir(request, validate_request(request), HOST)[1]
    assert choose_test_dir("shared-storage", {}, {"test_dir": ""}, HOST) is None


def test_a_relative_host_directory_is_refused_as_a_run_one_would_be() -> None:
    request = RunRequest("db1", "disk", {})
    with pytest.raises(RunRequestError, match="absolute"):
        with_test_dir(request, validate_request(request), HOST.with_changes(test_dir="bench"))
