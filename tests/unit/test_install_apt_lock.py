"""install.sh while apt is busy: it waits for the lock with one message instead of failing at once
(scripts/common.sh apt_get, driven with a stand-in apt-get that holds the lock for a while)."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCKED = "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (unattended-upgr)"


def _apt_get(tmp_path: Path, busy_tries: int, wait_s: int, error: str = LOCKED) -> subprocess.CompletedProcess:
    calls = tmp_path / "calls"
    fake = tmp_path / "apt-get"
    fake.write_text(f"""#!/bin/bash
echo "$*" >> {calls}
n=$(wc -l < {calls})
if [ "$n" -le {busy_tries} ]; then echo '{error}' >&2; exit 100; fi
echo installed
""")
    fake.chmod(0o755)
    script = (f'. {ROOT}/scripts/common.sh; SUDO=""; APT_GET={fake} APT_LOCK_WAIT_S={wait_s} APT_LOCK_RETRY_S=1 '
              'apt_get install -y curl')
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)


def test_a_busy_apt_is_waited_for_with_one_message(tmp_path: Path) -> None:
    done = _apt_get(tmp_path, busy_tries=3, wait_s=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "installed\n"
    assert done.stderr.count("apt is busy (another installation or automatic updates): waiting for it") == 1
    assert LOCKED not in done.stderr
    assert (tmp_path / "calls").read_text().splitlines() == ["install -y curl"] * 4


def test_apt_busy_past_the_wait_fails_saying_what_to_do(tmp_path: Path) -> None:
    done = _apt_get(tmp_path, busy_tries=1000, wait_s=2)
    assert done.returncode == 100
    assert "apt is still busy after 2 s: let the other installation finish, then run this again" in done.stderr
    assert LOCKED in done.stderr   # apt's own words too


def test_other_apt_errors_fail_at_once(tmp_path: Path) -> None:
    done = _apt_get(tmp_path, busy_tries=1000, wait_s=60, error="E: Unable to locate package curl")
    assert done.returncode == 100
    assert "E: Unable to locate package curl" in done.stderr and "busy" not in done.stderr
    assert len((tmp_path / "calls").read_text().splitlines()) == 1
