"""Remote commands as every login shell reads them, and start-up output skipped by the marker."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from remote.login_shell import MarkerFilter, did_not_run_message, new_marker, wrap_command

MARKER = b"BENCHBAY-BEGIN-0123456789abcdef01234567"
SHELLS = ("bash", "dash", "zsh", "fish", "tcsh", "csh")
# quotes, backslashes, history `!`, printf `%`, newlines, non-ASCII: what breaks one shell or another
AWKWARD = "it's \"q\" \\ \\\\ $HOME `x` !! !$ %s %% \t tab\nline two é"


def _filtered(chunks: list[bytes]) -> tuple[bytes, MarkerFilter]:
    stream = MarkerFilter(MARKER)
    out = b"".join(stream.feed(chunk) for chunk in chunks)
    stream.finish()
    return out, stream


def test_output_before_the_marker_is_dropped() -> None:
    out, stream = _filtered([b"Welcome to host\nLast login: never\n" + MARKER + b"\n{\"ok\": 1}\n"])
    assert out == b"{\"ok\": 1}\n" and stream.found
    assert stream.before == b"Welcome to host\nLast login: never\n"


def test_greeting_without_newline_before_the_marker() -> None:
    out, _ = _filtered([b"no newline" + MARKER + b"\nresult"])
    assert out == b"result"


@pytest.mark.parametrize("size", [1, 2, 7, len(MARKER) - 1, len(MARKER), len(MARKER) + 1])
def test_marker_split_across_reads(size: int) -> None:
    data = b"motd line\n" * 3 + MARKER + b"\npayload " + MARKER + b"\n"
    chunks = [data[i:i + size] for i in range(0, len(data), size)]
    out, stream = _filtered(chunks)
    # the first marker ends the garbage; marker-like text after it is output like any other
    assert out == b"payload " + MARKER + b"\n" and stream.found


def test_lookalike_before_and_after() -> None:
    out, _ = _filtered([b"BENCHBAY-BEGIN-ffff\n", MARKER[:10], MARKER[10:] + b"\n", b"BENCHBAY-BEGIN-x\n"])
    assert out == b"BENCHBAY-BEGIN-x\n"


def test_no_marker_keeps_what_came_for_the_message() -> None:
    out, stream = _filtered([b"This account is currently not available.\n"])
    assert out == b"" and not stream.found
    assert stream.before == b"This account is currently not available.\n"
    message = did_not_run_message("web1", "www", 1, stream.before, b"")
    assert message == ("web1: the account www has no login shell that runs commands (exit 1: This account is "
                       "currently not available.); give it a shell such as /bin/bash, or connect as another user")
    assert "no output" in did_not_run_message("web1", "www", 1, b"", b"")


def test_kept_garbage_is_bounded() -> None:
    _, stream = _filtered([b"x" * 100_000, MARKER + b"\n"])
    assert len(stream.before) <= 4096


def test_markers_differ_per_call() -> None:
    assert new_marker() != new_marker()


def test_command_uses_only_characters_every_shell_takes_literally() -> None:
    command = wrap_command(AWKWARD, MARKER)
    inside = command[len("exec /bin/sh -c '"):-1]
    assert command.startswith("exec /bin/sh -c '") and command.endswith("'")
    assert set(inside) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\\\"$() ")
    assert MARKER.decode() not in command     # a shell that echoes its command cannot fake the marker
    with pytest.raises(ValueError):
        wrap_command("x" * 200_000, MARKER)


@pytest.mark.parametrize("shell", SHELLS)
def test_every_login_shell_runs_the_same_posix_script(shell: str) -> None:
    path = shutil.which(shell)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{shell} is not installed (run-tests.sh installs it)")
        pytest.skip(f"{shell} is not installed")
    script = f"printf '%s|' {_sh_quote(AWKWARD)}; echo err >&2; read line; echo \"got $line\"; exit 9"
    marker = new_marker()
    done = subprocess.run([path, "-c", wrap_command(script, marker)], input=b"stdin line\n",
                          capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    assert done.returncode == 9
    out, err = MarkerFilter(marker), MarkerFilter(marker)
    # whatever a shell may say about its own set-up comes before the marker and is dropped
    assert out.feed(done.stdout) == AWKWARD.encode() + b"|got stdin line\n"
    assert err.feed(done.stderr) == b"err\n"


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
