"""Shared test set-up: fixtures live in tests/fixtures/, one module per kind of server."""
import gc
import os
import signal
import sys

import pytest

from tests.fixtures.xdist_groups import group_of_file, make_scheduler

# Qt must never try to reach a display in tests; set before anything imports Qt.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# A suite started in the background by a non-interactive shell (`cmd &` in a script, CI wrappers) inherits
# SIGINT ignored, and so would every `benchbay` the tests start: their Ctrl-C tests would then wait forever.
# Ctrl-C is what those tests press, so it is made to work as at a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = [
    "tests.fixtures.leftovers",   # the check at the end of the run; first: the fixtures import it
    "tests.fixtures.processes",   # before the fixtures that import it, so pytest rewrites its asserts
    "tests.fixtures.sshd",
    "tests.fixtures.tarpit",
    "tests.fixtures.postgres",
    "tests.fixtures.mariadb",
    "tests.fixtures.postfix",
    "tests.fixtures.exim",
    "tests.fixtures.sendmail",
    "tests.fixtures.store",
    "tests.fixtures.login_users",
    "tests.fixtures.tmpdirs",
    "tests.fixtures.netns",
    "tests.fixtures.capacity_hosts",
    "tests.fixtures.cgroup2_vm",
    "tests.fixtures.xserver",
    "tests.fixtures.dns_servers",
]


# Fixtures that stand for one thing on this machine (the bbt-* accounts, the system's Postfix and its
# master.cf) or cost a minute to set up (an MTA unpacked into a namespace). With pytest-xdist
# (`--dist loadgroup`, run-tests.sh) every test using one of a group runs in the same worker, so it is set
# up once and never twice at a time. A test using fixtures of two groups joins them into one.
ONE_WORKER = {
    "login_users": "login-users",
    "postfix_sink": "mta", "postfix_limited": "mta", "exim_server": "mta", "sendmail_server": "mta",
    "password_roles": "pg-hba",   # tests/integration/test_restore.py edits the server's pg_hba.conf
    # hosts whose CPU and disk are measured against each other: one set at a time, never two competing
    "capacity_hosts": "capacity", "capacity_host_set": "capacity", "cgroup2_capacity_hosts": "capacity",
}


_file_group = group_of_file(ONE_WORKER)


def pytest_itemcollected(item: pytest.Item) -> None:
    groups = sorted({ONE_WORKER[name] for name in getattr(item, "fixturenames", ()) if name in ONE_WORKER})
    if groups:
        item.add_marker(pytest.mark.xdist_group("+".join(groups)))


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """--dist loadgroup, with the groups found by the controller itself: pytest-xdist 3.8 carries the
    xdist_group marks to it in the test ids, which pytest 9.2 no longer lets it change
    (pytest-dev/pytest-xdist#1386), so the marks alone would be ignored."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return make_scheduler(config, log, _file_group)


_collector = []


def _collect_in_gui_thread():
    """Once a QApplication exists, Python's cycle collector runs in this (the GUI) thread only, as in the app
    (app/gui/application.py): the window's worker threads and paramiko's otherwise destroy the widgets and
    chart items that earlier tests closed, which Qt does not survive (a test worker aborted)."""
    if not _collector:
        widgets = sys.modules.get("PySide6.QtWidgets")   # never imports Qt for a test that does not use it
        if widgets is None or widgets.QApplication.instance() is None:
            return None
        from pyqtgraph.util.garbage_collector import GarbageCollector

        _collector.append(GarbageCollector(interval=1.0))   # a timer in this thread, run by every qtbot wait
    return _collector[0]


@pytest.fixture(autouse=True)
def collect_in_the_gui_thread():
    _collect_in_gui_thread()
    yield
    collector = _collect_in_gui_thread()
    if collector is not None:
        collector.check()   # what the test left, here: a test that runs no event loop gives the timer no turn
        switched_on = gc.isenabled()
        gc.disable()        # for the tests after it
        assert not switched_on, "the test switched Python's automatic collector back on (collected in any thread)"
