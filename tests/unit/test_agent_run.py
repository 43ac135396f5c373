"""run_agent's lifecycle: python3 lookup, upload, JSON parsing, and the run directory always removed."""
from __future__ import annotations

import os
import stat
import time

import pytest

from remote.agent_run import find_python, run_agent
from remote.errors import AgentError, CommandTimeout, NoPython
from remote.facts import gather_facts
from remote.local_transport import LocalTransport


class RecordingTransport(LocalTransport):
    """The local host, remembering its run directories; can swap the agent for a stand-in script."""

    def __init__(self, fake_agent: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.fake_agent = fake_agent
        self.run_dirs: list[str] = []
        self.agent_modes: list[int] = []

    def make_private_dir(self, prefix: str = "benchbay-") -> str:
        path = super().make_private_dir(prefix)
        self.run_dirs.append(path)
        return path

    def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o600) -> None:
        if self.fake_agent is not None and remote_path.endswith("/agent.pyz"):
            data = self.fake_agent.encode()  # python runs a plain script whatever its name
        super().put_bytes(data, remote_path, mode)
        self.agent_modes.append(stat.S_IMODE(os.stat(remote_path).st_mode))


def _assert_cleaned(transport: RecordingTransport) -> None:
    assert len(transport.run_dirs) == 1
    assert not os.path.exists(transport.run_dirs[0])


def test_success_returns_the_document_and_cleans_up():
    transport = RecordingTransport()
    facts = run_agent(transport, ["facts"])
    assert facts["schema"] == 1
    assert transport.agent_modes == [0o600]
    assert facts["test_dir"]["path"] == os.path.dirname(os.path.realpath(transport.run_dirs[0]))
    _assert_cleaned(transport)


def test_agent_failure_carries_its_stderr_line():
    transport = RecordingTransport()
    with pytest.raises(AgentError) as caught:
        run_agent(transport, ["no-such-command"])
    assert "exit 2" in str(caught.value) and "invalid choice" in str(caught.value)
    _assert_cleaned(transport)


def test_crash_shows_the_last_line():
    transport = RecordingTransport(fake_agent="raise RuntimeError('disk on fire')\n")
    with pytest.raises(AgentError, match="RuntimeError: disk on fire"):
        run_agent(transport, ["facts"])
    _assert_cleaned(transport)


def test_garbage_output():
    transport = RecordingTransport(fake_agent="print('Welcome to the server!\\n' * 20)\n")
    with pytest.raises(AgentError) as caught:
        run_agent(transport, ["facts"])
    message = str(caught.value)
    assert "agent output was not JSON: Welcome to the server!" in message
    assert len(message) < 140 and "\n" not in message
    _assert_cleaned(transport)


def test_timeout_still_removes_the_run_dir():
    transport = RecordingTransport(fake_agent="import time\ntime.sleep(30)\n")
    started = time.monotonic()
    with pytest.raises(CommandTimeout):
        run_agent(transport, ["facts"], timeout=1)
    assert time.monotonic() - started < 10
    _assert_cleaned(transport)


def test_wrong_schema_is_refused():
    transport = RecordingTransport(fake_agent="print('{\"schema\": 99}')\n")
    with pytest.raises(AgentError, match="schema 99"):
        gather_facts(transport)
    _assert_cleaned(transport)


def test_no_python3_on_path(tmp_path):
    transport = RecordingTransport(env={"PATH": str(tmp_path)})
    with pytest.raises(NoPython) as caught:
        run_agent(transport, ["facts"])
    assert "install python3 (3.6 or newer) on local" in str(caught.value)
    assert transport.run_dirs == []  # nothing was created on the host


def test_too_old_python3(tmp_path):
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 3.5.2\n")
    fake.chmod(0o755)
    with pytest.raises(NoPython) as caught:
        find_python(LocalTransport(env={"PATH": str(tmp_path)}))
    assert "3.5.2" in str(caught.value) and "install python3 (3.6 or newer) on local" in str(caught.value)


def test_find_python_gives_a_working_interpreter():
    path = find_python(LocalTransport())
    assert os.path.isabs(path) and os.access(path, os.X_OK)


def test_test_dir_with_awkward_name(tmp_path):
    awkward = tmp_path / "it's a \"dir\" $HOME"
    awkward.mkdir()
    transport = RecordingTransport()
    facts = gather_facts(transport, test_dir=str(awkward))
    assert facts["test_dir"]["path"] == str(awkward.resolve())
    _assert_cleaned(transport)
