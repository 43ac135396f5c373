"""The Redis side of the dbload test against real Redis servers: the machine's (127.0.0.1:6379, database 15,
a scratch key prefix) and one started here (for CLIENT PAUSE, a password and the server's own command counts,
which must not disturb other users of the machine's server)."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from remote.agent import dbload_redis, redis_benchmark_run, resp_load, resp_wire
from remote.agent.run_context import Cancelled, EventWriter, RunContext
from tests.fixtures.leftovers import scratch_name

pytestmark = pytest.mark.integration

SHARED = ("127.0.0.1", 6379)
DB = 15


def _answers(host: str, port: int) -> bool:
    try:
        with resp_wire.Client(host, port, timeout=3.0) as client:
            return client.call("PING") == "PONG"
    except (OSError, resp_wire.RedisError):
        return False


@pytest.fixture(scope="module")
def shared_redis() -> str:
    if not _answers(*SHARED):
        _missing("no Redis on 127.0.0.1:6379 (run-tests.sh installs and starts redis-server)")
    return "{}:{}".format(*SHARED)


def _missing(message: str) -> None:
    """Under CI (run-tests.sh installs and starts Redis) a missing Redis fails the run; elsewhere it skips."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture()
def private_redis(tmp_path: Path):
    """A redis-server of this test's own on a free loopback port; stopped afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("redis-server is not installed (run-tests.sh installs it: Debian package redis-server)")
    port = _free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path), "--daemonize", "no"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not _answers("127.0.0.1", port):
            assert proc.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _ctx(tmp_path: Path) -> RunContext:
    return RunContext(EventWriter(str(tmp_path / "events.jsonl")), str(tmp_path), {})


def _params(target: str, **extra: object) -> dict:
    params = {"target": target, "redis_db": DB, "key_prefix": scratch_name("benchbay-test:") + ":",
              "keyspace": 2000, "value_size": 64, "pipeline": 1, "get_ratio": 0.7, "tool": "builtin"}
    params.update(extra)
    return params


def _keys(params: dict) -> int:
    return resp_load.count_keys(dbload_redis.config(params))


_BEFORE: set[str] = set()   # the worker's children when the test began: other tests' servers (sshd, MTAs)


@pytest.fixture(autouse=True)
def _children_before() -> None:
    """Runs before the test's own function fixtures (autouse first), after the session's and module's."""
    _BEFORE.clear()
    _BEFORE.update(_all_children())


def _all_children() -> list[str]:
    me = str(os.getpid())
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        name, _, rest = stat.partition(") ")
        name = name.split("(", 1)[1]
        state, ppid = rest.split()[:2]
        if ppid == me and state != "Z":
            out.append(f"{pid} {name}")
    return out


def _children() -> list[str]:
    """This process's living children that the test started (the load's workers, redis-benchmark), as 'pid
    name'; the fixture's redis-server is not the test's."""
    return [c for c in _all_children() if c not in _BEFORE and not c.endswith(" redis-server")]


class Ticks:
    def __init__(self, on_tick=None) -> None:
        self.seen: list[tuple] = []
        self.on_tick = on_tick

    def __call__(self, second, t, ops, lat_ms, errors, retries) -> None:
        self.seen.append((second, t, dict(ops), lat_ms, errors, retries))
        if self.on_tick is not None:
            self.on_tick(second)


def _server_calls(target: str) -> int:
    host, port = resp_wire.parse_target(target)
    with resp_wire.Client(host, port) as client:
        info = client.info("commandstats")
    return sum(int(dict(kv.split("=") for kv in info.get(f"cmdstat_{cmd}", "calls=0").split(","))["calls"])
               for cmd in ("get", "set"))


# (1, 1.0) and (1, 0.0): one connection sending one command, the generator's hot path
@pytest.mark.parametrize(("clients", "get_ratio"), [(6, 0.7), (1, 1.0), (1, 0.0)])
def test_builtin_counts_per_second_add_up_to_what_the_server_served(private_redis: str, tmp_path: Path,
                                                                   clients: int, get_ratio: float) -> None:
    params = _params(private_redis, pipeline=4, get_ratio=get_ratio)
    ctx = _ctx(tmp_path)
    try:
        facts = dbload_redis.prepare_redis(ctx, params)
        assert facts["keys"] == 2000 and _keys(params) == 2000
        host, port = resp_wire.parse_target(private_redis)
        with resp_wire.Client(host, port) as client:
            client.call("CONFIG", "RESETSTAT")
        ticks = Ticks()
        out = dbload_redis.run_redis_step(ctx, params, 1, clients, 3, ticks)
        served = _server_calls(private_redis)
    finally:
        assert ctx.cleanup() == []
    assert out["engine"] == "builtin RESP" and out["tool_total"] is None
    assert [s for s, *_ in ticks.seen] == [1, 2, 3]
    assert [t - ticks.seen[0][1] for _, t, *_ in ticks.seen] == pytest.approx([0.0, 1.0, 2.0])
    assert [ops for _, _, ops, *_ in ticks.seen] == [{"get": g, "set": s} for g, s in zip(
        out["per_second_by_op"]["get"], out["per_second_by_op"]["set"], strict=True)]
    assert out["per_second"] == [ops["get"] + ops["set"] for _, _, ops, *_ in ticks.seen]
    counted = sum(out["per_second"])
    assert counted > 0 and out["errors"] == 0
    # the server served every counted request; what it served beyond them was in flight at the end
    assert 0 <= served - counted <= clients * 4, (served, counted)
    gets = sum(out["per_second_by_op"]["get"])
    assert 0.55 < gets / counted < 0.85 if get_ratio == 0.7 else gets == counted * get_ratio
    for op in [o for o, share in (("get", get_ratio), ("set", 1 - get_ratio)) if share]:
        assert 0 < out["p50_ms"][op] <= out["p99_ms"][op] <= out["p999_ms"][op]
    assert _keys(params) == 0


def test_constant_rate_counts_latency_from_the_intended_start(private_redis: str, tmp_path: Path) -> None:
    """CLIENT PAUSE stalls the server for 1 s: at a constant rate the requests meant for that second are still
    made (the count holds) and their latency includes the stall."""
    rate, seconds = 300, 4
    params = _params(private_redis, rate=rate, get_ratio=0.5)
    ctx = _ctx(tmp_path)
    host, port = resp_wire.parse_target(private_redis)
    paused = []

    def pause(second: int) -> None:
        if second == 1:
            with resp_wire.Client(host, port) as client:
                client.call("CLIENT", "PAUSE", 1000)
            paused.append(time.time())

    try:
        dbload_redis.prepare_redis(ctx, params)
        ticks = Ticks(pause)
        out = dbload_redis.run_redis_step(ctx, params, 1, 3, seconds, ticks)
    finally:
        assert ctx.cleanup() == []
    assert paused
    total = sum(out["per_second"])
    # ~rate x seconds: the stalled second's requests were made late, not skipped (the last moments of the
    # step may still be in flight)
    assert total >= 0.9 * rate * seconds, out["per_second"]
    worst = max(max(lat[op]["p99"] or 0.0 for op in ("get", "set")) for _, _, _, lat, *_ in ticks.seen)
    assert worst >= 700.0, [lat for *_, lat, _, _ in ticks.seen]
    assert max(out["p999_ms"].values()) >= 800.0
    # before the pause the server answered at once
    first = ticks.seen[0][3]
    assert max(first[op]["p50"] for op in ("get", "set")) < 200.0


@pytest.mark.parametrize("get_ratio", [0.7, 1.0])   # 1.0: one command, the one-connection hot path
def test_a_closed_loop_shows_a_stall_as_fewer_requests(private_redis: str, tmp_path: Path, get_ratio: float) -> None:
    """The contrast: without a rate, one client waits for each reply, so the paused second has fewer requests
    (and the loop still reports every second while nothing comes back)."""
    params = _params(private_redis, get_ratio=get_ratio)
    ctx = _ctx(tmp_path)
    host, port = resp_wire.parse_target(private_redis)

    def pause(second: int) -> None:
        if second == 1:
            with resp_wire.Client(host, port) as client:
                client.call("CLIENT", "PAUSE", 1500)

    try:
        dbload_redis.prepare_redis(ctx, params)
        ticks = Ticks(pause)
        out = dbload_redis.run_redis_step(ctx, params, 1, 1, 4, ticks)
    finally:
        assert ctx.cleanup() == []
    assert [s for s, *_ in ticks.seen] == [1, 2, 3, 4]
    assert min(out["per_second"][1:3]) < 0.5 * out["per_second"][0], out["per_second"]


def test_no_keys_left_after_a_step_on_the_machines_redis(shared_redis: str, tmp_path: Path) -> None:
    params = _params(shared_redis, pipeline=16)
    ctx = _ctx(tmp_path)
    try:
        dbload_redis.prepare_redis(ctx, params)
        out = dbload_redis.run_redis_step(ctx, params, 1, 4, 2, Ticks())
        assert _keys(params) == 2000
    finally:
        assert ctx.cleanup() == []
    assert sum(out["per_second"]) > 0
    assert _keys(params) == 0
    assert _children() == []


def test_no_keys_or_workers_left_after_a_cancel(shared_redis: str, tmp_path: Path) -> None:
    params = _params(shared_redis)
    ctx = _ctx(tmp_path)
    ticks = Ticks(lambda second: ctx.request_stop("cancelled"))
    try:
        dbload_redis.prepare_redis(ctx, params)
        with pytest.raises(Cancelled):
            dbload_redis.run_redis_step(ctx, params, 1, 4, 30, ticks)
    finally:
        assert ctx.cleanup() == []
    assert len(ticks.seen) == 1
    assert _keys(params) == 0
    assert _children() == []


def test_a_cancel_during_the_fill_leaves_no_keys(shared_redis: str, tmp_path: Path) -> None:
    params = _params(shared_redis, keyspace=3000000, value_size=16)
    ctx = _ctx(tmp_path)
    timer = threading.Timer(0.5, ctx.request_stop, args=("cancelled",))
    timer.start()
    try:
        with pytest.raises(Cancelled):
            dbload_redis.prepare_redis(ctx, params)
    finally:
        timer.cancel()
        assert ctx.cleanup() == []
    assert _keys(params) == 0


def test_a_prefix_in_use_is_refused_and_left_alone(shared_redis: str, tmp_path: Path) -> None:
    params = _params(shared_redis)
    cfg = dbload_redis.config(params)
    with resp_wire.Client(cfg["host"], cfg["port"], db=DB) as client:
        client.call("SET", cfg["prefix"] + b"theirs", "keep me")
        try:
            ctx = _ctx(tmp_path)
            with pytest.raises(RuntimeError, match="already has 1 key"):
                dbload_redis.prepare_redis(ctx, params)
            assert ctx.cleanup() == []
            assert client.call("GET", cfg["prefix"] + b"theirs") == b"keep me"
        finally:
            client.call("DEL", cfg["prefix"] + b"theirs")


def test_redis_benchmark_step(private_redis: str, tmp_path: Path) -> None:
    if redis_benchmark_run.version() is None:
        _missing("redis-benchmark is not installed (Debian package redis-tools)")
    params = _params(private_redis, tool="redis-benchmark", get_ratio=0.5)
    ctx = _ctx(tmp_path)
    ticks = Ticks()
    try:
        dbload_redis.prepare_redis(ctx, params)
        out = dbload_redis.run_redis_step(ctx, params, 1, 4, 3, ticks)
    finally:
        assert ctx.cleanup() == []
    assert out["engine"] == "redis-benchmark " + redis_benchmark_run.version()
    assert out["clients_by_op"] == {"get": 2, "set": 2}
    assert 1 <= len(ticks.seen) <= 3 and len(out["per_second"]) == len(ticks.seen)
    for op in ("get", "set"):
        report = out["tool_reports"][op]
        assert report["clients"] == 2 and report["requests"] == out["requests"][op]
        assert out["p99_ms"][op] == report["p99_ms"] and out["p50_ms"][op] <= out["p99_ms"][op]
        assert all(ops[op] > 0 for _, _, ops, *_ in ticks.seen)
    assert out["tool_total"] == pytest.approx(sum(r["throughput"] for r in out["tool_reports"].values()))
    assert _keys(params) == 0   # its SETs wrote under the prefix too
    assert _children() == []


def test_a_password_goes_over_the_socket_only(private_redis: str, tmp_path: Path) -> None:
    host, port = resp_wire.parse_target(private_redis)
    secret = "pw-" + os.urandom(6).hex()
    with resp_wire.Client(host, port) as client:
        client.call("CONFIG", "SET", "requirepass", secret)
    params = _params(private_redis, tool="auto", password=secret)
    assert dbload_redis.redis_tool(params)[0] == "builtin RESP"
    seen_in_ps = []

    def look(second: int) -> None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if secret.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    seen_in_ps.append(pid)
            except OSError:
                pass

    ctx = _ctx(tmp_path)
    try:
        dbload_redis.prepare_redis(ctx, params)
        out = dbload_redis.run_redis_step(ctx, params, 1, 2, 2, Ticks(look))
    finally:
        assert ctx.cleanup() == []
    assert sum(out["per_second"]) > 0 and not seen_in_ps
    assert _keys(params) == 0
    wrong = dict(params, password="not-it")
    with pytest.raises(RuntimeError, match="refused the login"):
        dbload_redis.prepare_redis(_ctx(tmp_path), wrong)
    assert secret not in (tmp_path / "events.jsonl").read_text()


@pytest.mark.parametrize(("clients", "get_ratio"), [(3, 0.7), (1, 1.0)])   # (1, 1.0): the one-connection hot path
def test_a_server_that_goes_away_mid_step(private_redis: str, tmp_path: Path, clients: int, get_ratio: float) -> None:
    """The step runs to its end counting errors and reconnect attempts; the cleanup says what it could not do."""
    host, port = resp_wire.parse_target(private_redis)
    with resp_wire.Client(host, port) as client:
        pid = int(client.info("server")["process_id"])
    params = _params(private_redis, get_ratio=get_ratio)
    ctx = _ctx(tmp_path)

    def kill(second: int) -> None:
        if second == 1:
            os.kill(pid, signal.SIGKILL)

    try:
        dbload_redis.prepare_redis(ctx, params)
        out = dbload_redis.run_redis_step(ctx, params, 1, clients, 4, Ticks(kill))
    finally:
        failed = ctx.cleanup()
    assert out["per_second"][0] > 0 and out["per_second"][-1] == 0
    assert out["errors"] >= 1 and out["retries"] >= 1
    assert sum(map(sum, out["errors_per_second_by_op"].values())) == out["errors"]
    assert len(failed) == 1 and "could not be deleted" in failed[0] and "--scan --pattern" in failed[0]
    assert _children() == []


def test_several_client_hosts_can_start_together(private_redis: str, tmp_path: Path) -> None:
    """start_at: the first second begins at the given wall-clock time, not when the connections are up."""
    params = _params(private_redis)
    ctx = _ctx(tmp_path)
    ticks = Ticks()
    try:
        dbload_redis.prepare_redis(ctx, params)
        start_at = time.time() + 2.0
        dbload_redis.run_redis_step(ctx, params, 1, 2, 2, ticks, start_at=start_at)
    finally:
        assert ctx.cleanup() == []
    assert [t for _, t, *_ in ticks.seen] == pytest.approx([start_at + 1, start_at + 2], abs=0.05)
