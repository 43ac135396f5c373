"""PostgreSQL side of the "restore" test: how to reach the server, run its client tools, read its answers.

The tools (psql, pg_dump, pg_restore) run as children through ctx.popen, so a cancel kills them.
A password never goes on a command line: it is handed to the children as PGPASSWORD in their
environment only, and a DSN that carries one is refused.
"""
import os
import re
import shutil
import subprocess
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments
from urllib.parse import quote, urlsplit, urlunsplit

from .common import one_line

TOOLS = ("psql", "pg_dump", "pg_restore")
SETTINGS = ("fsync", "synchronous_commit", "wal_level", "maintenance_work_mem", "shared_buffers")
CONNECT_TIMEOUT = "10"   # seconds: PGCONNECT_TIMEOUT for every child
CLEANUP_TIMEOUT = 60.0   # seconds a DROP DATABASE in a cleanup callback may take

UNREACHABLE_PATTERNS = ("connection refused", "no such file or directory", "could not translate host name",
                        "timeout expired", "could not connect", "network is unreachable", "no route to host",
                        "the database system is starting up", "the database system is shutting down")


class RestoreError(Exception):
    """One clear line: what went wrong with PostgreSQL."""


def is_uri(dsn: str) -> bool:
    return dsn.startswith("postgresql://") or dsn.startswith("postgres://")


def dsn_has_password(dsn: str) -> bool:
    if is_uri(dsn):
        parts = urlsplit(dsn)
        return parts.password is not None or re.search(r"(^|&)password=", parts.query) is not None
    return re.search(r"(^|\s)password\s*=", dsn) is not None


def dsn_for_db(dsn: str, dbname: str) -> str:
    """The same connection, another database (key=value: the last dbname wins in libpq)."""
    if is_uri(dsn):
        parts = urlsplit(dsn)
        return urlunsplit((parts.scheme, parts.netloc, "/" + quote(dbname), parts.query, parts.fragment))
    return "{} dbname='{}'".format(dsn.strip(), dbname.replace("\\", "\\\\").replace("'", "\\'"))


def classify(stderr: str) -> str:
    """"auth", "unreachable", "rights" or "other" for a failed client tool's error output."""
    low = stderr.lower()
    if any(p in low for p in ("password authentication failed", "no password supplied",
                              "peer authentication failed", "ident authentication failed",
                              "no pg_hba.conf entry")):
        return "auth"
    if re.search(r'role "[^"]*" does not exist', low):
        return "auth"
    if "permission denied" in low or "must be owner" in low or "must be superuser" in low:
        return "rights"
    if any(p in low for p in UNREACHABLE_PATTERNS):
        return "unreachable"
    return "other"


def error_line(stderr: str) -> str:
    """The server's own words from a tool's stderr: the FATAL/ERROR text when there is one."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        match = re.search(r"(?:FATAL|ERROR):\s+(.*)$", line)
        if match:
            return one_line(match.group(1))
    for line in lines:
        match = re.match(r"^(?:psql|pg_dump|pg_restore): error:\s*(.*)$", line)
        if match:
            return one_line(match.group(1))
    return one_line(lines[-1]) if lines else "no error output"


def parse_settings(text: str) -> Dict[str, str]:
    """`name|value` lines (psql -At) into a dict."""
    out = {}
    for line in text.splitlines():
        name, sep, value = line.partition("|")
        if sep and name.strip():
            out[name.strip()] = value.strip()
    return out


def find_tools(bindir: str) -> Tuple[Dict[str, str], List[str]]:
    """Paths of psql, pg_dump, pg_restore (in bindir when given, else on PATH) and what is missing."""
    found, missing = {}, []
    for tool in TOOLS:
        if bindir:
            path = os.path.join(bindir, tool)
            path = path if os.path.isfile(path) and os.access(path, os.X_OK) else None
        else:
            path = shutil.which(tool)
        if path:
            found[tool] = path
        else:
            missing.append(tool)
    return found, missing


class Pg:
    """How to run the tools against the server: a prefix (runuser/sudo), a target, an environment."""

    def __init__(self, ctx: Any, tools: Dict[str, str], dsn: str = "", password: str = "",
                 prefix: Optional[List[str]] = None) -> None:
        self.ctx = ctx
        self.tools = tools
        self.dsn = dsn
        self.prefix = list(prefix or [])
        env = dict(os.environ)
        env.pop("PGPASSWORD", None)
        env["PGCONNECT_TIMEOUT"] = CONNECT_TIMEOUT
        env["PGAPPNAME"] = "benchbay-restore"
        if password:
            env["PGPASSWORD"] = password   # the only place the password goes
        self.env = env

    def target(self, dbname: str) -> List[str]:
        return ["-d", dsn_for_db(self.dsn, dbname) if self.dsn else dbname]

    def argv(self, tool: str, dbname: str, *args: str) -> List[str]:
        return self.prefix + [self.tools[tool]] + list(args) + self.target(dbname)

    def run(self, argv: List[str], stdout: Any = subprocess.PIPE) -> Tuple[int, str, str]:
        proc = self.ctx.popen(argv, stdout=stdout, stderr=subprocess.PIPE, env=self.env)
        out, err = proc.communicate()
        self.ctx.check()   # a cancel killed the child: stop here, not with its error
        return proc.returncode, _text(out), _text(err)

    def psql(self, dbname: str, sql: str, what: str) -> str:
        code, out, err = self.run(self.argv("psql", dbname, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                            "-c", sql))
        if code != 0:
            raise RestoreError("restore: {}: {}".format(what, error_line(err)))
        return out

    def probe(self) -> Tuple[int, str, str]:
        return self.run(self.argv("psql", "postgres", "-X", "-A", "-t", "-c",
                                  "select current_setting('server_version_num')"))

    def drop_quietly(self, dbname: str, force: bool) -> None:
        """For cleanup callbacks: not through ctx.popen (it refuses once the run is stopping).

        A cancel can kill psql while the server still runs its CREATE DATABASE (a backend notices a gone
        client only when it next talks to it): a DROP then finds nothing, and the CREATE commits after it.
        So the backends still working on this database's name are ended first, and the drop is repeated
        until none is left."""
        busy = ("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                "AND (datname = '{0}' OR position('{0}' in query) > 0)".format(dbname))
        sql = 'DROP DATABASE IF EXISTS "{}"{}'.format(dbname, " WITH (FORCE)" if force else "")
        deadline = time.monotonic() + CLEANUP_TIMEOUT
        left = 'the scratch database {0} is left on the server ({1}); remove it with DROP DATABASE "{0}"'
        while True:
            argv = self.argv("psql", "postgres", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", busy,
                             "-c", sql, "-c", busy)
            try:
                proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, env=self.env, timeout=CLEANUP_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise RuntimeError(left.format(dbname, "psql did not finish the drop in {:.0f} s".format(
                    CLEANUP_TIMEOUT))) from None
            if proc.returncode < 0:
                raise RuntimeError(left.format(dbname, "psql was stopped by signal {}".format(-proc.returncode)))
            if proc.returncode != 0:
                raise RuntimeError(left.format(dbname, error_line(proc.stderr.decode("utf-8", "replace"))))
            counts = proc.stdout.decode("utf-8", "replace").split()
            if not counts or counts[-1] == "0" or time.monotonic() > deadline:
                return
            time.sleep(0.2)   # a backend was still at it after the drop: drop again once it has gone


def _text(data: Any) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")


def as_postgres_prefix() -> List[str]:
    """root without its own role: run the tools as the postgres OS user."""
    if shutil.which("runuser"):
        return ["runuser", "-u", "postgres", "--"]
    if shutil.which("sudo"):
        return ["sudo", "-n", "-u", "postgres", "--"]
    return []


def connect(ctx: Any, tools: Dict[str, str], dsn: str, password: str) -> Tuple[Optional[Pg], str]:
    """(Pg, "") when the server answers; (None, why) when it is unreachable (peer only: fall back).

    Raises RestoreError for a wrong password, a missing role or any other refusal.
    """
    pg = Pg(ctx, tools, dsn=dsn, password=password)
    code, _, err = pg.probe()
    if code == 0:
        return pg, ""
    kind = classify(err)
    if kind == "auth" and not dsn and os.geteuid() == 0:
        prefix = as_postgres_prefix()
        if prefix:
            pg = Pg(ctx, tools, prefix=prefix)
            code, _, err2 = pg.probe()
            if code == 0:
                return pg, ""
            err, kind = err2, classify(err2)
    if kind == "unreachable" and not dsn:
        return None, error_line(err)
    where = "the server in the DSN" if dsn else "the local server"
    if kind == "auth":
        advice = ("check the user in the DSN and the password, and the server's pg_hba.conf"
                  if dsn else "run the agent as root or as a user with a PostgreSQL role, or give a DSN")
        raise RestoreError("restore: PostgreSQL refused the login to {}: {}; {}".format(where, error_line(err),
                                                                                          advice))
    raise RestoreError("restore: cannot use PostgreSQL ({}): {}".format(where, error_line(err)))


def data_sql(size_mb: int, chunks: int = 0) -> Tuple[List[str], List[str], List[str], int]:
    """(create statements, load statements, constraint statements, total rows) for about size_mb."""
    budget = size_mb * 1024 * 1024
    # rough on-disk bytes per row (heap + its indexes) of each table, from measurement
    customers = max(int(budget * 0.10 / 150), 10)
    orders = max(int(budget * 0.30 / 170), 10)
    events = max(int(budget * 0.60 / 250), 10)
    create = [
        "CREATE TABLE customers (id integer NOT NULL, name text NOT NULL, email text NOT NULL)",
        "CREATE TABLE orders (id bigint NOT NULL, customer_id integer NOT NULL, amount numeric(12,2), "
        "note text, created timestamptz NOT NULL)",
        "CREATE TABLE events (id bigint NOT NULL, order_id bigint NOT NULL, kind smallint, payload text)",
    ]
    fills = [
        ("customers", customers, "INSERT INTO customers SELECT g, md5(random()::text), "
                                 "md5(g::text) || '@example.invalid' FROM generate_series({a}, {b}) g"),
        ("orders", orders, "INSERT INTO orders SELECT g, 1 + (g % " + str(customers) + "), "
                           "round((random() * 1000)::numeric, 2), md5(random()::text) || md5(random()::text), "
                           "now() - random() * interval '365 days' FROM generate_series({a}, {b}) g"),
        ("events", events, "INSERT INTO events SELECT g, 1 + (g % " + str(orders) + "), (random() * 20)::int, "
                           "md5(random()::text) || md5(random()::text) || md5(random()::text) || "
                           "substr(md5(random()::text), 1, (random() * 32)::int) FROM generate_series({a}, {b}) g"),
    ]
    load = []
    for _, rows, template in fills:
        parts = chunks or max(1, min(16, rows // 50000))
        step = (rows + parts - 1) // parts
        start = 1
        while start <= rows:
            end = min(rows, start + step - 1)
            load.append(template.format(a=start, b=end))
            start = end + 1
    constraints = [
        "ALTER TABLE customers ADD PRIMARY KEY (id)",
        "ALTER TABLE orders ADD PRIMARY KEY (id)",
        "ALTER TABLE events ADD PRIMARY KEY (id)",
        "ALTER TABLE orders ADD CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id)",
        "CREATE INDEX orders_created_idx ON orders (created)",
        "CREATE INDEX events_order_idx ON events (order_id)",
    ]
    return create, load, constraints, customers + orders + events
