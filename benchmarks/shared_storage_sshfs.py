"""The shared-storage test on N client hosts against one directory served over sshfs: totals and start spread.

    sudo .venv/bin/python benchmarks/shared_storage_sshfs.py [--clients 3] [--threads 1,4] [--bs 1,4096]
                                                             [--seconds 5]

Needs root (real OpenSSH sshd test hosts, a FUSE mount). Starts one sshd as the storage server and N
sshd client hosts on loopback (tests/fixtures/sshd.py), mounts the server's directory with sshfs, and in
a fresh Benchbay home and SQLite store runs, once per request size,

    benchbay run c1 .. cN --test shared-storage --dir MOUNT --clients 1,2..N --threads T --set bs=B --json

Prints, per request size, each step's total op/s and MB/s, the clients' op/s, the start spread with its
uncertainty, and the knee. All clients are on this machine and go through the same mount (one sshfs
connection): the figures measure this machine's sshfs, not a storage system. Everything is stopped,
unmounted and removed at the end, also on failure.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.cli import main as benchbay  # noqa: E402
from tests.fixtures.sshd import SshdServer, keygen, ssh_keygen_fingerprint  # noqa: E402
from tests.fixtures.store import write_settings  # noqa: E402

FIRST_ADDRESS = 200     # 127.0.0.200 = the storage server, clients from .201


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = benchbay(list(argv))
    return code, out.getvalue(), err.getvalue()


def _server(root: Path, name: str, index: int, authorized: Path) -> SshdServer:
    host_dir = root / name
    (host_dir / "tmp").mkdir(parents=True, mode=0o700)
    server = SshdServer(host_dir, name, f"127.0.0.{FIRST_ADDRESS + index}", authorized,
                        env={"TMPDIR": str(host_dir / "tmp")})
    server.start()
    return server


def _report(bs: int, report: dict) -> None:
    print(f"\nrequest size {bs} B")
    print("  step     total op/s  total MB/s  start spread          per client op/s        total per second, min-max")
    for step in report["steps"]:
        spread = step["start_spread_s"]
        shown = f"{spread * 1e3:6.1f} ± {step['start_spread_uncertainty_s'] * 1e3:.1f} ms" if spread is not None \
            else "not reported"
        clients = ", ".join(f"{sum(v) / len(v):.0f}" for v in step["per_client_ops"].values())
        each = step["total_ops"]
        print(f"  {step['step']:<8} {step['ops']:>10.1f}  {step['mbps']:>10.4f}  {shown:<20}  {clients:<20}  "
              f"{min(each):.0f}-{max(each):.0f}")
    print(f"  {report['knee_text']}")
    print("  clock offsets: " + ", ".join(f"{h} {o['offset_s'] * 1e3:+.2f} ± {o['uncertainty_s'] * 1e3:.2f} ms"
                                          for h, o in report["offsets"].items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--threads", default="1,4")
    parser.add_argument("--bs", default="1,4096")
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    sshfs, fusermount = shutil.which("sshfs"), shutil.which("fusermount3") or shutil.which("fusermount")
    if not sshfs or not fusermount:
        print("sshfs and fusermount are needed (apt-get install sshfs)", file=sys.stderr)
        return 2
    user = pwd.getpwuid(os.getuid()).pw_name
    servers: list[SshdServer] = []
    with tempfile.TemporaryDirectory(prefix="benchbay-shared-bench-") as tmp:
        root = Path(tmp)
        key = keygen(root / "client_ed25519")
        authorized = root / "authorized_keys"
        authorized.write_text(Path(str(key) + ".pub").read_text())
        home, db = root / "home", root / "store.sqlite"
        home.mkdir()
        (root / "ssh_config").write_text("")
        (root / "known_hosts").write_text("")
        write_settings(home, ssh_config=str(root / "ssh_config"), user_known_hosts=str(root / "known_hosts"))
        os.environ.update(BENCHBAY_HOME=str(home), BENCHBAY_DB=f"sqlite:///{db}")
        exported, mount = root / "exported", root / "shared"
        exported.mkdir()
        mount.mkdir()
        mounted = False
        try:
            servers.append(_server(root, "storage", 0, authorized))
            for index in range(args.clients):
                server = _server(root, f"c{index + 1}", index + 1, authorized)
                servers.append(server)
                for command in (["host", "add", server.name, "--address", server.address, "--port",
                                 str(server.port), "--user", user, "--auth", "key", "--key", str(key)],
                                ["host", "trust", server.name, "--fingerprint",
                                 ssh_keygen_fingerprint(server.host_key_path)]):
                    code, _, err = _cli(*command)
                    if code != 0:
                        raise RuntimeError(err.strip())
            storage = servers[0]
            options = ",".join([f"IdentityFile={key}", f"Port={storage.port}", "BatchMode=yes",
                                "StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "IdentitiesOnly=yes"])
            subprocess.run([sshfs, "-o", options, f"{user}@{storage.address}:{exported}", str(mount)], check=True,
                           timeout=30)
            mounted = True
            print(f"{args.clients} client hosts, sshfs from {storage.address}; load before: "
                  + " ".join(f"{v:.2f}" for v in os.getloadavg()))
            clients = ",".join(str(n) for n in range(1, args.clients + 1))
            for bs in [int(b) for b in args.bs.split(",")]:
                code, out, err = _cli("run", *[s.name for s in servers[1:]], "--test", "shared-storage", "--dir",
                                      str(mount), "--clients", clients, "--threads", args.threads, "--set",
                                      f"runtime={args.seconds}", "--set", f"bs={bs}", "--set",
                                      f"file_size={max(bs, 4096) * 256}", "--json")
                if code != 0 and not out.strip():
                    print(err[-2000:], file=sys.stderr)
                    return 1
                _report(bs, json.loads(out))
                left = os.listdir(exported)
                print(f"  left in the shared directory afterwards: {left or 'nothing'}")
            print("load after: " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
        finally:
            if mounted:
                subprocess.run([fusermount, "-u", "-z", str(mount)], capture_output=True, timeout=30)
            for server in servers:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
