"""Shared test set-up: fixtures live in tests/fixtures/, one module per kind of server."""
import os

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
