"""The restore test's parameters, its reading of PostgreSQL's answers, and where the password goes."""
from __future__ import annotations

import subprocess

import pytest

from remote.agent import bench_restore, benches
from remote.agent.restore_pg import (
    Pg,
    classify,
    data_sql,
    dsn_for_db,
    dsn_has_password,
    error_line,
    parse_settings,
)


def test_defaults() -> None:
    params = benches.validate("restore", {})
    assert params == {"size_mb": 256, "jobs": None, "connection": "peer", "dsn": "", "test_dir": "", "pg_bindir": ""}
    assert benches.expected_seconds("restore", {}) > 120


@pytest.mark.parametrize("bad", [
    {"size_mb": 0}, {"size_mb": "8"}, {"size_mb": True}, {"jobs": 0}, {"jobs": 1.5}, {"connection": "ssh"},
    {"connection": "dsn"}, {"dsn": "host=db", "connection": "peer"}, {"password": "x"},
    {"dsn": "host=db user=u password=secret"}, {"dsn": "postgresql://u:secret@db/x"},
    {"dsn": "postgresql://u@db/x?password=secret"}, {"test_dir": "relative"}, {"pg_bindir": "bin"},
    {"nope": 1},
])
def test_bad_params(bad: dict) -> None:
    with pytest.raises(ValueError, match="restore"):
        bench_restore.validate(bad)


def test_a_dsn_implies_connection_dsn() -> None:
    params = bench_restore.validate({"dsn": "host=db user=u", "jobs": 3})
    assert (params["connection"], params["jobs"]) == ("dsn", 3)


def test_a_password_goes_with_a_dsn_only_and_on_one_line() -> None:
    assert bench_restore.validate({"dsn": "host=db user=u", "password": "pw"})["password"] == "pw"
    with pytest.raises(ValueError, match="one line"):
        bench_restore.validate({"dsn": "host=db user=u", "password": "pw\nmore"})


def test_password_is_redacted_for_events_and_storage() -> None:
    assert benches.redact({"dsn": "host=db", "password": "pw"}) == {"dsn": "host=db", "password": "***"}


def test_dsn_helpers() -> None:
    assert not dsn_has_password("host=db user=u")
    assert dsn_has_password("host=db  password = x")
    assert dsn_for_db("host=db user=u", "b_1") == "host=db user=u dbname='b_1'"
    assert dsn_for_db("postgresql://u@db:5433/x?sslmode=require", "b_1") == "postgresql://u@db:5433/b_1?sslmode=require"


class _Ctx:
    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict]] = []

    def popen(self, argv, **kwargs):
        self.calls.append((list(argv), kwargs))
        return subprocess.Popen(["true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def check(self) -> None:
        pass


def test_the_password_goes_in_the_environment_never_in_argv() -> None:
    ctx = _Ctx()
    pg = Pg(ctx, {"psql": "/usr/bin/psql", "pg_dump": "/usr/bin/pg_dump", "pg_restore": "/usr/bin/pg_restore"},
            dsn="host=db user=u", password="s3cret-pw")
    pg.probe()
    pg.psql("postgres", "select 1", "testing")
    pg.run(pg.argv("pg_restore", "x", "--section=data", "/tmp/d.dump"))
    assert len(ctx.calls) == 3
    for argv, kwargs in ctx.calls:
        assert not any("s3cret-pw" in a for a in argv)
        assert kwargs["env"]["PGPASSWORD"] == "s3cret-pw"


def test_peer_children_get_no_inherited_password(monkeypatch) -> None:
    monkeypatch.setenv("PGPASSWORD", "leak")
    pg = Pg(_Ctx(), {"psql": "psql"})
    assert "PGPASSWORD" not in pg.env


def test_error_lines_and_classes() -> None:
    pw = ('psql: error: connection to server at "127.0.0.1", port 5432 failed: '
          'FATAL:  password authentication failed for user "u"\n')
    assert classify(pw) == "auth"
    assert error_line(pw) == 'password authentication failed for user "u"'
    role = ('psql: error: connection to server on socket "/run/postgresql/.s.PGSQL.5432" failed: '
            'FATAL:  role "root" does not exist')
    assert classify(role) == "auth"
    down = ('psql: error: connection to server on socket "/var/run/postgresql/.s.PGSQL.5432" failed: '
            'No such file or directory\n\tIs the server running locally and accepting connections on that socket?\n')
    assert classify(down) == "unreachable"
    assert "No such file or directory" in error_line(down)
    assert classify("ERROR:  permission denied to create database") == "rights"
    assert error_line("") == "no error output"


def test_settings_parsing() -> None:
    text = "server_version|15.2 (Debian)\nfsync|off\nshared_buffers|128MB\n\nnoise\n"
    assert parse_settings(text) == {"server_version": "15.2 (Debian)", "fsync": "off", "shared_buffers": "128MB"}


def test_data_set_scales_and_has_constraints() -> None:
    create, load, constraints, rows = data_sql(8)
    big = data_sql(256)
    assert len(create) == 3 and rows > 10000 and big[3] > 30 * rows
    assert any("FOREIGN KEY" in c for c in constraints) and sum("CREATE INDEX" in c for c in constraints) == 2
    assert all("generate_series" in sql for sql in load)


def test_secrets_come_through_a_private_fifo_that_is_removed(tmp_path) -> None:
    import os
    import threading

    from remote.agent.run_secrets import SECRETS_FIFO, check_spec_params, read_secrets

    fifo = tmp_path / SECRETS_FIFO
    os.mkfifo(fifo, 0o600)

    def write() -> None:
        with open(fifo, "w") as handle:   # blocks until the reader has it open, as the workbench's cat does
            handle.write('{"password": "s3cret"}\n')

    writer = threading.Thread(target=write)
    writer.start()
    assert read_secrets(str(tmp_path), lambda: False, timeout=5) == {"password": "s3cret"}
    writer.join(5)
    assert not fifo.exists()
    with pytest.raises(ValueError, match="spec.json must not hold password"):
        check_spec_params({"dsn": "host=db", "password": "pw"})
    check_spec_params({"dsn": "host=db", "password": ""})


def test_secrets_refuse_a_shared_or_plain_file_and_give_up_in_time(tmp_path) -> None:
    import os
    import time

    from remote.agent.run_secrets import SECRETS_FIFO, read_secrets

    (tmp_path / SECRETS_FIFO).write_text('{"password": "on disk"}\n')
    with pytest.raises(ValueError, match="not a private fifo"):
        read_secrets(str(tmp_path), lambda: False, timeout=1)
    (tmp_path / SECRETS_FIFO).unlink()
    os.mkfifo(tmp_path / SECRETS_FIFO, 0o644)
    with pytest.raises(ValueError, match="not a private fifo"):
        read_secrets(str(tmp_path), lambda: False, timeout=1)
    (tmp_path / SECRETS_FIFO).unlink()
    os.mkfifo(tmp_path / SECRETS_FIFO, 0o600)
    started = time.monotonic()
    with pytest.raises(ValueError, match="no secrets within 0.5 s"):
        read_secrets(str(tmp_path), lambda: False, timeout=0.5)
    assert time.monotonic() - started < 3
    os.mkfifo(tmp_path / SECRETS_FIFO, 0o600)
    with pytest.raises(ValueError, match="stopped"):
        read_secrets(str(tmp_path), lambda: True, timeout=5)
