"""What the methodology section says about a database load run (remote/agent/bench_dbload.py)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TOOL_SENTENCES = {
    "pgbench": "pgbench ran each step itself; Benchbay read its per-second progress lines (--progress=1) for the "
               "throughput and its per-transaction log (--log) for the latency percentiles, so the figures are "
               "those pgbench printed.",
    "sysbench": "sysbench ran each step itself; Benchbay read its per-second report lines (--report-interval=1, "
                "--percentile=99) and its closing statistics and latency histogram, so the figures are those "
                "sysbench printed.",
}


def dbload_sentences(params: Mapping[str, Any], results: Sequence[Any]) -> list[str]:
    metas = [dict(r.metadata) for r in results if r.test == "dbload" and r.metric == "ops_per_s"]
    if not metas:
        return ["The database load test did not complete a step."]
    first = metas[0]
    engine = str(first.get("engine") or "the load tool")
    clients = ", ".join(str(m.get("clients")) for m in metas)
    seconds = first.get("step_seconds") or params.get("step_seconds")
    target = first.get("target") or params.get("target")   # a step's own, else the run's
    where = f" at {target}" if target else ""
    out = [f"{engine} loaded {first.get('server') or 'the database server'}{where} with the "
           f"{first.get('workload')} workload from the test host, "
           + (f"in steps of {clients} clients" if len(metas) > 1 else
              f"with {clients} client{'' if clients == '1' else 's'}")
           + ((f", {seconds} s each" if len(metas) > 1 else f", for {seconds} s") if seconds else "") + (
               f"; it loaded the existing database {first.get('database')} as it was." if params.get("reuse_database")
               else f"; the test made its own scratch database, filled it ({first.get('data')}) and removed it "
                    "afterwards."),
           "Each step's throughput is the median of its per-second figures; its variation is their standard "
           "deviation over their mean; the knee is the first step whose throughput is under 1.1 times the best "
           "before it" + (f", or whose p99 is over {params['p99_limit_ms']:g} ms"
                          if params.get("p99_limit_ms") else "") + "."]
    tool = engine.split(" ", 1)[0]
    if tool in TOOL_SENTENCES:
        out.append(TOOL_SENTENCES[tool])
    if first.get("rate"):
        since = first.get("latency_from") or "scheduled start"
        out.append(f"Constant-rate mode: {first['rate']:g} requests per second in all, latency counted from each "
                   f"request's {since}" + (" (sysbench leaves out the time a request waited in its queue)"
                                           if tool == "sysbench" else "") + ".")
    tries = first.get("max_tries")
    if tool == "pgbench" and isinstance(tries, int) and tries != 1:
        out.append("pgbench tried a transaction that failed on a serialization or deadlock error again ("
                   + (f"up to {tries} tries" if tries else "until the step ended") + "); the retries are "
                   "counted apart, and only a transaction that failed every try counts as an error.")
    return out
