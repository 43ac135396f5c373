"""The uploadable agent: deterministic bytes, only the agent's modules, runnable as it is."""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import remote.agent
from remote.agent_package import AGENT_PACKAGE_NAME, AGENT_VERSION, agent_sources, build_agent, pack

AGENT_DIR = Path(remote.agent.__file__).parent


def test_version_is_the_agents():
    assert AGENT_VERSION == remote.agent.AGENT_VERSION
    assert AGENT_VERSION.count(".") == 2


def test_identical_sources_give_identical_bytes():
    first = build_agent()
    assert build_agent() is first  # cached
    assert pack(agent_sources()) == first  # and a fresh build is byte for byte the same
    changed = dict(agent_sources())
    changed[f"{AGENT_PACKAGE_NAME}/extra.py"] = b"X = 1\n"
    assert pack(changed) != first


def test_archive_holds_only_the_agent_modules():
    with zipfile.ZipFile(io.BytesIO(build_agent())) as archive:
        names = archive.namelist()
        infos = archive.infolist()
    expected = sorted(f"{AGENT_PACKAGE_NAME}/{p.name}" for p in AGENT_DIR.glob("*.py"))
    assert names == sorted(["__main__.py", *expected])
    assert f"{AGENT_PACKAGE_NAME}/__init__.py" in names
    assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in infos)
    assert not any("__pycache__" in n or n.endswith((".pyc", ".toml")) for n in names)


def _pythons() -> list[str]:
    found = [sys.executable]
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system:
        found.append(system)
    return found


@pytest.mark.parametrize("python", _pythons())
def test_zipapp_runs(python, tmp_path):
    pyz = tmp_path / "agent.pyz"
    pyz.write_bytes(build_agent())
    version = subprocess.run([python, str(pyz), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.strip() == AGENT_VERSION
    done = subprocess.run([python, "-E", "-s", str(pyz), "facts", "--run-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["agent_version"] == AGENT_VERSION and facts["schema"] == 1
