"""Database load results as readable lines and a table, for `benchbay run` and the window's results view.

Metric names and metadata are the agent's (remote/agent/bench_dbload.py, dbload_stats.py): per step
ops_per_s (the median of the per-second totals; per_second, cv, tool_total, engine in its metadata),
<op>_p50_ms / <op>_p99_ms / <op>_p999_ms, errors, retries; once per run knee_clients.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.summary.base import MISSING, Table, number, result_parts

TEST = "dbload"
PCTS = (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"))
OP_ORDER = ("txn", "read", "write", "other", "get", "set")


@dataclass
class DbStep:
    step: int
    clients: int
    ops_per_s: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    latency: dict[str, dict[str, float]] = field(default_factory=dict)   # op -> p50/p99/p999 -> ms
    errors: float = 0.0
    retries: float = 0.0


def dbload_steps(results: Iterable[Any]) -> list[DbStep]:
    """The sweep's steps in order, each with its figures."""
    steps: dict[int, DbStep] = {}
    for test, metric, value, _unit, meta in map(result_parts, results):
        if test != TEST or not isinstance(meta.get("step"), int) or metric == "knee_clients":
            continue
        step = steps.setdefault(meta["step"], DbStep(meta["step"], int(meta.get("clients") or 0)))
        if metric == "ops_per_s":
            step.ops_per_s, step.meta = value, meta
        elif metric in ("errors", "retries"):
            setattr(step, metric, value)
        elif metric.endswith("_ms"):
            op, _, pct = metric[:-3].rpartition("_")
            if op and pct in dict(PCTS):
                step.latency.setdefault(op, {})[pct] = value
    return [steps[k] for k in sorted(steps)]


def _ops(steps: list[DbStep]) -> list[str]:
    found = {op for s in steps for op in s.latency}
    return sorted(found, key=lambda op: (OP_ORDER.index(op) if op in OP_ORDER else len(OP_ORDER), op))


def exact(value: float | None) -> str:
    """The figure as stored, which is as the tool printed it (192.087274 stays so): no rounding for display."""
    if value is None:
        return MISSING
    return f"{value:.6f}".rstrip("0").rstrip(".")


def dbload_table(results: Iterable[Any]) -> Table:
    steps = dbload_steps(results)
    ops = _ops(steps)
    headers = ("step", "clients", "ops/s (median)", "variation %") + tuple(
        f"{op} {label} ms" for op in ops for _k, label in PCTS) + ("errors", "retries", "tool's total")
    table = Table(headers)
    for s in steps:
        cv = s.meta.get("cv")
        row = (str(s.step), str(s.clients), exact(s.ops_per_s), number(None if cv is None else cv * 100.0, 1))
        row += tuple(exact(s.latency.get(op, {}).get(k)) for op in ops for k, _label in PCTS)
        row += (number(s.errors, 0), number(s.retries, 0), exact(s.meta.get("tool_total")))
        table.rows.append(row)
    return table


def knee_line(results: Iterable[Any]) -> str:
    knee = next((meta for test, metric, _v, _u, meta in map(result_parts, results)
                 if test == TEST and metric == "knee_clients"), None)
    if knee is None:
        return ""
    if knee.get("knee") is None:
        return f"knee: none ({knee.get('note') or 'no knee'}; rule: {knee.get('rule')})"
    return f"knee: step {knee['knee']} ({knee.get('clients')} clients), {knee.get('rule')}"


def dbload_lines(results: Iterable[Any]) -> list[str]:
    """Engine and version, server, workload and data, how the figures are made, the knee."""
    results = list(results)
    steps = dbload_steps(results)
    if not steps:
        return []
    meta = steps[0].meta
    data = meta.get("data") or MISSING
    if meta.get("scale"):
        data += f", pgbench scale {meta['scale']} (~{number(meta.get('data_mb'), 0)} MB)"
    elif meta.get("table_size"):
        data += f", {meta.get('tables')} tables of {number(meta['table_size'], 0)} rows (~" \
                f"{number(meta.get('data_mb'), 0)} MB)"
    elif meta.get("keyspace"):
        data += redis_data(meta)
    counts = {"txn": "transactions"}.get(str(meta.get("counts")), str(meta.get("counts") or "operations"))
    engine = str(meta.get("engine") or MISSING)
    counted = "the built-in generator counted them" if engine == "builtin RESP" else "the tool printed them"
    lines = [f"engine {engine} against {meta.get('server') or MISSING} at "
             f"{meta.get('target') or MISSING}; workload {meta.get('workload') or MISSING}; data {data}",
             f"ops/s = median of the per-second {counts} of each step as {counted}; variation = "
             "standard deviation / mean of the per-second figures"
             + ("" if engine == "builtin RESP" else "; tool's total = the tool's own figure for the whole step")]
    if engine.startswith("redis-benchmark "):
        lines.append("p50/p99/p99.9 from redis-benchmark's report for the whole step (each second it prints "
                     "only an average)")
        lines += [f"step {s.step}: redis-benchmark runs one command per process, so its {s.clients} client"
                  f"{'s' if s.clients != 1 else ''} ran {next(iter(s.meta['clients_by_op']))}s only"
                  for s in steps if len(s.meta.get("clients_by_op") or {"get": 1, "set": 1}) == 1]
    unanswered = sum(int(s.meta.get("unfinished") or 0) for s in steps)
    if unanswered:
        lines.append(f"unanswered: {unanswered} request(s) due at the constant rate had no answer when their step "
                     "ended (the server fell behind)")
    if meta.get("rate"):
        lines.append(f"constant rate {number(meta['rate'])} ops/s: latency counted from each request's "
                     f"{meta.get('latency_from') or 'scheduled start'}")
    best = max(steps, key=lambda s: s.ops_per_s or 0.0)
    lines.append(f"best step: {exact(best.ops_per_s)} ops/s with {best.clients} client"
                 f"{'s' if best.clients != 1 else ''}")
    knee = knee_line(results)
    if knee:
        lines.append(knee)
    failures = sum(s.errors for s in steps)
    if failures:
        lines.append(f"errors: {number(failures, 0)} in all steps")
    return lines + target_lines(results)


TARGET_PREFIX = "target_"


def target_lines(results: Iterable[Any]) -> list[str]:
    """The database server's own figures per step, when it was watched (app.engine.dbload_watch)."""
    steps: dict[int, dict[str, Any]] = {}
    for test, metric, value, _unit, meta in map(result_parts, results):
        if test == TEST and metric.startswith(TARGET_PREFIX) and isinstance(meta.get("step"), int):
            step = steps.setdefault(meta["step"], {"meta": meta})
            step[metric] = value
            if meta.get("disk"):
                step["disk"] = meta["disk"]
    lines = []
    for index, step in sorted(steps.items()):
        meta = step["meta"]
        clients = int(meta.get("clients") or 0)
        parts = [f"CPU {number(step.get('target_cpu_pct'), 0)} % busy",
                 f"iowait {number(step.get('target_iowait_pct'), 0)} %",
                 f"steal {number(step.get('target_steal_pct'), 1)} %", f"load {number(step.get('target_load1'), 1)}"]
        if "target_disk_util_pct" in step:
            parts.append(f"busiest disk {step.get('disk')} {number(step['target_disk_util_pct'], 0)} % busy")
        lines.append(f"server {meta.get('target_host')}, step {index} ({clients} client{'s' if clients != 1 else ''}):"
                     f" {', '.join(parts)}")
    if lines:
        lines.append(f"server figures: means over each step's seconds from the server's own telemetry (run "
                     f"#{next(iter(steps.values()))['meta'].get('target_run_id')})")
    return lines


def redis_data(meta: dict[str, Any]) -> str:
    """The Redis keyspace and mix: keys and value size, database and prefix, pipeline, share of gets."""
    ratio = meta.get("get_ratio")
    mix = MISSING if ratio is None else f"{number(float(ratio) * 100.0, 0)} % gets"
    return (f", {number(meta['keyspace'], 0)} keys of {number(meta.get('value_size'), 0)} B in database "
            f"{meta.get('redis_db')} (prefix {meta.get('key_prefix')}); pipeline {meta.get('pipeline')}; {mix}")


def dbload_text(results: Iterable[Any], indent: str = "  ") -> list[str]:
    results = list(results)
    lines = [indent + line for line in dbload_lines(results)]
    table = dbload_table(results)
    if table.rows:
        lines.append(table.text(indent))
    return lines
