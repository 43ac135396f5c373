"""PostgreSQL under load with pgbench: the scratch database, pgbench -i, and one step of the client sweep.

The figures are pgbench's own: throughput per second is what its --progress=1 lines print (with
--progress-timestamp, so each interval has an end on the host's clock), the step total is its closing
"tps = ..." line, and the latency percentiles come from its per-transaction --log files in the run
directory, binned by the progress lines' times. Under -R (constant rate) pgbench counts each
transaction's latency from its scheduled start, so a stalled server cannot hide behind fewer requests.
The connection goes in the children's environment (PGHOST, PGPORT, PGUSER, PGPASSWORD): no password on
a command line.
"""
import array
import glob
import math
import os
import re
import shutil
import subprocess
from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from .common import one_line
from .dbload_stats import percentiles_ms
from .restore_pg import Pg, error_line

BUILTIN = {"tpcb-like": "tpcb-like", "select-only": "select-only", "simple-update": "simple-update"}
MISSING_PGBENCH = ("dbload: pgbench not found on this host: install the Debian package postgresql-contrib "
                   "(it brings pgbench)")
MISSING_PSQL = "dbload: psql not found on this host: install the Debian package postgresql-client"
MB_PER_SCALE = 16.0   # pgbench_accounts grows ~16 MB (table and index) per scale unit
PROGRESS = re.compile(r"^progress: (?P<t>[0-9.]+) s, (?P<tps>[0-9.]+) tps, lat (?P<lat>[-0-9.naNinf]+) ms "
                      r"stddev (?P<sd>[-0-9.naNinf]+)(?P<rest>.*)$")
SUMMARY = {"tps": re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)"),
           "processed": re.compile(r"^number of transactions actually processed: (\d+)"),
           "failed": re.compile(r"^number of failed transactions: (\d+)"),
           "lat_avg_ms": re.compile(r"^latency average = ([0-9.]+) ms"),
           "lat_stddev_ms": re.compile(r"^latency stddev = ([0-9.]+) ms"),
           "scale": re.compile(r"^scaling factor: (\d+)"),
           "retried": re.compile(r"^number of transactions retried: (\d+)"),
           "retries": re.compile(r"^total number of retries: (\d+)")}
MAX_TRIES_SINCE = 15   # pgbench's --max-tries (retries of serialization and deadlock failures) came with 15
INIT_PROGRESS = re.compile(r"(\d+) of (\d+) tuples")


class DbLoadError(Exception):
    """One clear line: what went wrong and what to do."""


def pgbench_error(lines: List[str]) -> str:
    """The line that says why pgbench failed: the server's words, else pgbench's first error."""
    text = "\n".join(lines)
    if re.search(r"(?:FATAL|ERROR):", text):
        return error_line(text)
    for line in lines:
        match = re.match(r"^pgbench: error:\s*(.*)$", line.strip())
        if match:
            return one_line(match.group(1))
    return error_line(text)


def tool_version(path: str) -> str:
    """ "pgbench 15.20" from `pgbench --version` ("pgbench (PostgreSQL) 15.20 (Debian ...)")."""
    try:
        out = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=30).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return "pgbench"
    match = re.search(r"\)\s*([0-9][0-9.]*\w*)", out)
    return "pgbench " + match.group(1) if match else "pgbench"


def tool_major(engine: str) -> int:
    """15 from "pgbench 15.20"; 0 when the version is not known."""
    match = re.match(r"^pgbench (\d+)", engine)
    return int(match.group(1)) if match else 0


def parse_progress(line: str) -> Optional[Dict[str, Any]]:
    """One --progress line: t (epoch s with --progress-timestamp), tps, lat_ms, stddev_ms, failed, retried,
    retries, lag_ms, skipped (those pgbench prints)."""
    match = PROGRESS.match(line.strip())
    if not match:
        return None
    out = {"t": float(match.group("t")), "tps": float(match.group("tps")),
           "lat_ms": _number(match.group("lat")), "stddev_ms": _number(match.group("sd")),
           "failed": 0, "retried": 0, "retries": 0, "lag_ms": None, "skipped": 0}   # type: Dict[str, Any]
    for part in match.group("rest").split(","):
        words = part.split()
        if len(words) == 2 and words[1] in ("failed", "retried", "retries", "skipped"):
            out[words[1]] = int(words[0])
        elif len(words) == 3 and words[0] == "lag":
            out["lag_ms"] = _number(words[1])
    return out


def _number(text: str) -> Optional[float]:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_summary(text: str) -> Dict[str, Any]:
    """The closing figures pgbench printed on stdout (tps, processed, failed, latency average ...)."""
    out = {}   # type: Dict[str, Any]
    for line in text.splitlines():
        for key, pattern in SUMMARY.items():
            match = pattern.match(line.strip())
            if match:
                value = match.group(1)
                out[key] = float(value) if "." in value else int(value)
    return out


def parse_log_line(line: str) -> Optional[Tuple[float, Optional[float]]]:
    """(completion time in epoch seconds, latency in microseconds or None for a failed/skipped one)."""
    fields = line.split()
    if len(fields) < 6:
        return None
    try:
        done = int(fields[4]) + int(fields[5]) / 1e6
    except ValueError:
        return None
    try:
        latency = float(fields[2])   # type: Optional[float]
    except ValueError:
        latency = None               # "failed" or "skipped" (pgbench 15)
    return done, latency


class LogTail:
    """pgbench's per-transaction log files of one step, read as they grow (pgbench buffers them)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.offsets = {}   # type: Dict[str, int]
        self.partial = {}   # type: Dict[str, bytes]
        self.latest = {}    # type: Dict[str, float]
        self.entries = []   # type: List[Tuple[float, Optional[float]]]   # those of intervals not yet ticked
        self.latencies = array.array("d")   # every latency of the step (us), compact: a long step has millions
        self.count = 0
        self.failed = 0

    def read(self) -> None:
        for path in sorted(glob.glob(glob.escape(self.prefix) + ".*")):
            with open(path, "rb") as handle:
                handle.seek(self.offsets.get(path, 0))
                data = self.partial.get(path, b"") + handle.read()
                self.offsets[path] = handle.tell()
            lines = data.split(b"\n")
            self.partial[path] = lines.pop()
            for raw in lines:
                entry = parse_log_line(raw.decode("ascii", "replace"))
                if entry:
                    self.entries.append(entry)
                    self.latest[path] = max(self.latest.get(path, 0.0), entry[0])
                    self.count += 1
                    if entry[1] is None:
                        self.failed += 1
                    else:
                        self.latencies.append(entry[1])

    def forget_until(self, t: float) -> None:
        """The intervals up to t are ticked: their transactions are only needed in the step's percentiles."""
        self.entries = [e for e in self.entries if e[0] > t]

    def complete_until(self) -> float:
        """Every file has a transaction that ended after this time: earlier intervals are complete."""
        return min(self.latest.values()) if self.latest else 0.0


def interval_ticks(progress: List[Dict[str, Any]], entries: List[Tuple[float, Optional[float]]],
                   first: int, last: int) -> List[Dict[str, Any]]:
    """Ticks for progress lines first..last-1 (0-based): pgbench's printed rate and the percentiles of the
    logged latencies of the transactions that ended in that interval."""
    ticks = []
    for index in range(first, last):
        line = progress[index]
        begin = progress[index - 1]["t"] if index else float("-inf")
        latencies = [lat for done, lat in entries if begin < done <= line["t"] and lat is not None]
        ticks.append({"second": index + 1, "t": line["t"], "ops": {"txn": line["tps"]},
                      "lat_ms": {"txn": percentiles_ms(latencies, 0.001)},
                      "errors": line["failed"] + line["skipped"], "retries": line["retries"],
                      "lat_avg_ms": line["lat_ms"], "lag_ms": line["lag_ms"]})
    return ticks


class PgbenchEngine:
    """The PostgreSQL side of one dbload run: connection, scratch database, data, steps."""

    def __init__(self, ctx: Any, params: Dict[str, Any]) -> None:
        pgbench, psql = shutil.which("pgbench"), shutil.which("psql")
        if not pgbench:
            raise DbLoadError(MISSING_PGBENCH)
        if not psql:
            raise DbLoadError(MISSING_PSQL)
        self.ctx = ctx
        self.params = params
        self.pgbench = pgbench
        self.pg = Pg(ctx, {"psql": psql}, password=params.get("password", ""))
        host, port = params["host"], params["port"]
        self.pg.env.update(PGHOST=host, PGPORT=str(port), PGUSER=params["user"], PGAPPNAME="benchbay-dbload")
        for key in ("PGDATABASE", "PGSERVICE", "PGOPTIONS"):
            self.pg.env.pop(key, None)
        self.engine = tool_version(pgbench)
        self.max_tries = int(params.get("max_tries", 1))
        if self.max_tries != 1 and tool_major(self.engine) < MAX_TRIES_SINCE:
            ctx.warning("dbload: {} has no --max-tries (pgbench {} and later have it): a transaction that fails on a "
                        "serialization or deadlock error counts as an error, without retries".format(
                            self.engine, MAX_TRIES_SINCE))
            self.max_tries = 1
        self.database = ""
        self.scale = 0
        self.server_version = ""

    def psql(self, dbname: str, sql: str, what: str) -> str:
        code, out, err = self.pg.run(self.pg.argv("psql", dbname, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                                  "-c", sql))
        if code != 0:
            raise DbLoadError("dbload: {} on PostgreSQL {}:{}: {}".format(what, self.params["host"],
                                                                          self.params["port"], error_line(err)))
        return out.strip()

    def prepare(self, database: str, reuse: bool, scale: int) -> Dict[str, Any]:
        ctx = self.ctx
        code, out, err = self.pg.run(self.pg.argv("psql", "postgres", "-X", "-A", "-t", "-c", "SHOW server_version"))
        if code != 0:
            raise DbLoadError("dbload: cannot log in to PostgreSQL at {}:{} as {}: {}; check target, user and "
                              "password, and that the server lets this host in (listen_addresses, pg_hba.conf)".format(
                                  self.params["host"], self.params["port"], self.params["user"], error_line(err)))
        self.server_version = out.strip()
        num = int(self.psql("postgres", "SHOW server_version_num", "reading the server version") or 0)
        self.database = database
        exists = self.psql("postgres", "SELECT count(*) FROM pg_database WHERE datname = '{}'".format(
            database.replace("'", "''")), "looking for the database") != "0"
        if reuse:
            if not exists:
                raise DbLoadError("dbload: the database {} does not exist on {}:{}; leave out reuse_database to "
                                  "let the test make a scratch one".format(database, self.params["host"],
                                                                           self.params["port"]))
            if self.params["workload"] in BUILTIN:
                found = self.psql(database, "SELECT count(*) FROM pg_class WHERE relname = 'pgbench_branches'",
                                  "looking for pgbench's tables")
                if found == "0":
                    raise DbLoadError("dbload: the database {} has no pgbench tables: fill it with pgbench -i "
                                      "first, or leave out reuse_database".format(database))
                self.scale = int(self.psql(database, "SELECT count(*) FROM pgbench_branches", "reading the scale"))
            return self.info()
        if exists:
            raise DbLoadError("dbload: the database {} already exists and this test did not create it; give "
                              "reuse_database=yes to load it as it is, or name another".format(database))
        force = num >= 130000
        ctx.add_cleanup_callback(lambda: self.pg.drop_quietly(database, force))
        self.psql("postgres", 'CREATE DATABASE "{}"'.format(database), "creating the scratch database")
        self.scale = scale
        self._init(database, scale)
        return self.info()

    def info(self) -> Dict[str, Any]:
        return {"server": "PostgreSQL " + self.server_version, "database": self.database, "scale": self.scale,
                "data_mb": round(self.scale * MB_PER_SCALE, 1)}

    def _init(self, database: str, scale: int) -> None:
        argv = [self.pgbench, "-i", "-s", str(scale), "-q", database]
        proc = self.ctx.popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.pg.env)
        tail = []   # type: List[str]
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").strip()
            tail = (tail + [line])[-20:]
            match = INIT_PROGRESS.search(line)
            if match and int(match.group(2)):
                self.ctx.progress("load", int(match.group(1)) / float(match.group(2)))
        proc.wait()
        self.ctx.check()
        if proc.returncode != 0:
            raise DbLoadError("dbload: pgbench -i -s {} failed: {}".format(scale, pgbench_error(tail)))

    def workload_args(self) -> List[str]:
        workload = self.params["workload"]
        if workload in BUILTIN:
            return ["-b", BUILTIN[workload]]
        return ["-f", workload.split(":", 1)[1]]

    def parallel(self, clients: int) -> int:
        """Threads pgbench runs for `clients` connections (its -j): the most CPUs it can keep busy."""
        return max(1, min(clients, os.cpu_count() or 1))

    def run_step(self, step: int, clients: int, seconds: int,
                 emit_tick: "Callable[[Dict[str, Any]], None]") -> Dict[str, Any]:
        run_dir = self.ctx.run_dir
        prefix = os.path.join(run_dir, "pgbench_step{}".format(step))
        out_path = os.path.join(run_dir, "pgbench_step{}_stdout.txt".format(step))   # not matched by prefix.*
        threads = self.parallel(clients)
        argv = [self.pgbench, "-n", "-c", str(clients), "-j", str(threads), "-T", str(seconds), "-P", "1",
                "--progress-timestamp", "-l", "--log-prefix=" + prefix] + self.workload_args()
        if self.params.get("rate"):
            argv += ["-R", "{:g}".format(self.params["rate"])]
        if self.max_tries != 1:
            argv.append("--max-tries={}".format(self.max_tries))
        argv.append(self.database)
        tail = LogTail(prefix)
        progress = []   # type: List[Dict[str, Any]]
        printed = []    # type: List[str]
        other = []      # type: List[str]
        ticks = []      # type: List[Dict[str, Any]]
        with open(out_path, "wb") as out:
            proc = self.ctx.popen(argv, stdout=out, stderr=subprocess.PIPE, env=self.pg.env)
            for raw in proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                parsed = parse_progress(line)
                if parsed is None:
                    other = (other + [line])[-20:]
                    continue
                printed.append(line)
                progress.append(parsed)
                tail.read()
                ready = sum(1 for p in progress if p["t"] < tail.complete_until())
                for tick in interval_ticks(progress, tail.entries, len(ticks), ready):
                    ticks.append(tick)
                    emit_tick(tick)
                if ticks:
                    tail.forget_until(progress[len(ticks) - 1]["t"])
            proc.wait()
        self.ctx.check()
        tail.read()
        for tick in interval_ticks(progress, tail.entries, len(ticks), len(progress)):
            ticks.append(tick)
            emit_tick(tick)
        with open(out_path, "r", encoding="utf-8", errors="replace") as handle:
            stdout = handle.read()
        for path in glob.glob(glob.escape(prefix) + ".*") + [out_path]:   # a long step's logs are large: gone
            os.unlink(path)
        summary = parse_summary(stdout)
        aborted = [line for line in other if " aborted " in line]
        if proc.returncode != 0 and not progress:
            raise DbLoadError("dbload: pgbench failed with {} clients: {}".format(
                clients, pgbench_error(other) if other else "exit status {}".format(proc.returncode)))
        if aborted:
            self.ctx.warning("dbload: pgbench step {} ({} clients): {} client(s) aborted: {}".format(
                step, clients, len(aborted), one_line(aborted[0])))
        lat = dict(percentiles_ms(tail.latencies, 0.001), source="pgbench per-transaction log")
        return {"engine": self.engine, "per_second": ticks, "lat_ms": {"txn": lat},
                "errors": int(summary.get("failed", tail.failed)) + len(aborted),
                "retries": int(summary.get("retries", sum(t["retries"] for t in ticks))),
                "tool_total": summary.get("tps"), "total_op": "txn",
                "extra": {"tool_output": printed + [line for line in stdout.splitlines() if line.strip()],
                          "transactions": summary.get("processed"), "logged_transactions": tail.count,
                          "aborted_clients": len(aborted), "max_tries": self.max_tries,
                          "retried_transactions": summary.get("retried"),
                          "lat_avg_ms": summary.get("lat_avg_ms"),
                          "per_second_lat_avg_ms": [t["lat_avg_ms"] for t in ticks],
                          "threads": threads, "scale": self.scale, "server": "PostgreSQL " + self.server_version,
                          "latency_from": "scheduled start" if self.params.get("rate") else "transaction start"}}
