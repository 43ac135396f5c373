"""A PostgreSQL store as a team uses it: URLs as people write them, a read-only database, and the server
restarting while a run ends (the run's results are written once it is back)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.cli import main
from storage.db import Store, open_store
from storage.errors import StoreError
from storage.records import HostRecord, RunStatus
from tests.fixtures.pg_cluster import PgCluster, pg_cluster  # noqa: F401 - the fixture
from tests.fixtures.postgres import PostgresAdmin
from tests.unit.test_import_odd_documents import (  # noqa: F401 - a long series into PostgreSQL in chunks
    small_slices,
    test_a_long_series_is_stored_exactly_and_found_again,
)

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(pg_url: str) -> Iterator[Store]:
    opened = open_store(pg_url)
    yield opened
    opened.close()


def _as_written(pg_url: str, scheme: str) -> str:
    """The scratch database's URL without a driver name, as a user writes it."""
    return make_url(pg_url).set(drivername=scheme).render_as_string(hide_password=False)


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_urls_without_a_driver_use_the_installed_one(pg_url: str, scheme: str, cli_env, capsys,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHBAY_DB", _as_written(pg_url, scheme))
    assert main(["host", "add", "web1", "--address", "127.0.0.1", "--user", "root"]) == 0
    assert main(["host", "list"]) == 0
    assert "web1" in capsys.readouterr().out


def _set_read_only(pg_admin: PostgresAdmin, pg_url: str) -> None:
    engine = create_engine(pg_admin.admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'ALTER DATABASE "{make_url(pg_url).database}" SET default_transaction_read_only = on'))
    engine.dispose()


def test_read_only_database_is_read_and_a_write_is_one_line(pg_admin: PostgresAdmin, pg_url: str, cli_env,
                                                            capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHBAY_DB", _as_written(pg_url, "postgresql"))
    assert main(["host", "add", "web1", "--address", "127.0.0.1", "--user", "root"]) == 0
    _set_read_only(pg_admin, pg_url)
    capsys.readouterr()

    assert main(["host", "list"]) == 0   # reading still works
    out, err = capsys.readouterr()
    assert "web1" in out
    assert main(["host", "add", "web2", "--address", "127.0.0.2", "--user", "root"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("benchbay: the store postgresql")
    assert "is read-only: nothing was saved (the PostgreSQL database is read-only" in err[-1]
    assert not any("ReadOnlySqlTransaction" in line or "INSERT" in line for line in err)


def test_database_turned_read_only_while_open_is_one_line(pg_admin: PostgresAdmin, pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        _set_read_only(pg_admin, pg_url)
        store.engine.dispose()   # the next connection gets the new setting
        with pytest.raises(StoreError) as caught:
            store.hosts.add(HostRecord("web2", address="127.0.0.2", user="root"))
        message = str(caught.value)
        assert "is read-only: nothing was saved (the database accepts no writes)" in message
        assert "\n" not in message and "INSERT" not in message
    finally:
        store.close()


def _wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:.0f} s: {what}")
        time.sleep(0.2)


def test_run_outlives_a_server_restart_and_is_stored_when_it_is_back(pg_cluster: PgCluster,  # noqa: F811
                                                                       cli_env, tmp_path: Path) -> None:
    open_store(pg_cluster.url).close()   # the schema, as after the first start
    env = {**os.environ, "BENCHBAY_HOME": str(cli_env["home"]), "BENCHBAY_DB": pg_cluster.url}
    phases = '[["warmup", "Warm-up", 1], ["measure", "Measure", 3]]'
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as err:
        run = subprocess.Popen([sys.executable, str(ROOT / "main.py"), "run", "local", "--test", "idle",
                                "--set", f"phases={phases}", "--json"],
                               env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        # running on its host: the store knows it, then the server goes away while the run goes on
        def stored_running() -> bool:
            with open_store(pg_cluster.url) as store:
                return any(r.remote is not None and r.remote.run_dir for r in store.runs.running())
        _wait_for(stored_running, 120, "the run stored as running")
        pg_cluster.stop()
        _wait_for(lambda: "is not answering" in errors.read_text(), 180,
                  "a message that the store is not answering")
        assert run.poll() is None   # waiting with its results, not failed
        pg_cluster.start()
        out, _ = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    said = errors.read_text()
    assert run.returncode == 0, said
    [line] = [line for line in said.splitlines() if "is not answering" in line]
    assert "the results are kept and written when it is back" in line
    with open_store(pg_cluster.url) as store:
        [record] = store.runs.list()
        detail = store.runs.get(record.id)
    assert detail.run.status == RunStatus.DONE
    assert any(r.metric == "elapsed" for r in detail.results)
    assert any("is not answering" in str(e.get("message", "")) for e in store.runs.events(record.id))
