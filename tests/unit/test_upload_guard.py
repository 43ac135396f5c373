"""The check of a run's uploads that rides on its start command: it starts only what arrived whole."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from remote.local_transport import LocalTransport
from remote.upload_check import guard_problem, guard_script

AGENT = os.urandom(200_000)
SPEC = b'{"test": "idle"}'


def _start(tmp_path: Path, files: list[tuple[bytes, str]], env: dict[str, str] | None = None):
    """guard_script + a start that leaves a mark: (the guard's verdict, whether the start ran)."""
    mark = tmp_path / "started"
    result = LocalTransport(env=env).run(guard_script(files) + f"touch {mark}; echo deadline=1", timeout=30)
    return guard_problem(result.text(), files, "local"), mark.exists(), result


def _uploads(tmp_path: Path) -> list[tuple[bytes, str]]:
    (tmp_path / "agent.pyz").write_bytes(AGENT)
    (tmp_path / "spec.json").write_bytes(SPEC)
    return [(AGENT, str(tmp_path / "agent.pyz")), (SPEC, str(tmp_path / "spec.json"))]


def test_whole_uploads_start(tmp_path: Path) -> None:
    found, started, result = _start(tmp_path, _uploads(tmp_path))
    assert found is None and started and result.ok and "deadline=1" in result.text()


def test_a_file_cut_short_stops_the_start_and_says_so(tmp_path: Path) -> None:
    files = _uploads(tmp_path)
    (tmp_path / "agent.pyz").write_bytes(AGENT[:4096])   # a full disk cut the upload short
    found, started, result = _start(tmp_path, files)
    assert not started and not result.ok
    verdict, problem = found
    assert verdict == "bad"
    assert problem.startswith(f"upload of agent.pyz to local:{tmp_path} was cut short (4096 of 200000 bytes)")


def test_a_damaged_or_missing_file_stops_the_start(tmp_path: Path) -> None:
    files = _uploads(tmp_path)
    (tmp_path / "spec.json").write_bytes(SPEC.replace(b"idle", b"IDLE"))
    found, started, _result = _start(tmp_path, files)
    assert not started and found == ("bad", f"upload of spec.json to local:{tmp_path} arrived damaged "
                                             "(sha256 differs); try again")
    (tmp_path / "spec.json").unlink()
    found, started, _result = _start(tmp_path, files)
    assert not started and found == ("bad", f"upload of spec.json to local:{tmp_path} failed: "
                                             "the file is not there afterwards")


def test_without_a_sha256_tool_the_host_says_so_and_the_workbench_compares(tmp_path: Path) -> None:
    files = _uploads(tmp_path)
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("wc", "cksum", "touch", "cat"):   # a small host: no sha256sum, shasum or python3
        os.symlink(shutil.which(name), tools / name)
    found, started, _result = _start(tmp_path, files, env={"PATH": str(tools)})
    assert not started and found == ("unverified", "")      # whole, by the sizes and CRCs the host printed
    (tmp_path / "agent.pyz").write_bytes(AGENT[:-1] + bytes([AGENT[-1] ^ 1]))
    found, started, _result = _start(tmp_path, files, env={"PATH": str(tools)})
    assert not started and found == ("unverified", f"upload of agent.pyz to local:{tmp_path} arrived damaged "
                                                   "(cksum differs); try again")
