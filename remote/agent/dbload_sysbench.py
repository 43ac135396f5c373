"""MySQL/MariaDB under load with sysbench (oltp_read_write, oltp_point_select, oltp_write_only).

The figures are sysbench's own: its --report-interval=1 lines give each second's transactions, queries
by kind (r/w/o) and p99 latency (--percentile=99); the step totals are its closing statistics, and the
p50 and p99.9 of the step come from the latency histogram it prints (--histogram=on), the same buckets
its own 99th percentile is read from. The password goes into option files (mode 0600) in the run
directory that sysbench (--config-file) and the mysql client (--defaults-extra-file) read: never argv.
"""
import os
import re
import shutil
import subprocess
from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from .common import one_line
from .dbload_pgbench import DbLoadError
from .dbload_stats import PERCENTILES, percentile

WORKLOADS = ("oltp_read_write", "oltp_point_select", "oltp_write_only")
MISSING_SYSBENCH = "dbload: sysbench not found on this host: install the Debian package sysbench"
MISSING_MYSQL = ("dbload: the mysql client not found on this host: install the Debian package mariadb-client "
                 "(or default-mysql-client)")
TABLES = 4
BYTES_PER_ROW = 230.0   # an sbtest row with its primary key and k index, as InnoDB stores it
INTERVAL = re.compile(r"^\[\s*(?P<s>\d+)s \] thds: (?P<thds>\d+) tps: (?P<tps>[0-9.]+) qps: (?P<qps>[0-9.]+) "
                      r"\(r/w/o: (?P<r>[0-9.]+)/(?P<w>[0-9.]+)/(?P<o>[0-9.]+)\) "
                      r"lat \(ms,(?P<pct>[0-9.]+)%\): (?P<lat>[0-9.]+) err/s:? (?P<err>[0-9.]+) "
                      r"reconn/s: (?P<reconn>[0-9.]+)")
TOTALS = {"transactions": re.compile(r"^transactions:\s+(\d+)\s+\(([0-9.]+) per sec\.\)"),
          "queries": re.compile(r"^queries:\s+(\d+)\s+\(([0-9.]+) per sec\.\)"),
          "ignored_errors": re.compile(r"^ignored errors:\s+(\d+)"),
          "reconnects": re.compile(r"^reconnects:\s+(\d+)"),
          "read": re.compile(r"^read:\s+(\d+)$"), "write": re.compile(r"^write:\s+(\d+)$"),
          "other": re.compile(r"^other:\s+(\d+)$"),
          "lat_min_ms": re.compile(r"^min:\s+([0-9.]+)$"), "lat_avg_ms": re.compile(r"^avg:\s+([0-9.]+)$"),
          "lat_max_ms": re.compile(r"^max:\s+([0-9.]+)$"),
          "lat_p99_ms": re.compile(r"^99th percentile:\s+([0-9.]+)$"),
          "total_time_s": re.compile(r"^total time:\s+([0-9.]+)s$")}
QUEUE = re.compile(r"^\[\s*(\d+)s \] queue length: (\d+), concurrency: (\d+)")
RATE_LATENCY = ("sysbench --rate times each transaction from when a worker takes it off sysbench's queue, not from "
                "its scheduled start: a backlog shows as the queue length, not as latency (pgbench -R counts from "
                "the scheduled start)")
HISTOGRAM = re.compile(r"^\s*([0-9.]+) \|\**\s+(\d+)$")


def tool_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=30).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return "sysbench"
    match = re.search(r"sysbench ([0-9][0-9.]*)", out)
    return "sysbench " + match.group(1) if match else "sysbench"


def parse_interval(line: str) -> Optional[Dict[str, Any]]:
    match = INTERVAL.match(line.strip())
    if not match:
        return None
    out = {k: float(match.group(k)) for k in ("tps", "qps", "r", "w", "o", "lat", "err", "reconn", "pct")}
    out.update(second=int(match.group("s")), threads=int(match.group("thds")))   # type: ignore[arg-type]
    return out


def parse_totals(text: str) -> Dict[str, Any]:
    """sysbench's closing statistics; transactions and queries as (count, per second)."""
    out = {}   # type: Dict[str, Any]
    for line in text.splitlines():
        line = line.strip()
        for key, pattern in TOTALS.items():
            match = pattern.match(line)
            if match and key not in out:
                groups = match.groups()
                out[key] = (int(groups[0]), float(groups[1])) if len(groups) == 2 else (
                    float(groups[0]) if "." in groups[0] else int(groups[0]))
    return out


def parse_histogram(text: str) -> List[Tuple[float, int]]:
    return [(float(m.group(1)), int(m.group(2))) for m in map(HISTOGRAM.match, text.splitlines()) if m]


def histogram_percentiles(buckets: List[Tuple[float, int]]) -> Dict[str, Optional[float]]:
    """p50, p99, p99.9 of sysbench's histogram: the first bucket whose running count reaches the rank."""
    values = []   # type: List[float]
    for value, count in buckets:
        values.extend([value] * count)
    return {name: percentile(values, fraction) for name, fraction in PERCENTILES}


def mysql_error(stderr: str) -> str:
    """The server's words from the mysql client's error ("ERROR 1045 (28000): Access denied ...")."""
    line = one_line(stderr)
    return re.sub(r"^(?:mysql: \[Warning\].*?\s)?ERROR \d+ \([^)]*\)(?: at line \d+)?:\s*", "", line)


def _quote_option(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_private(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


class SysbenchEngine:
    """The MySQL/MariaDB side of one dbload run: option files, scratch database, sysbench prepare, steps."""

    def __init__(self, ctx: Any, params: Dict[str, Any]) -> None:
        sysbench, mysql = shutil.which("sysbench"), shutil.which("mysql") or shutil.which("mariadb")
        if not sysbench:
            raise DbLoadError(MISSING_SYSBENCH)
        if not mysql:
            raise DbLoadError(MISSING_MYSQL)
        self.ctx = ctx
        self.params = params
        self.sysbench, self.mysql = sysbench, mysql
        self.engine = tool_version(sysbench)
        if params.get("rate"):
            ctx.warning("dbload: " + RATE_LATENCY)
        self.client_cnf = os.path.join(ctx.run_dir, "dbload-client.cnf")
        self.sysbench_cfg = os.path.join(ctx.run_dir, "dbload-sysbench.cfg")
        password = params.get("password", "")
        lines = ["[client]", "host=" + params["host"], "port={}".format(params["port"]), "user=" + params["user"],
                 "protocol=TCP", "connect-timeout=10"]
        if password:
            lines.append("password=" + _quote_option(password))
        ctx.add_cleanup_path(self.client_cnf)
        write_private(self.client_cnf, "\n".join(lines) + "\n")
        self.database = ""
        self.table_size = 0
        self.server_version = ""
        self.env = dict(os.environ)
        for key in ("MYSQL_PWD", "MYSQL_HOST", "MYSQL_TCP_PORT"):
            self.env.pop(key, None)

    def _write_sysbench_cfg(self) -> None:
        params = self.params
        lines = ["db-driver=mysql", "mysql-host=" + params["host"], "mysql-port={}".format(params["port"]),
                 "mysql-user=" + params["user"], "mysql-db=" + self.database]
        if params.get("password"):
            lines.append("mysql-password=" + params["password"])
        self.ctx.add_cleanup_path(self.sysbench_cfg)
        write_private(self.sysbench_cfg, "\n".join(lines) + "\n")

    def sql(self, sql: str, what: str) -> str:
        code, out, err = self._sql(sql)
        if code != 0:
            raise DbLoadError("dbload: {} on MySQL {}:{}: {}".format(what, self.params["host"], self.params["port"],
                                                                     mysql_error(err)))
        return out

    def _sql(self, sql: str) -> Tuple[int, str, str]:
        argv = [self.mysql, "--defaults-extra-file=" + self.client_cnf, "-N", "-B", "-e", sql]
        proc = self.ctx.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        out, err = proc.communicate()
        self.ctx.check()
        return proc.returncode, out.decode("utf-8", "replace").strip(), err.decode("utf-8", "replace")

    def drop_quietly(self, database: str) -> None:
        """For the cleanup: not through ctx.popen (it refuses once the run is stopping)."""
        argv = [self.mysql, "--defaults-extra-file=" + self.client_cnf, "-N", "-B", "-e",
                "DROP DATABASE IF EXISTS `{}`".format(database)]
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=self.env, timeout=120)
        except subprocess.TimeoutExpired:
            raise RuntimeError("the scratch database {0} is left on the server (the drop took over 120 s); remove "
                               "it with DROP DATABASE `{0}`".format(database)) from None
        if proc.returncode != 0:
            raise RuntimeError("the scratch database {0} is left on the server ({1}); remove it with DROP DATABASE "
                               "`{0}`".format(database, one_line(proc.stderr.decode("utf-8", "replace"))))

    def other_sessions(self) -> Optional[int]:
        """Other sessions in the scratch database (several client hosts: client 0 drops it once they are gone);
        None when the server cannot say."""
        sql = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '{}' AND ID <> CONNECTION_ID()"
        argv = [self.mysql, "--defaults-extra-file=" + self.client_cnf, "-N", "-B", "-e", sql.format(self.database)]
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  env=self.env, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        out = proc.stdout.decode("utf-8", "replace").strip()
        return int(out) if proc.returncode == 0 and out.isdigit() else None

    def prepare(self, database: str, reuse: bool, table_size: int) -> Dict[str, Any]:
        code, out, err = self._sql("SELECT VERSION()")
        if code != 0:
            raise DbLoadError("dbload: cannot log in to MySQL at {}:{} as {}: {}; check target, user and password, "
                              "and that the server lets this host in (bind-address, a user for this host)".format(
                                  self.params["host"], self.params["port"], self.params["user"], mysql_error(err)))
        self.server_version = out
        self.database = database
        exists = self.sql("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '{}'".format(
            database), "looking for the database") != "0"
        if reuse:
            if not exists:
                raise DbLoadError("dbload: the database {} does not exist; leave out reuse_database to let the test "
                                  "make a scratch one".format(database))
            found = self.sql("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{}' AND "
                             "TABLE_NAME LIKE 'sbtest%'".format(database), "looking for sysbench's tables")
            if found == "0":
                raise DbLoadError("dbload: the database {} has no sysbench tables (sbtest1 ...): fill it with "
                                  "sysbench prepare first, or leave out reuse_database".format(database))
            self.tables = int(found)
            self.table_size = int(self.sql("SELECT COUNT(*) FROM `{}`.sbtest1".format(database),
                                           "reading the table size") or 0)
            self._write_sysbench_cfg()
            return self.info()
        if exists:
            raise DbLoadError("dbload: the database {} already exists and this test did not create it; give "
                              "reuse_database=yes to load it as it is, or name another".format(database))
        self.ctx.add_cleanup_callback(lambda: self.drop_quietly(database))
        self.sql("CREATE DATABASE `{}`".format(database), "creating the scratch database")
        self.tables, self.table_size = TABLES, table_size
        self._write_sysbench_cfg()
        threads = max(1, min(TABLES, os.cpu_count() or 1))
        argv = self._argv("prepare", threads)
        proc = self.ctx.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self.env)
        out, _ = proc.communicate()
        self.ctx.check()
        if proc.returncode != 0:
            raise DbLoadError("dbload: sysbench prepare failed: {}".format(_fatal(out.decode("utf-8", "replace"))))
        return self.info()

    tables = TABLES

    def server(self) -> str:
        return ("MariaDB " if "mariadb" in self.server_version.lower() else "MySQL ") + self.server_version

    def info(self) -> Dict[str, Any]:
        return {"server": self.server(), "database": self.database, "tables": self.tables,
                "table_size": self.table_size,
                "data_mb": round(self.tables * self.table_size * BYTES_PER_ROW / 1048576.0, 1)}

    def _argv(self, command: str, threads: int, *extra: str) -> List[str]:
        return [self.sysbench, "--config-file=" + self.sysbench_cfg, self.params["workload"],
                "--tables={}".format(self.tables), "--table-size={}".format(self.table_size),
                "--threads={}".format(threads)] + list(extra) + [command]

    def parallel(self, clients: int) -> int:
        """Threads sysbench runs for `clients` connections (one each)."""
        return max(1, clients)

    def run_step(self, step: int, clients: int, seconds: int,
                 emit_tick: "Callable[[Dict[str, Any]], None]") -> Dict[str, Any]:
        import time
        extra = ["--time={}".format(seconds), "--report-interval=1", "--percentile=99", "--histogram=on"]
        if self.params.get("rate"):
            extra.append("--rate={}".format(max(1, int(round(self.params["rate"])))))   # 0 would be no limit
        proc = self.ctx.popen(self._argv("run", clients, *extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=self.env)
        ticks = []     # type: List[Dict[str, Any]]
        lines = []     # type: List[str]
        queue = []     # type: List[int]
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            lines.append(line)
            waiting = QUEUE.match(line.strip())
            if waiting:
                queue.append(int(waiting.group(2)))
            parsed = parse_interval(line)
            if parsed is None:
                continue
            tick = {"second": parsed["second"], "t": time.time(),
                    "ops": {"read": parsed["r"], "write": parsed["w"], "other": parsed["o"], "txn": parsed["tps"]},
                    "lat_ms": {"txn": {"p50": None, "p99": parsed["lat"], "p999": None}},
                    "errors": parsed["reconn"], "retries": parsed["err"]}
            ticks.append(tick)
            emit_tick(tick)
        proc.wait()
        self.ctx.check()
        text = "\n".join(lines)
        if proc.returncode != 0:
            raise DbLoadError("dbload: sysbench failed with {} clients: {}".format(clients, _fatal(text)))
        totals = parse_totals(text)
        from_histogram = histogram_percentiles(parse_histogram(text))
        lat = {"p50": from_histogram["p50"], "p99": totals.get("lat_p99_ms"), "p999": from_histogram["p999"],
               "source": "sysbench (p99 as printed; p50 and p99.9 from its --histogram)"}
        txn = totals.get("transactions") or (None, None)
        printed = [line for line in lines if parse_interval(line) or ":" in line and not HISTOGRAM.match(line)]
        return {"engine": self.engine, "per_second": ticks, "lat_ms": {"txn": lat},
                "errors": int(totals.get("reconnects") or 0), "retries": int(totals.get("ignored_errors") or 0),
                "tool_total": txn[1], "total_op": "txn",
                "extra": {"tool_output": [line for line in printed if line.strip()], "transactions": txn[0],
                          "queries": (totals.get("queries") or (None, None))[0],
                          "queries_per_s": (totals.get("queries") or (None, None))[1],
                          "lat_avg_ms": totals.get("lat_avg_ms"), "lat_max_ms": totals.get("lat_max_ms"),
                          "tables": self.tables, "table_size": self.table_size,
                          "server": self.server(), "per_second_queue_length": queue,
                          "latency_from": ("worker start (queue time left out)" if self.params.get("rate")
                                           else "transaction start")}}


def _fatal(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if "FATAL" in line or "error" in line.lower():
            return one_line(line)
    return one_line(lines[-1]) if lines else "no output"
