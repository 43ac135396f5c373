"""Mail storm and restore results as readable lines and tables: the part of app.summary.text for the two tests
that talk to a real service (an MTA, PostgreSQL), shared by `benchbay run` and the window's results view.

Metric names and metadata are the agent's (remote/agent/bench_mailstorm.py and bench_restore.py):
mailstorm: accepted, accepted_per_s, refused_tcp / smtp_4xx / smtp_5xx / errors (by_stage in their
metadata), {connect|banner|data}_{p50|p95|p99|max} in ms, queue_max, drain_s; a synthetic storm has
synthetic_{create|fsync|total}_* instead. restore: dump_bytes, source_db_bytes, db_bytes and per pass
restore_{j1|jN}.{pre_data_s|data_s|post_data_s|total_s|mbps_dump|mbps_db|rows_per_s}; a file-level
restore has file_restore.{extract_s|sync_s|total_s|mbps|files_per_s|archive_bytes}.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.catalogue.caveats import NON_DURABLE, SYNTHETIC
from app.catalogue.presentation import FILE_LEVEL_LABEL as FILE_LEVEL_LABEL  # the labels' readers take them here
from app.catalogue.presentation import NON_DURABLE_LABEL as NON_DURABLE_LABEL
from app.catalogue.presentation import SYNTHETIC_LABEL as SYNTHETIC_LABEL
from app.summary.base import MISSING, Table, number, result_parts, run_evidence
from app.summary.spread_basis import repeats_only_line
from app.summary.spread_text import spread_of_result, with_spread

MB = 1024 * 1024   # the agent's MB (its MB/s divide by this too)
PERCENTILES = ("p50", "p95", "p99", "max")
MAIL_LATENCIES = (("connect", "connect"), ("banner", "banner"), ("data", "end of DATA"))
SYNTHETIC_LATENCIES = (("synthetic_create", "create + write"), ("synthetic_fsync", "fsync"),
                       ("synthetic_total", "whole message"))
SMTP_STAGES = (("connect", "connect"), ("banner", "banner"), ("helo", "EHLO/HELO"), ("mail", "MAIL FROM"),
               ("rcpt", "RCPT TO"), ("data", "DATA"), ("eod", "end of DATA"))
FAILURE_KINDS = (("refused", "refused"), ("4xx", "4xx"), ("5xx", "5xx"), ("error", "errors"))
RESTORE_PASSES = (("restore_j1", "-j 1"), ("restore_jN", "-j N"))
RESTORE_COLUMNS = (("pre_data_s", "pre-data s"), ("data_s", "data s"), ("post_data_s", "post-data s"),
                   ("total_s", "total s"), ("mbps_dump", "MB/s (dump)"), ("mbps_db", "MB/s (db size)"),
                   ("rows_per_s", "rows/s"))
PG_SETTINGS = ("fsync", "synchronous_commit", "wal_level", "maintenance_work_mem", "shared_buffers")


def figures(results: Iterable[Any], test: str) -> tuple[dict[str, float], dict[str, dict]]:
    """metric -> value and metric -> metadata of one test's results."""
    values: dict[str, float] = {}
    metadata: dict[str, dict] = {}
    for name, metric, value, _unit, meta in map(result_parts, results):
        if name == test:
            values[metric] = value
            metadata[metric] = meta
    return values, metadata


def _first_meta(metadata: Mapping[str, dict]) -> dict:
    return next(iter(metadata.values()), {})


def _fs_text(fs: Any) -> str:
    """ "ext4 on /dev/vda, mounted at /" from the agent's filesystem dict."""
    if not isinstance(fs, Mapping) or not fs:
        return ""
    parts = [str(fs.get("fstype") or "?")]
    if fs.get("source"):
        parts.append(f"on {fs['source']}")
    text = " ".join(parts)
    return text + (f", mounted at {fs['mount']}" if fs.get("mount") else "")


def _mb(size: float | None) -> str:
    return MISSING if size is None else f"{number(size / MB)} MB"


# -- mail storm ------------------------------------------------------------------------------------

def mail_synthetic(results: Iterable[Any]) -> bool:
    """True when no MTA answered and the storm was the synthetic queue storm on the test directory."""
    return SYNTHETIC.detect(run_evidence(results)) is not None


def mail_lines(results: Iterable[Any]) -> list[str]:
    """Accepted, the rate, the MTA and its queue, the drain, refusals by stage: one line each."""
    results = list(results)
    values, metadata = figures(results, "mailstorm")
    if not values:
        return []
    meta = _first_meta(metadata)
    lines = []
    if meta.get("synthetic"):
        lines.append(f"{SYNTHETIC_LABEL}: {meta.get('reason') or 'nothing answered'} on {meta.get('server')}; "
                     f"{meta.get('op') or 'file operations per message'}")
    attempted = metadata.get("accepted", {}).get("attempted", meta.get("messages"))
    accepted = values.get("accepted")
    lines.append(f"accepted: {number(accepted, 0)} / {number(attempted, 0) if attempted is not None else MISSING}"
                 f" attempted ({number(meta.get('messages'), 0)} asked, {meta.get('concurrency', '?')} sessions, "
                 f"{number(meta.get('size'), 0)} B each)")
    window = metadata.get("accepted_per_s", {}).get("window_s")
    rate = next((r for r in results if result_parts(r)[:2] == ("mailstorm", "accepted_per_s")), None)
    lines.append(f"accepted msg/s: {with_spread(number(values.get('accepted_per_s')), spread_of_result(rate))}"
                 + (f" (first attempt to last accept, {number(window)} s)" if window is not None else ""))
    if meta.get("synthetic"):
        where = _fs_text(meta.get("fs"))
        lines.append(f"directory: {meta.get('directory', MISSING)}" + (f" ({where})" if where else ""))
        return lines
    mta = " ".join(str(meta.get(k) or "") for k in ("mta", "mta_version")).strip() or "unknown MTA"
    lines.append(f"MTA: {mta} on {meta.get('server', MISSING)}, recipient {meta.get('recipient', MISSING)}")
    queue_fs = _fs_text(meta.get("queue_fs"))
    lines.append(f"queue directory: {meta.get('queue_dir') or MISSING}" + (f" ({queue_fs})" if queue_fs else ""))
    if "queue_max" in values:
        poll = metadata["queue_max"].get("poll_s")
        every = f"{poll:g}" if isinstance(poll, (int, float)) else MISSING
        drain = (f"drained {number(values['drain_s'])} s after the last accept" if "drain_s" in values
                 else "not drained in time")
        lines.append(f"queue: max {number(values['queue_max'], 0)} messages, {drain} "
                     f"(polled every {every} s with {meta.get('queue_tool') or '?'})")
    failures = mail_failures(results)
    lines.append("refusals: " + ("; ".join(
        f"{label}: " + ", ".join(f"{count} {kind}" for kind, count in kinds.items()) for label, kinds in failures)
        if failures else "none"))
    return lines


def mail_failures(results: Iterable[Any]) -> list[tuple[str, dict[str, int]]]:
    """(stage label, {kind label: count}) for each SMTP stage where something was refused or failed."""
    _values, metadata = figures(results, "mailstorm")
    by_stage = next((m.get("by_stage") for m in metadata.values() if isinstance(m.get("by_stage"), Mapping)), {})
    out = []
    for stage, label in SMTP_STAGES:
        kinds = by_stage.get(stage) or {}
        counts = {name: int(kinds[kind]) for kind, name in FAILURE_KINDS if kinds.get(kind)}
        if counts:
            out.append((label, counts))
    return out


def mail_latency_table(results: Iterable[Any]) -> Table:
    """One row per stage (connect, banner, end of DATA; or the synthetic steps): p50/p95/p99/max ms."""
    values, _metadata = figures(results, "mailstorm")
    stages = SYNTHETIC_LATENCIES if any(k.startswith("synthetic_") for k in values) else MAIL_LATENCIES
    table = Table(("stage",) + tuple(f"{p} ms" for p in PERCENTILES))
    for prefix, label in stages:
        if any(f"{prefix}_{p}" in values for p in PERCENTILES):
            table.rows.append((label,) + tuple(number(values.get(f"{prefix}_{p}")) for p in PERCENTILES))
    return table


# -- restore ---------------------------------------------------------------------------------------

def restore_kind(results: Iterable[Any]) -> str:
    """ "postgresql", "file" (the file-level fallback) or "" (no restore results)."""
    _values, metadata = figures(results, "restore")
    return str(_first_meta(metadata).get("kind") or "")


def restore_non_durable(results: Iterable[Any]) -> bool:
    """The server ran with fsync off: its restore times are not those of a server that survives a crash."""
    return NON_DURABLE.detect(run_evidence(results)) is not None


def restore_table(results: Iterable[Any]) -> Table:
    """PostgreSQL: one row per pg_restore pass; file level: one row for the extract."""
    values, metadata = figures(results, "restore")
    if restore_kind(results) == "file":
        table = Table(("restore", "extract s", "sync s", "total s", "MB/s (extracted)", "files/s"))
        if "file_restore.total_s" in values:
            table.rows.append(("file level",) + tuple(number(values.get(f"file_restore.{k}")) for k in
                                                      ("extract_s", "sync_s", "total_s", "mbps", "files_per_s")))
        return table
    table = Table(("pass",) + tuple(h for _, h in RESTORE_COLUMNS))
    for metric, label in RESTORE_PASSES:
        if f"{metric}.total_s" not in values:
            continue
        jobs = metadata[f"{metric}.total_s"].get("jobs")
        table.rows.append((f"-j {jobs}" if jobs else label,)
                          + tuple(number(values.get(f"{metric}.{k}")) for k, _ in RESTORE_COLUMNS))
    return table


def restore_lines(results: Iterable[Any]) -> list[str]:
    """Server and settings, sizes, what the MB/s divide; the labels a reader must not miss."""
    results = list(results)
    values, metadata = figures(results, "restore")
    if not values:
        return []
    meta = _first_meta(metadata)
    alone = [line for line in (repeats_only_line(results, "restore"),) if line]   # no spread within one run
    if meta.get("kind") == "file":
        return [f"{FILE_LEVEL_LABEL}: {meta.get('reason') or 'PostgreSQL not usable'}",
                f"{number(meta.get('files'), 0)} files, {_mb(meta.get('bytes'))} extracted from a "
                f"{_mb(values.get('file_restore.archive_bytes', meta.get('archive_bytes')))} .tar.gz, then sync; "
                "MB/s = extracted bytes / total time"] + alone
    lines = []
    if restore_non_durable(results):
        lines.append(f"{NON_DURABLE_LABEL}: the server does not flush to disk")
    lines.append(f"PostgreSQL {meta.get('server_version') or MISSING}: "
                 + ", ".join(f"{k} {meta.get(k) or MISSING}" for k in PG_SETTINGS))
    dump_s = metadata.get("dump_bytes", {}).get("dump_s")
    lines.append(f"dump (pg_dump -Fc): {_mb(values.get('dump_bytes'))}"
                 + (f" in {number(dump_s)} s" if dump_s is not None else "")
                 + f"; source database {_mb(values.get('source_db_bytes'))}; restored database "
                 f"{_mb(values.get('db_bytes'))}; {number(meta.get('rows'), 0)} rows")
    lines.append("MB/s (dump) = dump bytes / total s; MB/s (db size) = restored database size / total s; "
                 "pre-data = tables, data = the load, post-data = indexes and constraints")
    return lines + alone


# -- both ------------------------------------------------------------------------------------------

def service_text(results: Iterable[Any], indent: str = "  ") -> list[str]:
    """The mail storm and restore parts of `benchbay run`'s summary, indented."""
    results = list(results)
    lines = []
    if figures(results, "mailstorm")[0]:
        lines += [indent + line for line in mail_lines(results)]
        table = mail_latency_table(results)
        if table.rows:
            lines.append(table.text(indent))
    if figures(results, "restore")[0]:
        lines += [indent + line for line in restore_lines(results)]
        table = restore_table(results)
        if table.rows:
            lines.append(table.text(indent))
    return lines
