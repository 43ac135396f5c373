"""Delay from a sample taken on a host to its frame on screen, over SSH on loopback.

    python benchmarks/sample_latency.py [--seconds 30] [--interval 1.0]

Starts a real OpenSSH test host on 127.0.0.41 (as the integration tests do), monitors it through
the same MonitorController and Dashboard the window uses (offscreen), and for every sample takes
(time of the first redraw frame that drew it) − (host time at the end of its interval). Host and
workbench share one clock here, so the difference is the real delay: sampler → file → SSH tail →
parse → signal → ring buffer → setData. Goal: below 1.5 × the interval.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QCoreApplication  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.gui.monitor_controller import MonitorController  # noqa: E402
from app.workbench import Workbench  # noqa: E402
from remote.hostspec import AUTH_KEY, HostSpec  # noqa: E402
from tests.fixtures.sshd import SshdServer, keygen  # noqa: E402
from widgets.dashboard import Dashboard  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        client_key = keygen(root / "client", "ed25519")
        authorized = root / "authorized"
        authorized.write_text(Path(str(client_key) + ".pub").read_text())
        server = SshdServer(root / "sshd", "latency", "127.0.0.41", authorized)
        server.start()
        (root / "ssh_config").write_text("")
        bench = Workbench(home=root / "home", db_url=f"sqlite:///{root / 'store.sqlite3'}",
                          ssh_config_path=root / "ssh_config", user_known_hosts=root / "known_hosts")
        try:
            bench.add_host(HostSpec(name="loopback", address=server.address, port=server.port,
                                    user=os.environ.get("USER") or "root", auth=AUTH_KEY, key_path=str(client_key)))
            bench.trust_host("loopback")
            delays = measure(app, bench, args.seconds, args.interval)
        finally:
            bench.close()
            server.stop()
    if not delays:
        print("no sample arrived", file=sys.stderr)
        return 1
    delays.sort()
    p95 = delays[min(len(delays) - 1, int(0.95 * len(delays)))]
    print(f"samples: {len(delays)} at interval {args.interval:g} s over SSH (127.0.0.41)")
    print(f"delay host→frame: median {statistics.median(delays) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
          f"max {delays[-1] * 1000:.0f} ms")
    print(f"max / interval: {delays[-1] / args.interval:.2f} (goal < 1.5)")
    return 0


def measure(app: QApplication, bench: Workbench, seconds: float, interval: float) -> list[float]:
    dashboard = Dashboard()
    dashboard.resize(1400, 900)
    dashboard.show()
    controller = MonitorController(bench, dashboard)
    waiting: list[float] = []      # host times of samples handed to the dashboard, not yet drawn
    delays: list[float] = []

    def on_sample(host: str, sample) -> None:
        if host not in dashboard.host_names():
            dashboard.add_host(host)
        dashboard.add_sample(host, sample)
        waiting.append(sample.t)

    controller.sample.connect(on_sample)
    group = dashboard.active_group
    original_frame = group.frame

    def timed_frame() -> int:
        calls = original_frame()
        if calls and waiting:
            now = time.time()
            delays.extend(now - t for t in waiting)
            waiting.clear()
        return calls

    group.frame = timed_frame          # the frame timer calls the bound attribute
    group._timer.timeout.disconnect()
    group._timer.timeout.connect(timed_frame)
    controller.start(["loopback"], interval=interval)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.002)
    controller.stop()
    controller.shutdown()
    QCoreApplication.processEvents()
    dashboard.close()
    return delays[1:]   # the first sample waits for the connection itself


if __name__ == "__main__":
    sys.exit(main())
