"""The built-in `local` host: commands, pipes, timeouts and files, with real subprocesses."""
from __future__ import annotations

import os
import stat
import time

import pytest

from remote.errors import CommandTimeout, RemoteCommandError
from remote.local_transport import LocalTransport


@pytest.fixture
def local():
    with LocalTransport() as transport:
        yield transport


def test_run_status_output_and_stdin(local):
    result = local.run("echo out; echo err >&2; exit 3")
    assert (result.exit_status, result.stdout, result.stderr) == (3, b"out\n", b"err\n")
    assert not result.ok and result.error_text() == "err"
    assert local.run("cat", stdin=b"hello").stdout == b"hello"
    assert local.run("cat").stdout == b""  # no stdin: /dev/null, never waits for input


def test_argv_is_quoted(local):
    tricky = "it's a \"test\" $HOME; rm -rf /"
    assert local.run(["printf", "%s", tricky]).stdout.decode() == tricky


def test_large_stdout_and_stderr_do_not_deadlock(local):
    script = "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2; head -c 1048576 /dev/zero"
    started = time.monotonic()
    result = local.run(script, timeout=30)
    assert len(result.stdout) == 2 * 1048576 and len(result.stderr) == 1048576
    assert time.monotonic() - started < 20


def test_timeout_kills_the_command_and_its_children(local, tmp_path):
    marker = tmp_path / "survivor"
    started = time.monotonic()
    with pytest.raises(CommandTimeout) as caught:
        local.run(f"(sleep 3; touch {marker}) & sleep 30", timeout=1)
    assert time.monotonic() - started < 8
    message = str(caught.value)
    assert "\n" not in message and "1 s" in message and message.startswith("local:")
    time.sleep(3.5)
    assert not marker.exists()  # the background child went with the group


def test_killed_by_signal_reads_like_a_shell(local):
    assert local.run("kill -9 $$").exit_status == 137


def test_env_overrides(tmp_path):
    transport = LocalTransport(env={"PATH": str(tmp_path), "BENCHBAY_X": "1"})
    result = transport.run("echo $BENCHBAY_X; command -v ls || echo none")
    assert result.text().split() == ["1", "none"]


def test_put_bytes_mode_and_replace(local, tmp_path):
    target = tmp_path / "agent.pyz"
    local.put_bytes(b"first", str(target), mode=0o600)
    assert target.read_bytes() == b"first"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    local.put_bytes(b"second", str(target), mode=0o640)
    assert target.read_bytes() == b"second" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["agent.pyz"]  # no temp files left
    with pytest.raises(RemoteCommandError):
        local.put_bytes(b"x", str(tmp_path / "missing" / "f"))


def test_get_bytes_offset_and_limit(local, tmp_path):
    target = tmp_path / "log.jsonl"
    target.write_bytes(b"0123456789")
    assert local.get_bytes(str(target)) == b"0123456789"
    assert local.get_bytes(str(target), offset=4) == b"456789"
    assert local.get_bytes(str(target), offset=4, limit=3) == b"456"
    assert local.get_bytes(str(target), offset=20) == b""
    with pytest.raises(RemoteCommandError):
        local.get_bytes(str(tmp_path / "absent"))


def test_private_dir_roundtrip(local):
    path = local.make_private_dir()
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    finally:
        local.remove_dir(path)
    assert not os.path.exists(path)


def test_closed_transport_refuses(local):
    local.close()
    with pytest.raises(RemoteCommandError):
        local.run("true")
