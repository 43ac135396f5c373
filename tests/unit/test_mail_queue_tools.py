"""Queue depth from the MTAs' own tools, as they answer: counts, Sendmail's mailq, and refusals with their reason.

The tools here are small scripts on PATH that print what Exim and Sendmail print (the real MTAs are in
tests/integration/test_mailstorm_exim.py and test_mailstorm_sendmail.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from remote.agent import mail_queue

SENDMAIL_MAILQ = """\t\t/var/spool/mqueue (2 requests)
-----Q-ID----- --Size-- -----Q-Time----- ------------Sender/Recipient-----------
6AO37uXe002279*    4096 Tue Nov 24 03:07 <>
\t\t\t\t\t <sink@benchbay.invalid>
6AO37uXe002280     4096 Tue Nov 24 03:07 <>
\t\t\t\t\t <sink@benchbay.invalid>
\t\tTotal requests: 2
"""


def _tool(directory: Path, name: str, stdout: str, stderr: str = "", status: int = 0) -> None:
    script = directory / name
    script.write_text(f"#!/bin/sh\nprintf '%s' '{stdout}'\nprintf '%s\\n' '{stderr}' >&2\nexit {status}\n")
    script.chmod(0o755)


@pytest.fixture()
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(mail_queue, "SBIN", ())   # only the scripts here, never this machine's MTA
    return tmp_path


def test_sendmail_mailq_is_counted_by_its_total() -> None:
    assert mail_queue.count_mailq(SENDMAIL_MAILQ) == 2
    assert mail_queue.count_mailq("/var/spool/mqueue is empty\n\t\tTotal requests: 0\n") == 0
    # a total that disagrees with the listed lines wins: Sendmail counts what it did not list too
    assert mail_queue.count_mailq(SENDMAIL_MAILQ.replace("Total requests: 2", "Total requests: 7")) == 7


def test_exim_count_and_sendmail_mailq_through_the_tools(tools: Path) -> None:
    _tool(tools, "exim", "300\n")
    _tool(tools, "mailq", SENDMAIL_MAILQ)
    assert mail_queue.depth_or_why("exim -bpc") == (300, "")
    assert mail_queue.depth_or_why("mailq") == (2, "")


def test_exim_refusing_an_ordinary_user_gives_the_reason_and_what_to_do(tools: Path) -> None:
    _tool(tools, "exim", "", "exim: permission denied", 1)
    depth, why = mail_queue.depth_or_why("exim -bpc")
    assert depth is None and mail_queue.depth("exim -bpc") is None
    assert why == ("exim -bpc: exim: permission denied (Exim shows its queue only to admin users: root, or a user "
                   "in Exim's group, Debian-exim on Debian)")


def test_missing_failing_or_garbled_tools_give_a_reason(tools: Path) -> None:
    assert mail_queue.depth_or_why("mailq") == (None, "mailq is not installed")
    _tool(tools, "mailq", "", "", 75)
    assert mail_queue.depth_or_why("mailq") == (None, "mailq: exit status 75")
    _tool(tools, "exim4", "Exim is not running here\n")
    assert mail_queue.depth_or_why("exim4 -bpc") == (None, "exim4 -bpc: not a count: 'Exim is not running here'")
