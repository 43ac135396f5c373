"""The suite's own scheduling (tests/fixtures/xdist_groups.py): a worker that dies ends in one failed test and
the rest of the run, never in a run that hangs until CI gives up; tests of one group share a worker."""
from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.processes import running

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = '''
import os
import pytest
from tests.fixtures.xdist_groups import group_of_file, make_scheduler

@pytest.fixture
def shared():
    return os.getpid()

def pytest_xdist_make_scheduler(config, log):
    return make_scheduler(config, log, group_of_file({"shared": "one"}))
'''

CRASH = "import os, time\n\ndef test_dies():\n    time.sleep(0.5)\n    os._exit(1)\n\n\ndef test_after():\n    pass\n"
QUICK = "def test_quick():\n    pass\n"

LAYOUTS = {
    # the dead worker's unit still holds a test: it must run, once, on another worker
    "crash in the middle": {"test_crash.py": CRASH, **{f"test_f{i}.py": QUICK for i in range(6)}},
    # the dead worker had finished units before: they must not come back as empty work (xdist#1378)
    "crash at the end": {**{f"test_f{i}.py": QUICK for i in range(12)}, "test_zz_crash.py": CRASH},
    # the replacement is handed a single test (xdist#1327)
    "one test left": {"test_crash.py": CRASH, "test_f0.py": QUICK},
}


def run_suite(path: Path, files: dict[str, str], workers: int = 2, conftest: str = CONFTEST
              ) -> subprocess.CompletedProcess:
    (path / "conftest.py").write_text(conftest)
    for name, text in files.items():
        (path / name).write_text(text)
    # a run tag of its own: the nested run's leftover check must never take this run's processes for its own
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCHBAY_TEST_RUN": secrets.token_hex(4)}
    try:
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
                               "--rootdir", str(path), "-n", str(workers), "--dist", "loadgroup", str(path)],
                              cwd=path, env=env, capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"the run hung after a worker died: {hung.stdout!r}")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_worker_that_dies_fails_its_test_and_the_rest_still_run(tmp_path, layout):
    files = LAYOUTS[layout]
    done = run_suite(tmp_path, files)
    summary = done.stdout.strip().splitlines()[-1]
    assert "worker 'gw" in done.stdout and "crashed while running" in done.stdout, done.stdout
    assert re.search(r"\b1 failed\b", summary), done.stdout
    # every other test ran once: the one after the crash and each quick one, none twice
    assert re.search(rf"\b{len(files)} passed\b", summary), done.stdout
    assert done.returncode == 1


def test_files_naming_a_one_worker_fixture_run_in_one_worker(tmp_path):
    record = "def test_{0}(shared):\n    open({1!r}, 'a').write(str(shared) + '\\n')\n"
    pids = tmp_path / "pids"
    files = {f"test_g{i}.py": record.format(i, str(pids)) for i in range(4)}
    files.update({f"test_f{i}.py": QUICK for i in range(8)})
    (tmp_path / "suite").mkdir()
    done = run_suite(tmp_path / "suite", files, workers=3)
    assert done.returncode == 0, done.stdout
    assert len(pids.read_text().split()) == 4
    assert len(set(pids.read_text().split())) == 1, "the group's tests ran in more than one worker"


SERVER_CONFTEST = CONFTEST + """
import subprocess
pytest_plugins = ["tests.fixtures.leftovers"]

@pytest.fixture(scope="session")
def server():
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.terminate()
    proc.wait()
"""


def test_what_a_dead_workers_fixtures_started_is_stopped_and_named(tmp_path):
    """A worker that dies runs no fixture teardown: the servers it started (an sshd host, an MTA) were left
    running past the run and counted as its leftovers."""
    pid_file = tmp_path / "server.pid"
    dies = (f"import os\n\ndef test_dies(server):\n    open({str(pid_file)!r}, 'w').write(str(server.pid))\n"
            "    os._exit(1)\n")
    (tmp_path / "suite").mkdir()
    done = run_suite(tmp_path / "suite", {"test_crash.py": dies, "test_f0.py": QUICK, "test_f1.py": QUICK},
                     conftest=SERVER_CONFTEST)
    pid = int(pid_file.read_text())
    alive = running(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, done.stdout
    assert "stopped after their worker died" in done.stdout and f"process {pid}: sleep 600" in done.stdout, done.stdout
    summary = done.stdout.strip().splitlines()[-1]
    assert "leftover" not in summary and re.search(r"\b1 failed\b", summary), done.stdout
