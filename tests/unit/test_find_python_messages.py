"""find_python says which of the three it is: python3 absent, present but not running, or too old."""
from __future__ import annotations

from pathlib import Path

import pytest

from remote.agent_run import find_python
from remote.errors import NoPython
from remote.local_transport import LocalTransport


def _fake_python(directory: Path, body: str) -> Path:
    fake = directory / "python3"
    fake.write_text("#!/bin/sh\n" + body)
    fake.chmod(0o755)
    return fake


def _message(tmp_path: Path) -> str:
    with pytest.raises(NoPython) as caught:
        find_python(LocalTransport(env={"PATH": str(tmp_path)}))
    return str(caught.value)


def test_absent(tmp_path: Path) -> None:
    assert _message(tmp_path) == "local: python3 was not found on the PATH; install python3 (3.6 or newer) on local"


def test_present_but_failing_names_it_and_what_it_said(tmp_path: Path) -> None:
    fake = _fake_python(tmp_path, "echo 'error while loading shared libraries: libpython3.11.so.1.0' >&2\nexit 127\n")
    message = _message(tmp_path)
    assert message.startswith(f"local: {fake} is there but does not run (error while loading shared libraries")
    assert "not found" not in message


def test_present_but_silent(tmp_path: Path) -> None:
    fake = _fake_python(tmp_path, "exit 1\n")
    assert f"{fake} is there but does not run (exit 1, no version printed)" in _message(tmp_path)


def test_broken_link(tmp_path: Path) -> None:
    (tmp_path / "python3").symlink_to(tmp_path / "gone")
    message = _message(tmp_path)
    # sh may skip a dangling link on the PATH or find it and fail to run it: either way, true
    assert "python3 was not found on the PATH" in message or "is there but does not run" in message


def test_too_old(tmp_path: Path) -> None:
    fake = _fake_python(tmp_path, "echo 3.5.2\n")
    assert f"{fake} is Python 3.5.2, too old for the agent" in _message(tmp_path)


def test_working() -> None:
    assert Path(find_python(LocalTransport())).name.startswith("python3")


def test_a_wrapper_gives_way_to_the_interpreter_it_runs(tmp_path: Path) -> None:
    # as pyenv's shim: a script that execs the real python3; the agent then starts without the detour
    real = Path(find_python(LocalTransport()))
    _fake_python(tmp_path, f'exec {real} "$@"\n')
    assert find_python(LocalTransport(env={"PATH": str(tmp_path)})) == str(real)


def test_a_wrapper_stays_when_its_interpreter_does_not_run_alone(tmp_path: Path) -> None:
    # a wrapper that sets up what its interpreter needs (a library path, say): keep starting the wrapper
    fake = _fake_python(tmp_path, "echo 3.11.4 /bin/false\n")
    assert find_python(LocalTransport(env={"PATH": str(tmp_path)})) == str(fake)
    fake = _fake_python(tmp_path, f"echo 3.11.4 {tmp_path}/gone/python3\n")
    assert find_python(LocalTransport(env={"PATH": str(tmp_path)})) == str(fake)
