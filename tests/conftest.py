"""Shared test set-up: fixtures live in tests/fixtures/, one module per kind of server."""
import os

import pytest

# Qt must never try to reach a display in tests; set before anything imports Qt.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest_plugins = [
    "tests.fixtures.leftovers",   # the check at the end of the run; first: the fixtures import it
    "tests.fixtures.sshd",
    "tests.fixtures.tarpit",
    "tests.fixtures.postgres",
    "tests.fixtures.postfix",
    "tests.fixtures.exim",
    "tests.fixtures.sendmail",
    "tests.fixtures.store",
    "tests.fixtures.login_users",
    "tests.fixtures.tmpdirs",
    "tests.fixtures.processes",
    "tests.fixtures.xserver",
]


# Fixtures that stand for one thing on this machine (the bbt-* accounts, the system's Postfix and its
# master.cf) or cost a minute to set up (an MTA unpacked into a namespace). With pytest-xdist
# (`--dist loadgroup`, run-tests.sh) every test using one of a group runs in the same worker, so it is set
# up once and never twice at a time. A test using fixtures of two groups joins them into one.
ONE_WORKER = {
    "login_users": "login-users",
    "postfix_sink": "mta", "postfix_limited": "mta", "exim_server": "mta", "sendmail_server": "mta",
}


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        groups = sorted({ONE_WORKER[name] for name in getattr(item, "fixturenames", ()) if name in ONE_WORKER})
        if groups:
            item.add_marker(pytest.mark.xdist_group("+".join(groups)))
