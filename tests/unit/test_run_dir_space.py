"""Where a run directory goes (df parsing, the candidates' order, the one line when none fits) and
checking an upload (size, SHA-256, POSIX cksum), without a host."""
from __future__ import annotations

import errno
import hashlib
import shutil
import subprocess

import pytest

from remote import run_dir
from remote.agent.common import no_space_message
from remote.run_dir import LABEL_CONFIGURED, LABEL_HOME, LABEL_TMPDIR, Candidate, RunDirChoice, parse_df, parse_probe
from remote.upload_check import Uploaded, check_script, mismatch, parse_check, posix_cksum

MB = 1024 * 1024

GNU_DF = """Filesystem     1024-blocks  Used Available Capacity Mounted on
tmpfs                 1024  1000        24      98% /tmp/small
"""
# A device name with a space, a mount point with spaces (df -P keeps each on one line)
ODD_DF = """Filesystem 1024-blocks Used Available Capacity Mounted on
//nas/share name 209715200 104857600 104857600 50% /mnt/my share
"""
BUSYBOX_DF = """Filesystem           1024-blocks    Used Available Capacity Mounted on
/dev/root              8123456   4000000   4123456  49% /
"""


def test_df_free_space_and_mount_point() -> None:
    assert parse_df(GNU_DF) == (24 * 1024, "/tmp/small")
    assert parse_df(ODD_DF) == (104857600 * 1024, "/mnt/my share")
    assert parse_df(BUSYBOX_DF) == (4123456 * 1024, "/")


@pytest.mark.parametrize("text", ["", "Filesystem 1024-blocks Used Available Capacity Mounted on\n",
                                  "df: /nowhere: No such file or directory\n", "garbage\nmore garbage 12 %\n"])
def test_df_without_a_data_line_tells_nothing(text: str) -> None:
    assert parse_df(text) is None


def _probe(*records: tuple[str, str, str, str]) -> str:
    out = []
    for label, path, state, df in records:
        out += [f"@cand {label}\t{path}", f"@state {state}"]
        if df:
            out.append(df.rstrip("\n"))
    return "\n".join(out) + "\n"


def _df(avail_kb: int, mount: str = "/") -> str:
    return f"Filesystem 1024-blocks Used Available Capacity Mounted on\ntmpfs 999999 1 {avail_kb} 1% {mount}\n"


def test_probe_output_becomes_candidates_in_order_without_duplicates() -> None:
    text = _probe(
        (LABEL_CONFIGURED, "/srv/bench runs", "ok", _df(5000, "/srv")),
        (LABEL_TMPDIR, "/tmp/", "ok", _df(10)),
        ("/tmp", "/tmp", "ok", _df(10)),                  # $TMPDIR=/tmp/: the same place once
        ("/var/tmp", "/var/tmp", "readonly", ""),
        (LABEL_HOME, "/home/u/.cache/benchbay", "ok", _df(900000, "/home")),
    )
    found = parse_probe(text)
    assert [(c.label, c.path, c.state, c.free_bytes) for c in found] == [
        (LABEL_CONFIGURED, "/srv/bench runs", "ok", 5000 * 1024),
        (LABEL_TMPDIR, "/tmp/", "ok", 10 * 1024),
        ("/var/tmp", "/var/tmp", "readonly", None),
        (LABEL_HOME, "/home/u/.cache/benchbay", "ok", 900000 * 1024),
    ]


def test_first_candidate_with_room_wins_and_home_only_as_a_last_resort() -> None:
    tmpdir = Candidate(LABEL_TMPDIR, "/small", "ok", 24 * 1024)
    tmp = Candidate("/tmp", "/tmp", "ok", 50 * MB)
    var_tmp = Candidate("/var/tmp", "/var/tmp", "ok", 500 * MB)
    home = Candidate(LABEL_HOME, "/home/u/.cache/benchbay", "ok", 900 * MB)
    assert run_dir.usable([tmpdir, tmp, var_tmp, home], 2 * MB) == [tmp, var_tmp]
    # /tmp and /var/tmp full too: then, and only then, the home directory
    full_tmp = Candidate("/tmp", "/tmp", "ok", MB)
    readonly = Candidate("/var/tmp", "/var/tmp", "readonly", None)
    assert run_dir.usable([tmpdir, full_tmp, readonly, home], 2 * MB) == [home]
    # a directory df says nothing about is tried (mktemp and the upload check still guard it)
    unknown = Candidate("/tmp", "/tmp", "ok", None)
    assert run_dir.usable([tmpdir, unknown], 2 * MB) == [unknown]
    assert run_dir.usable([Candidate(LABEL_CONFIGURED, "/nope", "missing", None), tmpdir], 2 * MB) == []


def test_the_line_when_nothing_fits_names_each_place_and_what_to_do() -> None:
    candidates = [
        Candidate(LABEL_TMPDIR, "/small", "ok", 24 * 1024),
        Candidate("/tmp", "/tmp", "ok", 300 * 1024),
        Candidate("/var/tmp", "/var/tmp", "missing", None),
        Candidate(LABEL_HOME, "/home/u/.cache/benchbay", "readonly", None),
    ]
    line = run_dir.no_space_message("db1", candidates, 1200 * 1024)
    assert "\n" not in line
    assert line == ("db1: no room for a run directory, which needs 1.2 MB (/small has 24 KB free; "
                    "/tmp has 300 KB free; /var/tmp does not exist; /home/u/.cache/benchbay is not writable); "
                    "free space in /small, or set a run directory for this host (host edit db1 --run-dir DIR)")
    assert run_dir.no_space_message("local", candidates, MB).endswith("or set TMPDIR to a directory with room")


def test_the_runs_note_says_where_and_why_not_elsewhere() -> None:
    choice = RunDirChoice("/tmp/benchbay-x", Candidate("/tmp", "/tmp", "ok", 3 * MB // 2), ("/small has 24 KB free",))
    assert choice.note() == "the run directory is in /tmp, 1.5 MB free; not used: /small has 24 KB free"


@pytest.mark.parametrize(("path", "ok"), [("", True), ("/srv/runs", True), ("~/bench", True), ("~", True),
                                          ("runs", False), ("~user/x", False), ("/a\nb", False)])
def test_a_typed_run_directory_must_be_absolute(path: str, ok: bool) -> None:
    assert (run_dir.run_dir_problem(path) == "") is ok


# -- upload check ------------------------------------------------------------------------------------

def test_a_short_file_is_reported_as_cut_short() -> None:
    data = b"a" * 1000
    line = mismatch(data, Uploaded(600), "h1", "/tmp/benchbay-x/agent.pyz")
    assert line == ("upload of agent.pyz to h1:/tmp/benchbay-x was cut short (600 of 1000 bytes): "
                    "no space left? Free space in /tmp/benchbay-x")
    assert mismatch(data, Uploaded(None), "h1", "/r/agent.pyz") == \
        "upload of agent.pyz to h1:/r failed: the file is not there afterwards"


def test_same_size_different_content_is_damaged_and_a_good_copy_passes() -> None:
    data = b"print('hello')\n"
    good = parse_check(f"size {len(data)}\nsha256 {hashlib.sha256(data).hexdigest()}  -\n")
    assert mismatch(data, good, "h", "/r/a") == ""
    bad = parse_check(f"size {len(data)}\nsha256 {'0' * 64}  -\n")
    assert mismatch(data, bad, "h", "/r/a") == "upload of a to h:/r arrived damaged (sha256 differs); try again"
    # no hash tool on the host: the size still counts
    assert mismatch(data, parse_check(f"size {len(data)}\n"), "h", "/r/a") == ""


@pytest.mark.skipif(shutil.which("cksum") is None, reason="needs POSIX cksum")
@pytest.mark.parametrize("data", [b"", b"a", b"hello world\n", bytes(range(256)) * 300])
def test_posix_cksum_matches_the_cksum_tool(data: bytes) -> None:
    out = subprocess.run(["cksum"], input=data, capture_output=True, check=True).stdout.decode()
    assert posix_cksum(data) == int(out.split()[0])
    assert mismatch(data, parse_check(f"size {len(data)}\ncksum {out}"), "h", "/r/a") == ""


def test_check_script_on_this_machine(tmp_path) -> None:
    path = tmp_path / "it's here.bin"
    path.write_bytes(b"\x00\x01payload" * 100)
    out = subprocess.run(["sh", "-c", check_script(str(path))], capture_output=True, text=True).stdout
    assert mismatch(path.read_bytes(), parse_check(out), "h", str(path)) == ""
    out = subprocess.run(["sh", "-c", check_script(str(tmp_path / "gone"))], capture_output=True, text=True).stdout
    assert parse_check(out).size is None


# -- the agent's line for a full disk ---------------------------------------------------------------

def test_agent_names_the_directory_and_file_of_a_full_disk() -> None:
    exc = OSError(errno.ENOSPC, "No space left on device", "/tmp/benchbay-x/events.jsonl")
    assert no_space_message(exc, "/run") == "no space left on device in /tmp/benchbay-x while writing events.jsonl"
    try:
        try:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        except OSError as inner:
            raise RuntimeError("write failed") from inner
    except RuntimeError as outer:
        assert no_space_message(outer, "/run") == "disk quota exceeded in /run while writing a file"
    assert no_space_message(OSError(errno.EACCES, "Permission denied", "/x"), "/run") is None
    assert no_space_message(ValueError("no"), "/run") is None


# -- an SFTP server that answers "Failure" (what OpenSSH sends for ENOSPC) ------------------------------

class _FakeParamikoTransport:
    def set_keepalive(self, _seconds: int) -> None: ...

    def is_active(self) -> bool:
        return True


class _FailingSFTP:
    def open(self, _path: str, _mode: str):
        raise OSError("Failure")


class _FakeClient:
    def get_transport(self) -> _FakeParamikoTransport:
        return _FakeParamikoTransport()

    def close(self) -> None: ...


def test_an_sftp_failure_becomes_one_line_with_the_free_space() -> None:
    from remote.errors import RemoteCommandError
    from remote.ssh_transport import SSHTransport
    from remote.transport import CommandResult

    transport = SSHTransport(_FakeClient(), "db1")
    transport._sftp = _FailingSFTP()   # an SFTP session is open (no fallback to command channels)
    commands: list[str] = []

    def run(command: str, timeout: float = 60.0, stdin: bytes | None = None) -> CommandResult:
        commands.append(command)
        return CommandResult(0, GNU_DF.encode(), b"")

    transport.run = run  # type: ignore[method-assign]
    with pytest.raises(RemoteCommandError) as caught:
        transport.put_bytes(b"x" * 5000, "/tmp/small/benchbay-x/agent.pyz")
    assert str(caught.value) == ("upload of agent.pyz to db1:/tmp/small/benchbay-x failed (SFTP: Failure); "
                                 "/tmp/small/benchbay-x has 24 KB free: no space left?")
    assert commands and commands[0].startswith("rm -f -- /tmp/small/benchbay-x/agent.pyz;")
