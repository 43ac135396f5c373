"""The "restore" test: how fast PostgreSQL gets a database back from a pg_dump -Fc archive.

A synthetic data set of about size_mb (three tables of random text, primary keys, a foreign key,
two indexes) is generated in a scratch database, dumped with pg_dump -Fc into the test directory,
then restored with pg_restore -j 1 and -j N into fresh scratch databases. Each restore runs as
three timed steps: --section=pre-data (tables), --section=data (the data load) and
--section=post-data (indexes and constraints). Scratch databases and the dump are always removed.

Without PostgreSQL (client tools missing, or the local server does not answer): a file-level
restore instead (extract a generated .tar.gz of many small files, then sync), labelled kind "file".
"""
import os
import re
import time
from typing import Any, Dict, List  # noqa: F401 - some only in type comments

from . import restore_files
from .restore_pg import RestoreError, connect, data_sql, dsn_has_password, error_line, find_tools, parse_settings

CONNECTIONS = ("peer", "dsn")
MAX_SIZE_MB = 1024 * 1024
MAX_JOBS = 256
DEFAULT_SIZE_MB = 256
# the parameters validate() takes: name, kind, default (None: chosen on the host), limits, unit
PARAMS = (
    {"name": "size_mb", "kind": "int", "default": DEFAULT_SIZE_MB, "low": 1, "high": MAX_SIZE_MB, "unit": "MB"},
    {"name": "jobs", "kind": "int", "default": None, "low": 1, "high": MAX_JOBS},
    {"name": "connection", "kind": "choice", "default": "peer", "choices": CONNECTIONS},
    {"name": "dsn", "kind": "text", "default": ""},
    {"name": "password", "kind": "secret", "default": ""},
    {"name": "test_dir", "kind": "path", "default": ""},
    {"name": "pg_bindir", "kind": "path", "default": ""},
)
KNOWN = tuple(param["name"] for param in PARAMS)
PASSES = ("restore_j1", "restore_jN")
# what run() reports: metric name (with {pass}, {part} filled in) and unit
METRICS = (("dump_bytes", "B"), ("source_db_bytes", "B"), ("db_bytes", "B"), ("{pass}.{part}_s", "s"),
           ("{pass}.mbps_dump", "MB/s"), ("{pass}.mbps_db", "MB/s"), ("{pass}.rows_per_s", "rows/s"),
           ("file_restore.{part}_s", "s"), ("file_restore.mbps", "MB/s"), ("file_restore.files_per_s", "files/s"),
           ("file_restore.archive_bytes", "B"))
MB = 1024 * 1024
# seconds per MB of the data set, for the first time-left guess of each phase (the workbench refines it)
PG_GUESS_S_PER_MB = {"generate": 0.06, "dump": 0.03, "restore": 0.03}
FILE_GUESS_S_PER_MB = {"generate": 0.03, "restore_files": 0.03}


def describe() -> Dict[str, Any]:
    """The parameters and metrics, as data (no presets: validate() refuses one)."""
    return {"params": PARAMS, "presets": {}, "jobs": (), "metrics": METRICS}


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(params) - set(KNOWN))
    if unknown:
        raise ValueError("restore: unknown parameter(s) {} (known: {})".format(", ".join(unknown), ", ".join(KNOWN)))
    size_mb = params.get("size_mb", DEFAULT_SIZE_MB)
    if isinstance(size_mb, bool) or not isinstance(size_mb, int) or not 1 <= size_mb <= MAX_SIZE_MB:
        raise ValueError("restore: size_mb must be a whole number 1-{}, not {!r}".format(MAX_SIZE_MB, size_mb))
    jobs = params.get("jobs")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS):
        raise ValueError("restore: jobs must be a whole number 1-{}, not {!r}".format(MAX_JOBS, jobs))
    dsn = params.get("dsn") or ""
    if not isinstance(dsn, str):
        raise ValueError("restore: dsn must be text")
    connection = params.get("connection") or ("dsn" if dsn else "peer")
    if connection not in CONNECTIONS:
        raise ValueError("restore: connection must be peer or dsn, not {!r}".format(connection))
    if connection == "dsn" and not dsn.strip():
        raise ValueError("restore: connection dsn needs a dsn (a libpq conninfo or postgresql:// URI)")
    if connection == "peer" and dsn:
        raise ValueError("restore: a dsn is given but connection is peer")
    if dsn and dsn_has_password(dsn):
        raise ValueError("restore: the dsn must not contain the password; give it as the password parameter "
                         "(it then stays off command lines and out of stored runs)")
    password = params.get("password") or ""
    if not isinstance(password, str):
        raise ValueError("restore: password must be text")
    if password and connection != "dsn":
        raise ValueError("restore: a password is only used with connection dsn")
    if "\n" in password or "\0" in password:
        raise ValueError("restore: the password must be one line")
    out = {"size_mb": size_mb, "jobs": jobs, "connection": connection, "dsn": dsn.strip()}
    if password:
        out["password"] = password
    for key in ("test_dir", "pg_bindir"):
        value = params.get(key) or ""
        if not isinstance(value, str) or (value and not os.path.isabs(value)):
            raise ValueError("restore: {} must be an absolute path, not {!r}".format(key, value))
        out[key] = value
    return out


def expected_seconds(params: Dict[str, Any]) -> float:
    # generation, dump and two restores: a slow disk does ~10 MB/s for each of them
    return 120.0 + params["size_mb"] * 0.6


def _run_tag(ctx: Any) -> str:
    tag = re.sub(r"[^a-z0-9]", "", os.path.basename(ctx.run_dir.rstrip("/")).lower())[-16:]
    return tag or str(os.getpid())


def _work_dir(ctx: Any, params: Dict[str, Any], owner_uid: int = -1) -> str:
    base = os.path.realpath(params["test_dir"] or ctx.run_dir)
    path = os.path.join(base, "benchbay-restore-{}".format(os.getpid()))
    os.mkdir(path, 0o700)      # fails when the name is taken: that directory is not ours to remove
    ctx.add_cleanup_path(path)
    if owner_uid >= 0:
        os.chown(path, owner_uid, -1)
    return path


def run(ctx: Any, params: Dict[str, Any]) -> None:
    cores = os.cpu_count() or 1
    jobs = params["jobs"] or cores
    tools, missing = find_tools(params["pg_bindir"])
    if missing:
        why = "PostgreSQL client tools not found ({}{})".format(
            ", ".join(missing), " in " + params["pg_bindir"] if params["pg_bindir"] else " on PATH")
        if params["connection"] == "dsn":
            raise RestoreError("restore: " + why)
        return _file_level(ctx, params, why)
    pg, why = connect(ctx, tools, params["dsn"], params.get("password", ""))
    if pg is None:
        return _file_level(ctx, params, "PostgreSQL does not answer ({})".format(why))
    _postgres(ctx, params, pg, jobs)


def _postgres(ctx: Any, params: Dict[str, Any], pg: Any, jobs: int) -> None:
    info = parse_settings(pg.psql("postgres", "SELECT 'server_version', current_setting('server_version') UNION ALL "
                                  "SELECT 'server_version_num', current_setting('server_version_num') UNION ALL "
                                  "SELECT 'user', current_user UNION ALL "
                                  "SELECT 'can_create', (rolcreatedb OR rolsuper)::text FROM pg_roles "
                                  "WHERE rolname = current_user UNION ALL "
                                  "SELECT name, current_setting(name) FROM unnest(ARRAY['fsync', 'synchronous_commit', "
                                  "'wal_level', 'maintenance_work_mem', 'shared_buffers']) AS name",
                                  "reading the server settings"))
    if info.get("can_create") != "true":
        raise RestoreError("restore: the PostgreSQL role \"{}\" may not create databases; grant it CREATEDB "
                           "(ALTER ROLE ... CREATEDB) or log in as a role that has it".format(info.get("user") or ""))
    force = int(info.get("server_version_num") or 0) >= 130000
    durable = info.get("fsync", "on") == "on"
    meta = {"kind": "postgresql", "server_version": info.get("server_version", ""),
            "fsync": info.get("fsync", ""), "synchronous_commit": info.get("synchronous_commit", ""),
            "wal_level": info.get("wal_level", ""), "maintenance_work_mem": info.get("maintenance_work_mem", ""),
            "shared_buffers": info.get("shared_buffers", ""), "durable": durable, "size_mb": params["size_mb"],
            "connection": params["connection"]}   # type: Dict[str, Any]
    if not durable:
        ctx.warning("restore: the server runs with fsync off: the restore times are not durable (non-durable run)")
    tag = _run_tag(ctx)
    names = {k: "benchbay_{}_{}".format(tag, k) for k in ("src", "j1", "jn")}

    def create(name: str) -> None:
        ctx.add_cleanup_callback(lambda: pg.drop_quietly(name, force))
        pg.psql("postgres", 'DROP DATABASE IF EXISTS "{}"'.format(name), "dropping an old scratch database")
        pg.psql("postgres", 'CREATE DATABASE "{}"'.format(name), "creating scratch database " + name)

    owner = -1
    if pg.prefix:   # the tools run as postgres: it must read the dump
        import pwd
        owner = pwd.getpwnam("postgres").pw_uid
    work = _work_dir(ctx, params, owner)
    dump = os.path.join(work, "source.dump")
    size, guess = params["size_mb"], PG_GUESS_S_PER_MB
    ctx.emit("plan", phases=[
        {"phase": "generate", "label": "Generate {} MB".format(size), "seconds": 2.0 + size * guess["generate"]},
        {"phase": "dump", "label": "pg_dump -Fc", "seconds": 0.5 + size * guess["dump"]},
        {"phase": "restore_j1", "label": "pg_restore -j 1", "seconds": 1.0 + size * guess["restore"]},
        {"phase": "restore_jn", "label": "pg_restore -j {}".format(jobs),
         "seconds": 1.0 + size * guess["restore"] / min(jobs, 4)}])

    with ctx.phase("generate", "Generate {} MB".format(params["size_mb"])):
        create(names["src"])
        ddl, load, constraints, rows = data_sql(params["size_mb"])
        pg.psql(names["src"], "; ".join(ddl), "creating the tables")
        steps = load + constraints + ["ANALYZE"]
        for i, sql in enumerate(steps):
            pg.psql(names["src"], sql, "generating the data")
            ctx.progress("generate", (i + 1) / len(steps))
        src_bytes = int(pg.psql("postgres", "SELECT pg_database_size('{}')".format(names["src"]),
                                "measuring the database").strip() or 0)
    with ctx.phase("dump", "pg_dump -Fc"):
        t0 = time.monotonic()
        with open(dump, "wb") as handle:
            code, _, err = pg.run(pg.argv("pg_dump", names["src"], "-Fc"), stdout=handle)
        if code != 0:
            raise RestoreError("restore: pg_dump failed: {}".format(error_line(err)))
        dump_s = time.monotonic() - t0
        if owner >= 0:
            os.chown(dump, owner, -1)
        dump_bytes = os.path.getsize(dump)
        pg.psql("postgres", 'DROP DATABASE IF EXISTS "{}"'.format(names["src"]), "dropping the source database")
    meta.update(rows=rows, dump_bytes=dump_bytes)
    ctx.result("restore", "dump_bytes", dump_bytes, "B", dict(meta, dump_s=round(dump_s, 3)))
    ctx.result("restore", "source_db_bytes", src_bytes, "B", meta)
    db_bytes = 0
    for key, n, metric in (("j1", 1, "restore_j1"), ("jn", jobs, "restore_jN")):
        with ctx.phase("restore_" + key, "pg_restore -j {}".format(n)):
            times = _restore(ctx, pg, names[key], dump, n, "restore_" + key, create)
            db_bytes = int(pg.psql("postgres", "SELECT pg_database_size('{}')".format(names[key]),
                                   "measuring the restored database").strip() or 0)
            pg.psql("postgres", 'DROP DATABASE IF EXISTS "{}"'.format(names[key]), "dropping a scratch database")
        pass_meta = dict(meta, jobs=n, restored_bytes=db_bytes)
        for part in ("total_s", "pre_data_s", "data_s", "post_data_s"):
            ctx.result("restore", "{}.{}".format(metric, part), round(times[part], 3), "s", pass_meta)
        total = times["total_s"]
        ctx.result("restore", metric + ".mbps_dump", round(dump_bytes / MB / total, 3), "MB/s",
                   dict(pass_meta, denominator="dump bytes"))
        ctx.result("restore", metric + ".mbps_db", round(db_bytes / MB / total, 3), "MB/s",
                   dict(pass_meta, denominator="restored database size"))
        ctx.result("restore", metric + ".rows_per_s", round(rows / total, 1), "rows/s", pass_meta)
    ctx.result("restore", "db_bytes", db_bytes, "B", meta)


def _restore(ctx: Any, pg: Any, name: str, dump: str, jobs: int, phase_id: str, create: Any) -> Dict[str, float]:
    create(name)
    times = {}   # type: Dict[str, float]
    start = time.monotonic()
    for i, section in enumerate(("pre-data", "data", "post-data")):
        argv = pg.argv("pg_restore", name, "--section=" + section, "--exit-on-error", "--no-owner",
                       "--no-privileges") + (["-j", str(jobs)] if section != "pre-data" else []) + [dump]
        t0 = time.monotonic()
        code, _, err = pg.run(argv)
        if code != 0:
            raise RestoreError("restore: pg_restore --section={} failed: {}".format(section, error_line(err)))
        times[section.replace("-", "_") + "_s"] = time.monotonic() - t0
        ctx.progress(phase_id, (i + 1) / 3.0)
    times["total_s"] = time.monotonic() - start
    return times


def _file_level(ctx: Any, params: Dict[str, Any], why: str) -> None:
    ctx.warning("restore: {}: running a file-level restore instead (extract a .tar.gz of small files, "
                "then sync), not a database restore".format(why))
    work = _work_dir(ctx, params)
    archive = os.path.join(work, "files.tar.gz")
    size, guess = params["size_mb"], FILE_GUESS_S_PER_MB
    ctx.emit("plan", phases=[
        {"phase": "generate", "label": "Generate archive", "seconds": 0.5 + size * guess["generate"]},
        {"phase": "restore_files", "label": "Extract and sync", "seconds": 0.5 + size * guess["restore_files"]}])
    with ctx.phase("generate", "Generate archive"):
        made = restore_files.make_archive(ctx, archive, params["size_mb"], "generate")
    dest = os.path.join(work, "restored")
    os.mkdir(dest)
    with ctx.phase("restore_files", "Extract and sync"):
        times = restore_files.extract(ctx, archive, dest, made["files"], "restore_files")
    meta = {"kind": "file", "label": "file-level restore (no PostgreSQL)", "reason": why,
            "size_mb": params["size_mb"], "files": made["files"], "bytes": made["bytes"],
            "archive_bytes": made["archive_bytes"]}
    for part in ("total_s", "extract_s", "sync_s"):
        ctx.result("restore", "file_restore." + part, round(times[part], 3), "s", meta)
    total = times["total_s"]
    ctx.result("restore", "file_restore.mbps", round(made["bytes"] / MB / total, 3), "MB/s",
               dict(meta, denominator="extracted bytes"))
    ctx.result("restore", "file_restore.files_per_s", round(made["files"] / total, 1), "files/s", meta)
    ctx.result("restore", "file_restore.archive_bytes", made["archive_bytes"], "B", meta)
