"""The requests of remote.command_shell, fed to a real `/bin/sh -s` (the shell a connection keeps)."""
from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Iterator

import pytest

from remote.command_shell import LOOP_SCRIPT, EndParser, new_end, request


class LocalShell:
    """`/bin/sh -s` on pipes, fed requests one after another as the connection's shell is."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(LOOP_SCRIPT.split()[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)

    def run(self, script: str, stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
        end = new_end()
        parser = EndParser(end)
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.proc.stdin.write(request(script, end, stdin))
        self.proc.stdin.flush()
        streams = {self.proc.stdout.fileno(): parser.feed_stdout, self.proc.stderr.fileno(): parser.feed_stderr}
        while not parser.complete:
            ready, _, _ = select.select(list(streams), [], [], 20)
            assert ready, "no answer within 20 s"
            for fd in ready:
                data = os.read(fd, 65536)
                assert data, "the shell ended"
                streams[fd](data)
        return parser.status, parser.stdout or b"", parser.stderr or b""

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        assert self.proc.wait(10) == 0


@pytest.fixture
def shell() -> Iterator[LocalShell]:
    local = LocalShell()
    yield local
    local.close()


def test_output_errors_and_exit_codes_stay_with_their_command(shell: LocalShell) -> None:
    for i in range(5):
        assert shell.run(f"echo out{i}; echo err{i} >&2; exit {i}") == (i, f"out{i}\n".encode(), f"err{i}\n".encode())
    assert shell.run("printf 'no newline'; printf 'nor here' >&2") == (0, b"no newline", b"nor here")
    assert shell.run("true") == (0, b"", b"")


def test_what_a_command_does_to_its_shell_stays_in_it(shell: LocalShell) -> None:
    status, _out, err = shell.run("if then fi")          # a syntax error ends the command, not the shell
    assert status != 0 and err
    assert shell.run("cd /; x=1; set -e; false; echo never")[0] == 1
    assert shell.run('echo "[$x]"; false; echo still') == (0, b"[]\nstill\n", b"")
    assert shell.run("exec echo replaced") == (0, b"replaced\n", b"")
    assert shell.run("echo after exec") == (0, b"after exec\n", b"")


def test_stdin_arrives_byte_for_byte_and_is_empty_without(shell: LocalShell) -> None:
    data = bytes(range(256)) * 64 + b"%s %d \\c '\" $HOME `id` 7\n8"
    assert shell.run("cat", stdin=data) == (0, data, b"")
    assert shell.run("cat; echo after") == (0, b"after\n", b"")       # /dev/null: EOF at once
    assert shell.run("head -c 3", stdin=b"x" * 100_000)[:2] == (0, b"xxx")   # input it does not read


def test_scripts_with_every_kind_of_quote(shell: LocalShell) -> None:
    weird = "it's \"quoted\" \\ $HOME `x` !bang %s\nsecond line\n\t\x7f é"
    script = "printf '%s|' " + "'" + weird.replace("'", "'\\''") + "' BENCHBAY-END-lookalike"
    assert shell.run(script) == (0, f"{weird}|BENCHBAY-END-lookalike|".encode(), b"")


def test_the_end_token_split_across_reads_is_found() -> None:
    end = new_end()
    parser = EndParser(end)
    stream = b"data" + end + b" 3\n"
    for i in range(len(stream)):
        parser.feed_stdout(stream[i:i + 1])
    parser.feed_stderr(b"e" + end[:5])
    assert not parser.complete
    parser.feed_stderr(end[5:] + b"\n")
    assert parser.complete and (parser.status, parser.stdout, parser.stderr) == (3, b"data", b"e")
