"""Shared test set-up: fixtures live in tests/fixtures/, one module per kind of server."""
import functools
import os
import re
import signal
from pathlib import Path

import pytest

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


_FIXTURE_WORD = re.compile(r"\b(" + "|".join(map(re.escape, ONE_WORKER)) + r")\b")


def pytest_itemcollected(item: pytest.Item) -> None:
    groups = sorted({ONE_WORKER[name] for name in getattr(item, "fixturenames", ()) if name in ONE_WORKER})
    if groups:
        item.add_marker(pytest.mark.xdist_group("+".join(groups)))


@functools.cache
def _file_group(path: Path) -> str:
    """The group of a test file: of the ONE_WORKER fixtures its text names (its tests or its own fixtures)."""
    try:
        text = path.read_text()
    except OSError:
        return ""
    return "+".join(sorted({ONE_WORKER[name] for name in _FIXTURE_WORD.findall(text)}))


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """--dist loadgroup, with the groups found by the controller itself: pytest-xdist 3.8 carries the
    xdist_group marks to it in the test ids, which pytest 9.2 no longer lets it change
    (pytest-dev/pytest-xdist#1386), so the marks alone would be ignored."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ByFixtureGroup(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            group = _file_group(config.rootpath / nodeid.split("::", 1)[0])
            return f"group:{group}" if group else super()._split_scope(nodeid)

    return ByFixtureGroup(config, log)
