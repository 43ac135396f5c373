"""pgbench's --max-tries through the dbload test over a real sshd test host: transactions that fail on a
serialization error are tried again, and the step's stored retries are the ones pgbench printed."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.leftovers import scratch_name
from tests.fixtures.postgres import PREFIX as PG_PREFIX
from tests.integration.test_dbload_ssh import PG_TARGET, _add, _pg_databases, _steps, pg_tcp  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("pg_tcp")]

# four clients updating ten rows under REPEATABLE READ: concurrent updates of one row fail to serialize
CONTENDED = """\\set aid random(1, 10)
BEGIN ISOLATION LEVEL REPEATABLE READ;
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
SELECT pg_sleep(0.002);
END;
"""


def _printed(lines: list[str], start: str) -> int:
    return int(next(line for line in lines if line.startswith(start)).split(":")[1].split()[0])


@pytest.mark.parametrize("max_tries", [1, 20])
def test_serialization_failures_are_retried_with_max_tries_and_counted(workbench, ssh_host, tmp_path: Path,
                                                                       max_tries: int) -> None:
    name = _add(workbench, ssh_host)
    script = tmp_path / "contended.sql"
    script.write_text(CONTENDED)
    script.chmod(0o644)
    database = scratch_name(PG_PREFIX)
    params = {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1", "clients": [4], "step_seconds": 3,
              "database": database, "workload": f"script:{script}", "max_tries": max_tries}

    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    [figures] = _steps(workbench.store.runs.get(outcome.run_id).results).values()
    printed = figures["ops_per_s"].metadata["tool_output"]
    retries, errors = figures["retries"].value, figures["errors"].value
    if max_tries == 1:   # pgbench's default: a failed transaction is counted as failed, never tried again
        assert retries == 0 and errors == _printed(printed, "number of failed transactions") > 0
    else:
        assert retries == _printed(printed, "total number of retries") > 0   # what pgbench printed
        assert figures["ops_per_s"].metadata["retried_transactions"] == _printed(
            printed, "number of transactions retried")
        assert figures["ops_per_s"].metadata["max_tries"] == max_tries
    assert _pg_databases(database) == set()
