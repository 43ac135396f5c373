"""How each test was run, in plain sentences for the report's methodology page (Qt-free).

A reader wants what was done, for how long, how many times and with which engine and versions; only
the parameters that shaped the figures are named (the read-ahead sizes only when read-ahead was swept,
never how the workbench itself ran the agent). Servers that ran a test alike share one sentence.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.catalogue import CATALOGUE
from app.report.methodology_dbload import dbload_sentences
from app.report.methodology_shared import SHARED_TEST, shared_sentences
from app.summary.disk_cpu import cpu_versions, engine_text
from storage.records import RunRecord, RunStatus
from widgets.format import human_bytes, workers_text

# what a stored run keeps beside the test's own parameters: how the workbench ran the agent
RUN_KEYS = ("interval", "duration", "margin", "params")
SECRET_WORDS = ("password", "secret", "token", "passphrase", "dsn")


@dataclass(frozen=True)
class MethodRun:
    """One run of a test as the methodology needs it."""

    label: str                     # the row label: "db-01"
    run: RunRecord
    results: Sequence[Any]


@dataclass(frozen=True)
class Methodology:
    test: str
    label: str                     # "Disk"
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def is_secret(name: str) -> bool:
    low = name.lower()
    return name in CATALOGUE.secret_params() or any(word in low for word in SECRET_WORDS)


def own_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The test's own parameters of a stored run, secrets left out (a run keeps them under "params")."""
    inner = parameters.get("params")
    merged = {**{k: v for k, v in parameters.items() if k not in RUN_KEYS},
              **(inner if isinstance(inner, dict) else {})}
    return {key: value for key, value in merged.items() if not is_secret(str(key)) and value not in (None, "")}


def _seconds(value: Any) -> str:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{seconds:g} s" if seconds < 120 else f"{seconds / 60:g} min"


def _size(value: Any) -> str:
    """268435456 -> "256 MiB"; a size as the user typed it ("2G") reads "2 GiB"."""
    if isinstance(value, (int, float)):
        return human_bytes(value).replace(".0 ", " ")
    return str(value).replace("G", " GiB").replace("M", " MiB") if str(value)[-1:] in "GM" else str(value)


def _series(values: Any) -> str:
    items = [str(v) for v in values] if isinstance(values, (list, tuple)) else [str(values)]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _names(labels: Sequence[str]) -> str:
    return _series(list(labels))


def _lower(text: str) -> str:
    """The first letter in lower case, unless the word is a name ("MTA", "O_DIRECT")."""
    return text if text[1:2].isupper() else text[:1].lower() + text[1:]


def disk_sentences(params: Mapping[str, Any]) -> list[str]:
    """What a disk run did: its jobs, how long each, on what file, how synchronous writes were made."""
    tests = params.get("tests")
    jobs = [job for job in CATALOGUE.test("disk").jobs if not job.series and (tests is None or job.key in tests)]
    parts = []
    names = _series([_lower(job.label) for job in jobs]) if jobs else "the disk jobs"
    how_long = []
    if params.get("runtime") is not None:
        how_long.append(f"for {_seconds(params['runtime'])} each")
    if params.get("warmup"):
        how_long.append(f"after a {_seconds(params['warmup'])} warm-up that is not counted")
    parts.append(f"{names[:1].upper()}{names[1:]} {' '.join(how_long)}".strip())
    size = params.get("file_size", params.get("size"))
    where = f"on a {_size(size)} test file" if size else "on a test file"
    direct = params.get("direct")
    where += " with O_DIRECT (bypassing the page cache)" if direct in (True, None) else " through the page cache"
    parts.append(where)
    out = [", ".join(parts) + "."]
    if any(job.key.startswith("syncwrite") for job in jobs):
        out.append(f"Synchronous writes call {params.get('sync_mode') or 'fdatasync'} after every write.")
    if tests is None or "sweep" in tests:
        workers = params.get("sweep_workers")
        if workers:
            out.append(f"The concurrency sweep read 4 KiB blocks with {_series(workers)} parallel workers.")
    if tests is not None and "readahead" in tests and params.get("readahead_kb"):
        out.append(f"Sequential reads were repeated at a read-ahead of {_series(params['readahead_kb'])} KiB.")
    return out


def cpu_sentence(params: Mapping[str, Any], results: Sequence[Any]) -> str:
    meta = next((dict(r.metadata) for r in results if r.test == "cpu" and r.metric == "multi"), {})
    work = meta.get("op") or "compression and hashing in C-implemented code paths"
    seconds = params.get("seconds")
    span = f" for {_seconds(seconds)}" if seconds else ""
    workers = params.get("workers") or meta.get("workers")
    every = workers_text(workers) if workers else "one worker per core"
    return f"Fixed work ({work}){span} on one core, then{span} with {every} at once."


def mail_sentence(params: Mapping[str, Any], results: Sequence[Any]) -> str:
    meta = next((dict(r.metadata) for r in results if r.test == "mailstorm" and r.metric == "accepted_per_s"), {})
    messages = params.get("messages") or meta.get("messages")
    size = params.get("size") or meta.get("size")
    concurrency = params.get("concurrency") or meta.get("concurrency")
    count = f"{messages:,} messages" if isinstance(messages, int) else "Messages"
    of = f" of {_size(size)}" if isinstance(size, (int, float)) else ""
    if meta.get("synthetic"):
        return (f"No MTA was listening, so a synthetic queue storm wrote {count}{of} as an MTA queue does "
                f"(create, write, fsync, rename, unlink per message)"
                + (f" with {concurrency} parallel writers" if concurrency else "") + ".")
    sentence = (f"{count}{of} were sent to a discard sink ({params.get('recipient') or 'a reserved domain'})"
                + (f" over {concurrency} parallel SMTP sessions" if concurrency else ""))
    if params.get("session_per_message"):
        sentence += ", one session per message"
    sentence += "; the queue was polled"
    if params.get("queue_poll"):
        sentence += f" every {_seconds(params['queue_poll'])}"
    sentence += " until it drained"
    if params.get("drain_timeout"):
        sentence += f" (for at most {_seconds(params['drain_timeout'])})"
    mta = " ".join(str(meta.get(k)) for k in ("mta", "mta_version") if meta.get(k))
    if mta:
        sentence += f". MTA: {mta}" + (f", queue on {meta['queue_fs']}" if meta.get("queue_fs") else "")
    return sentence + "."


def restore_sentences(params: Mapping[str, Any], results: Sequence[Any]) -> list[str]:
    metas = [dict(r.metadata) for r in results if r.test == "restore"]
    size = params.get("size_mb") or next((m.get("size_mb") for m in metas if m.get("size_mb")), None)
    amount = f"{size:,} MB" if isinstance(size, int) else "a"
    if any(m.get("kind") == "file" for m in metas):
        files = next((m.get("files") for m in metas if m.get("files")), None)
        return [f"No PostgreSQL was reachable, so a file-level restore extracted a generated {amount} archive"
                + (f" of {files:,} files" if isinstance(files, int) else "") + " and synced it to disk."]
    jobs = next((m.get("jobs") for m in metas if (m.get("jobs") or 1) > 1), params.get("jobs"))
    out = [f"A synthetic {amount} PostgreSQL database (several tables of random text, with indexes) was dumped "
           "with pg_dump -Fc, then restored into a scratch database once with one job (-j 1) and once in "
           "parallel (-j N); each time runs from the first pg_restore call to the last index built.",
           f"The parallel restore used {jobs} jobs." if jobs else "The parallel restore used one job per core."]
    fsync = next((m.get("fsync") for m in metas if m.get("fsync")), "")
    if fsync:
        out.append(f"PostgreSQL ran with fsync {fsync}.")
    return out


def dns_sentences(params: Mapping[str, Any], results: Sequence[Any]) -> list[str]:
    """What the dns test sent, where to, and what a timeout means."""
    meta = next((dict(r.metadata) for r in results if r.test == "dns"), {})
    resolvers = list(dict.fromkeys(str(r.metadata.get("resolver")) for r in results
                                   if r.test == "dns" and r.metadata.get("resolver")))
    source = meta.get("source") or params.get("queries") or "a query list"
    who = ", ".join(resolvers) if resolvers else str(params.get("resolvers") or "the resolvers named")
    if (params.get("mode") or meta.get("mode")) == "max":
        return [f"Query list: {source}. For maximum throughput it was sent in a loop to each resolver ({who}) for "
                f"{_seconds(params.get('duration') or meta.get('duration') or 0)}, "
                f"{meta.get('in_flight') or params.get('in_flight')} queries in flight, no resend, "
                f"by {engine_text(meta) or 'the built-in engine'}"
                + (", each answer timed when read" if meta.get("stamps") == "read" else "") + "."]
    order = params.get("order") or meta.get("order") or "sequential"
    passes = str(params.get("passes") or "cold,warm").replace(",", " then ")
    rate = params.get("rate") or meta.get("rate")
    out = [f"Query list: {source}. The same list was sent from the host to each resolver ({who}), "
           + ("one resolver after the other" if order == "sequential" else "to all resolvers at once")
           + f", {passes} pass" + ("es" if "then" in passes else "")
           + f", {params.get('in_flight') or meta.get('in_flight')} queries in flight"
           + (f", at most {rate:g} queries per second" if rate else "") + "; the cold pass fills the resolver's "
           "cache, the warm pass shows the cached speed.",
           f"Each query behaved as a stub resolver's: waits of {params.get('timeouts') or meta.get('timeouts')} s "
           "(a resend after each but the last), then a timeout; "
           + ("a truncated answer was asked again over TCP" if params.get("tcp_fallback", True)
              else "a truncated answer was taken as it was")
           + ". Latencies run from the first send" + _timed(meta)
           + " and cover answered queries only; timeouts are counted apart."]
    return out


def _timed(meta: Mapping[str, Any]) -> str:
    """How the run timed its answers, said after "from the first send"; nothing for a run stored before it said."""
    return {"read": " to the answer's read, as dnsperf times them,",
            "kernel": " to the answer's arrival as the host's kernel stamped it (the host's own delay in reading it "
                      "left out),"}.get(str(meta.get("stamps") or ""), "")


def engine_of(run: RunRecord, results: Sequence[Any]) -> str:
    """The engine and its version, or for CPU the interpreter and libraries that did the work."""
    if run.test == "cpu":
        versions = cpu_versions(r for r in results if getattr(r, "test", "") == "cpu")
        if versions:
            return ", ".join(_version(key, value) for key, value in versions.items())
    if run.test == "restore":
        version = next((r.metadata.get("server_version") for r in results
                        if r.test == "restore" and r.metadata.get("server_version")), "")
        if version:
            return f"PostgreSQL {version}"
    engines = list(dict.fromkeys(engine_text(dict(r.metadata)) for r in results
                                 if r.test == run.test and r.metadata.get("engine")))
    if engines:
        return ", ".join(engines)
    if run.engine:
        return f"{run.engine} {run.engine_version.removeprefix(run.engine + '-')}".strip()
    return ""


LIBRARY_NAMES = {"python": "Python", "zlib": "zlib", "openssl": "OpenSSL"}


def _version(key: str, value: str) -> str:
    """ "Python 3.11.2"; a value that names itself ("CPython 3.11.2", "OpenSSL 3.0.11") stays as it is."""
    name = LIBRARY_NAMES.get(key, key)
    return value if value.lower().startswith(name.lower()) or " " in value else f"{name} {value}"


def duration_text(run: RunRecord) -> str:
    if run.finished_at is None:
        return "unfinished"
    seconds = max((run.finished_at - run.started_at).total_seconds(), 0.0)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def what_was_done(test: str, params: Mapping[str, Any], results: Sequence[Any]) -> list[str]:
    if test == "disk":
        return disk_sentences(params)
    if test == "cpu":
        return [cpu_sentence(params, results)]
    if test == "mailstorm":
        return [mail_sentence(params, results)]
    if test == "restore":
        return restore_sentences(params, results)
    if test == "dbload":
        return dbload_sentences(params, results)
    if test == SHARED_TEST:
        return shared_sentences(params, results)
    if test == "dns":
        return dns_sentences(params, results)
    return [f"The {CATALOGUE.label(test).lower()} test with its default settings."]


def _grouped(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """(label, text) pairs as sentences: the text once when all say the same, else "a and b: text" per text."""
    texts = _by_value(pairs)
    if len(texts) == 1:
        return list(texts)
    return ["; ".join(f"{_names(labels)}: {_lower(text).rstrip('.')}" for text, labels in texts.items()) + "."]


def _sentences(per_server: Sequence[tuple[str, list[str]]]) -> list[str]:
    """The servers' sentences, each said once: sentence by sentence when all have as many, else as a whole."""
    if len({len(sentences) for _label, sentences in per_server}) == 1:
        count = len(per_server[0][1]) if per_server else 0
        return [line for i in range(count) for line in _grouped([(label, s[i]) for label, s in per_server])]
    return _grouped([(label, " ".join(sentences)) for label, sentences in per_server])


def methodology_of(test: str, runs: Sequence[MethodRun]) -> Methodology:
    """The methodology sentences of one test over the runs of it being compared."""
    seen: dict[str, list[str]] = {}
    for r in runs:   # a server's repeats ran alike: its first run says how
        seen.setdefault(r.label, what_was_done(test, own_parameters(r.run.parameters or {}), r.results))
    sentences = _sentences(list(seen.items()))
    engines = [(r.label, engine_of(r.run, r.results)) for r in runs]
    if any(engine for _label, engine in engines):
        named = [(label, engine or "the agent's own code") for label, engine in engines]
        if len({engine for _l, engine in named}) == 1:
            sentences.append(f"Engine and versions: {named[0][1]} on every server.")
        else:
            sentences.append("Engine and versions: " + "; ".join(
                f"{engine} on {_names(labels)}" for engine, labels in _by_value(named).items()) + ".")
    sentences.append(_how_often(runs))
    return Methodology(test, CATALOGUE.label(test), tuple(sentences))


def _when(first: datetime, last: datetime) -> str:
    """ "on 21 Nov 2026 09:00 UTC", "on 21 Nov 2026 between 09:00 and 11:30 UTC", or across days."""
    day, start, end = first.strftime("%d %b %Y"), first.strftime("%H:%M"), last.strftime("%H:%M")
    if last.strftime("%d %b %Y") != day:
        return f"between {day} {start} and {last.strftime('%d %b %Y')} {end} UTC"
    return f"on {day} {start} UTC" if start == end else f"on {day} between {start} and {end} UTC"


def _status(run: RunRecord) -> str:
    return "" if run.status == RunStatus.DONE else f", {run.status}"


def _run_text(run: RunRecord) -> str:
    return f"{run.started_at.strftime('%d %b %Y %H:%M')} UTC for {duration_text(run)} (run {run.id}{_status(run)})"


def _how_often(runs: Sequence[MethodRun]) -> str:
    """When and how many times each server ran the test; repeats are named with their count."""
    per_label: dict[str, list[RunRecord]] = {}
    for item in runs:
        per_label.setdefault(item.label, []).append(item.run)
    counts = {len(found) for found in per_label.values()}
    if counts == {1}:
        found = [run for runs_of in per_label.values() for run in runs_of]
        when = _when(min(r.started_at for r in found), max(r.started_at for r in found))
        head = "Each server ran it once" if len(per_label) > 1 else "It ran once"
        took = ", ".join(f"{label} for {duration_text(runs_of[0])} (run {runs_of[0].id}{_status(runs_of[0])})"
                         for label, runs_of in per_label.items())
        return f"{head}, {when}: {took}."
    parts = []
    for label, found in per_label.items():
        if len(found) == 1:
            parts.append(f"{label} once, on {_run_text(found[0])}")
        else:
            ids = _series([str(run.id) for run in found])
            parts.append(f"{label} {len(found)} times from {found[0].started_at.strftime('%d %b %Y %H:%M')} UTC "
                         f"(runs {ids}); its figure is the median of the repeats")
    return "Runs: " + "; ".join(parts) + "."


def _by_value(pairs: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for label, value in pairs:
        out.setdefault(value, []).append(label)
    return out
