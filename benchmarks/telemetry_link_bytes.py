"""What a monitor costs on the link and on the workbench, with and without SSH compression.

    sudo .venv/bin/python benchmarks/telemetry_link_bytes.py [--seconds 20] [--rounds 3] [--interval 0.5]

Needs root (the host is a real OpenSSH sshd, from the test suite's helpers, on 127.0.0.90 at a free high
port). Each round runs the same monitor (the real sampler, read by a RunSession as `benchbay monitor`
does) for --seconds, once with compression and once without, in turns, in this one process. It prints,
per round, the bytes the host sent (sshd's own count, "Transferred: sent N" in its log) and this
process's CPU seconds (user + sys) for each, then min / median / max of the ratios compressed / plain,
and the machine's load average before and after.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from remote import connect as connect_module  # noqa: E402
from remote.hostkeys import KnownHosts  # noqa: E402
from remote.hostspec import AUTH_KEY, HostSpec  # noqa: E402
from remote.run_session import MONITOR, RunSession  # noqa: E402
from tests.fixtures.sshd import SshdServer, keygen, public_key  # noqa: E402

SENT = re.compile(r"Transferred: sent (\d+), received (\d+) bytes")


def _one(server: SshdServer, known: KnownHosts, key: Path, seconds: float, interval: float,
         compress: bool) -> tuple[int, float]:
    """Bytes the host sent during one monitor, and our CPU seconds for it."""
    connect_module.COMPRESS = compress
    before = server.log_size()
    cpu = time.process_time()
    spec = HostSpec("bench", server.address, server.port, os.environ.get("USER", "root"), AUTH_KEY, str(key))
    transport = connect_module.connect(spec, known_hosts=known, timeout=20)
    try:
        session = RunSession(transport, MONITOR, interval=interval, duration=seconds)
        session.start()
        session.run()
    finally:
        transport.close()
    used = time.process_time() - cpu
    for _ in range(50):   # sshd writes its count when the connection is closed
        found = SENT.findall(server.log_tail(before))
        if found:
            return int(found[-1][0]), used
        time.sleep(0.1)
    raise RuntimeError(f"sshd did not log its byte count:\n{server.log_tail(before)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--interval", type=float, default=0.5)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="benchbay-linkbytes-") as tmp:
        root = Path(tmp)
        key = keygen(root / "client_ed25519")
        authorized = root / "authorized_keys"
        authorized.write_text(Path(str(key) + ".pub").read_text())
        (root / "host-tmp").mkdir(mode=0o700)
        server = SshdServer(root / "sshd", "bench", "127.0.0.90", authorized, env={"TMPDIR": str(root / "host-tmp")})
        server.start()
        try:
            known = KnownHosts(root / "known_hosts", user_path=root / "user_known_hosts")
            known.add(f"[{server.address}]:{server.port}", public_key(server.host_key_path))
            byte_ratios, cpu_ratios = [], []
            for index in range(args.rounds):
                plain = _one(server, known, key, args.seconds, args.interval, compress=False)
                packed = _one(server, known, key, args.seconds, args.interval, compress=True)
                byte_ratios.append(packed[0] / plain[0])
                cpu_ratios.append(packed[1] / plain[1] if plain[1] else float("nan"))
                print(f"round {index + 1}: host sent {plain[0]} B plain, {packed[0]} B compressed "
                      f"({byte_ratios[-1]:.3f}); workbench CPU {plain[1]:.2f} s plain, {packed[1]:.2f} s "
                      f"compressed ({cpu_ratios[-1]:.2f})")
        finally:
            server.stop()
    for name, ratios in (("bytes compressed / plain", byte_ratios), ("CPU compressed / plain", cpu_ratios)):
        print(f"{name}: min {min(ratios):.3f}  median {statistics.median(ratios):.3f}  max {max(ratios):.3f}")
    print(f"{args.seconds:g} s monitors at {args.interval:g} s ticks; load average before "
          f"{load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
