"""A host whose clock is hours off (libfaketime in every session of a real sshd test host).

Runs work either way (deadlines use the host's uptime); what the user must get is a warning, in the facts
and at the start of a run, and a stored timeline on one clock: the workbench's, with the host's own
times kept beside.
"""
from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from app.cli import main
from storage.db import open_store
from tests.fixtures.leftovers import faketime_segments, remove_faketime_segments
from tests.fixtures.processes import processes_using
from tests.fixtures.sshd import SshdServer, ssh_keygen_fingerprint

pytestmark = pytest.mark.integration
LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
HOURS_5 = 5 * 3600


def _require_faketime() -> None:
    if not LIBFAKETIME.exists():
        reason = f"{LIBFAKETIME} not found: install faketime"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


@contextlib.contextmanager
def _host_with_clock(root: Path, authorized: Path, offset: int) -> Iterator[SshdServer]:
    """sshd itself keeps the true time; every session on it (shell, date, the agent, the sampler under bash)
    sees the wall clock `offset` seconds off. The monotonic clock and /proc/uptime stay true, as on a host
    whose clock was simply set wrong."""
    tmpdir = root / "tmp"
    tmpdir.mkdir(parents=True, mode=0o700)
    server = SshdServer(root / "sshd", "skewed", "127.0.0.61", authorized,
                        env={"TMPDIR": str(tmpdir), "LD_PRELOAD": str(LIBFAKETIME), "FAKETIME": f"{offset:+d}",
                             "DONT_FAKE_MONOTONIC": "1"})
    before = faketime_segments()
    try:
        server.start()
        yield server
    finally:
        server.stop()
        for pid in processes_using(str(root)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        remove_faketime_segments(before)


@pytest.mark.parametrize("offset", [HOURS_5, -HOURS_5], ids=["ahead", "behind"])
def test_a_host_clock_hours_off_is_said_and_stored_on_one_clock(offset, cli_env, sshd_session, tmp_path,
                                                               capsys) -> None:
    _require_faketime()
    with _host_with_clock(tmp_path / "host", sshd_session.authorized, offset) as server:
        assert main(["host", "add", "skewed", "--address", server.address, "--port", str(server.port), "--user",
                     "root", "--key", str(sshd_session.client_key)]) == 0
        assert main(["host", "trust", "skewed", "--fingerprint", ssh_keygen_fingerprint(server.host_key_path)]) == 0
        capsys.readouterr()

        assert main(["host", "facts", "skewed"]) == 0
        out = capsys.readouterr().out
        way = "ahead of" if offset > 0 else "behind"
        [clock] = [line for line in out.splitlines() if line.startswith("clock:")]
        assert f"WARNING: 5.0 h {way} this computer's" in clock

        before = time.time()
        code = main(["run", "skewed", "--test", "idle", "--set", 'phases=[["measure","Measure",3]]',
                     "--interval", "0.5"])
        after = time.time()
        captured = capsys.readouterr()
        assert code == 0, captured.err
        [warning] = [line for line in captured.err.splitlines() if "clock is" in line]
        assert f"skewed's clock is 5.0 h {way} this computer's" in warning

        # monitor's TIME column: this computer's clock too, and the warning on stderr
        assert main(["monitor", "skewed", "--seconds", "2", "--interval", "1"]) == 0
        captured = capsys.readouterr()
        assert f"skewed's clock is 5.0 h {way} this computer's" in captured.err
        now = datetime.now()
        stamps = [line.split()[0] for line in captured.out.splitlines() if re.match(r"\d\d:\d\d:\d\d ", line)]
        assert len(stamps) == 2
        for stamp in stamps:
            shown = datetime.combine(now.date(), datetime.strptime(stamp, "%H:%M:%S").time())
            assert abs(((now - shown).total_seconds() + 43_200) % 86_400 - 43_200) < 30, (stamp, now)

    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        [run] = store.runs.list(test="idle")
        events = store.runs.events(run.id)
    finally:
        store.close()
    [measured] = [e for e in events if e["type"] == "clock"]
    assert abs(measured["offset_s"] - offset) < 2.0
    # every event on this computer's clock, within the run's own span; the host's times beside them
    for event in events:
        assert before - 1 <= event["t"] <= after + 1, event
    agent = [e for e in events if e["seq"] is not None]
    assert agent and all(abs(e["host_t"] - e["t"] - offset) < 2.0 for e in agent)
    [telemetry] = [e for e in events if e["type"] == "telemetry"]
    assert before - 1 <= telemetry["t0"] <= after + 1
    assert abs(telemetry["host_t0"] - telemetry["t0"] - offset) < 2.0
    [started] = [e for e in events if e["type"] == "started"]
    [start] = [e for e in events if e["type"] == "start" and e["seq"] is not None]
    assert abs(start["t"] - started["t"]) < 10.0   # the agent's start and the workbench's, one clock
