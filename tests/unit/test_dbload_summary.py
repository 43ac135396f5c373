"""A database load run as `benchbay run`, `runs show` and comparisons say it: results as the agent stores them
(remote/agent/bench_dbload.py)."""
from __future__ import annotations

from app.compare.metrics import figures
from app.summary.dbload import dbload_steps, dbload_table
from app.summary.text import summary_text

BASE = {"engine": "pgbench 15.20", "workload": "tpcb-like", "rate": None, "target": "10.0.0.5:5432",
        "server": "PostgreSQL 15.20", "data": "scale=10", "scale": 10, "data_mb": 160.0}


def _step(step: int, clients: int, ops: float, per_second: list[float], p: tuple[float, float, float],
          tool_total: float, errors: int = 0) -> list[dict]:
    meta = dict(BASE, step=step, clients=clients)
    return [{"test": "dbload", "metric": "ops_per_s", "value": ops, "unit": "ops/s",
             "metadata": dict(meta, per_second=per_second, cv=0.05, tool_total=tool_total, counts="txn")},
            *({"test": "dbload", "metric": f"txn_{name}_ms", "value": v, "unit": "ms", "metadata": dict(meta, op="txn")}
              for name, v in zip(("p50", "p99", "p999"), p, strict=True)),
            {"test": "dbload", "metric": "errors", "value": errors, "unit": "count", "metadata": meta},
            {"test": "dbload", "metric": "retries", "value": 0, "unit": "count", "metadata": meta}]


RESULTS = (_step(1, 1, 410.5, [400.0, 410.5, 420.0], (2.1, 9.5, 14.0), 409.8)
           + _step(2, 2, 790.0, [780.0, 790.0, 800.0], (2.4, 11.0, 20.5), 789.1)
           + _step(3, 4, 800.0, [700.0, 800.0, 900.0], (4.0, 40.25, 80.0), 801.2, errors=3)
           + [{"test": "dbload", "metric": "knee_clients", "value": 4, "unit": "clients",
               "metadata": dict(BASE, knee=3, step=3, clients=4, rule="throughput under 1.1x the previous best")}])


def test_the_summary_names_engine_throughput_percentiles_variation_knee_and_errors() -> None:
    text = summary_text("db1", "done", RESULTS, run_id=7)
    assert "engine pgbench 15.20 against PostgreSQL 15.20 at 10.0.0.5:5432" in text
    assert "knee: step 3 (4 clients), throughput under 1.1x the previous best" in text
    assert "best step: 800 ops/s with 4 clients" in text and "errors: 3 in all steps" in text
    table = dbload_table(RESULTS)
    assert table.headers[:4] == ("step", "clients", "ops/s (median)", "variation %")
    # the figures as stored, which are as the tool printed them: no rounding for display
    assert table.rows[2][:7] == ("3", "4", "800", "5.0", "4", "40.25", "80")
    assert table.rows[2][-3:] == ("3", "0", "801.2")
    assert [s.clients for s in dbload_steps(RESULTS)] == [1, 2, 4]


def test_a_comparison_reads_the_best_step_its_p99_and_the_knee() -> None:
    found = figures(RESULTS)
    assert found["dbload:best.ops_per_s"].value == 800.0 and found["dbload:best.ops_per_s"].note.startswith("4 clients")
    assert found["dbload:best.txn_p99_ms"].value == 40.25
    assert "dbload:knee_clients" not in found   # the knee is named beside the best step, not judged as a figure


def test_a_comparison_of_different_workloads_says_so() -> None:
    from app.compare.caveats import between_caveats

    other = [dict(r, metadata=dict(r["metadata"], workload="select-only")) for r in RESULTS]
    [caveat] = between_caveats([("a", RESULTS), ("b", other)])
    assert caveat.tag == "loads differ" and "dbload:best.ops_per_s" in caveat.keys
    assert "(pgbench 15.20 tpcb-like on a; pgbench 15.20 select-only on b)" in caveat.text
    assert between_caveats([("a", RESULTS), ("b", RESULTS)]) == []


def test_the_methodology_says_how_the_figures_were_made() -> None:
    from types import SimpleNamespace

    from app.report.methodology_dbload import dbload_sentences

    samples = [SimpleNamespace(**r) for r in RESULTS]
    text = " ".join(dbload_sentences({"p99_limit_ms": 200}, samples))
    assert "pgbench 15.20 loaded PostgreSQL 15.20 at 10.0.0.5:5432 with the tpcb-like workload" in text
    assert "in steps of 1, 2, 4 clients" in text and "scratch database" in text and "over 200 ms" in text
    assert "per-transaction log (--log)" in text


def test_the_methodology_never_says_at_none_when_a_step_lacks_its_target() -> None:
    from types import SimpleNamespace

    from app.report.methodology_dbload import dbload_sentences

    bare = [SimpleNamespace(**dict(r, metadata={k: v for k, v in r["metadata"].items() if k != "target"}))
            for r in RESULTS]
    text = " ".join(dbload_sentences({"target": "db1:5432"}, bare))
    assert "loaded PostgreSQL 15.20 at db1:5432 with" in text
    text = " ".join(dbload_sentences({}, bare))
    assert "None" not in text and "loaded PostgreSQL 15.20 with the tpcb-like workload" in text


def test_the_methodology_says_pgbench_retried_when_max_tries_was_given() -> None:
    from types import SimpleNamespace

    from app.report.methodology_dbload import dbload_sentences

    retried = [SimpleNamespace(**dict(r, metadata=dict(r["metadata"], max_tries=10))) for r in RESULTS]
    text = " ".join(dbload_sentences({}, retried))
    assert "serialization or deadlock error again (up to 10 tries)" in text
    assert "only a transaction that failed every try counts as an error" in text
    once = " ".join(dbload_sentences({}, [SimpleNamespace(**r) for r in RESULTS]))
    assert "tried a transaction" not in once   # pgbench's default, one try: nothing to say
